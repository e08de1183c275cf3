"""Automatic reminders and conditional rules tools against the in-process sandbox."""

from __future__ import annotations

import asyncio
from typing import Any

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit

from .conftest import call


def sent_invoice(toolkit: Toolkit, **changes: Any) -> str:
    """Due in ten days, 356.05 in all (300.00 + 8 % tax, 24.50 less 10 %, 10.00 shipping)."""
    arguments = {
        "recipient_email": "ada@example.com",
        "items": [
            {"name": "Garden design", "quantity": "2", "unit_price": "150", "tax_percent": "8"},
            {"name": "Seed mix", "unit_price": "24.50", "discount_percent": "10"},
        ],
        "shipping": "10",
        "due_in_days": 10,
        **changes,
    }
    created = call(toolkit, "create_invoice", arguments)
    assert not created.is_error, created.content
    invoice_id: str = created.content["id"]
    assert not call(toolkit, "send_invoice", {"invoice_id": invoice_id}).is_error
    return invoice_id


def advance(client: AsyncPayPalClient, days: int) -> dict[str, Any]:
    moved: dict[str, Any] = asyncio.run(client.post("/v1/sandbox/clock/advance", {"days": days}))
    return moved


def test_reminders_are_set_up_changed_and_sent_by_the_clock(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    invoice_id = sent_invoice(toolkit)
    setup = call(toolkit, "setup_invoice_auto_reminders", {"before_due_days": 2})
    assert not setup.is_error, setup.content
    configs = {c["type"]: c for c in setup.content["configurations"]}
    assert configs["BEFORE_DUE"] == {**configs["BEFORE_DUE"], "active": True, "days": 2}
    assert configs["AFTER_DUE"]["active"] is False
    changed = call(
        toolkit,
        "update_invoice_auto_reminder",
        {
            "reminder_configuration_id": configs["AFTER_DUE"]["id"],
            "type": "AFTER_DUE",
            "days": 3,
            "repetitions": 2,
            "active": True,
        },
    )
    assert not changed.is_error, changed.content
    assert changed.content == {
        "id": configs["AFTER_DUE"]["id"],
        "type": "AFTER_DUE",
        "active": True,
        "days": 3,
        "repetitions": 2,
    }
    sent = advance(paypal_client, 20)["reminders_sent"]
    assert [r["type"] for r in sent] == ["BEFORE_DUE", "AFTER_DUE", "AFTER_DUE"]
    assert {r["invoice_id"] for r in sent} == {invoice_id}


def test_cancelling_an_invoices_reminders_leaves_the_others(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    quiet = sent_invoice(toolkit)
    reminded = sent_invoice(toolkit)
    call(toolkit, "setup_invoice_auto_reminders", {"after_due_days": 1})
    stopped = call(toolkit, "cancel_invoice_auto_reminder", {"invoice_id": quiet})
    assert stopped.content == {"invoice_id": quiet, "reminders": "cancelled"}
    sent = advance(paypal_client, 12)["reminders_sent"]
    assert [r["invoice_id"] for r in sent] == [reminded]


def test_a_before_due_reminder_repeats_once_only(toolkit: Toolkit) -> None:
    result = call(
        toolkit,
        "update_invoice_auto_reminder",
        {
            "reminder_configuration_id": "RC-239531651S471944P",
            "type": "BEFORE_DUE",
            "days": 2,
            "repetitions": 2,
        },
    )
    assert result.is_error and result.content["field"] == "repetitions"
    too_far = call(toolkit, "setup_invoice_auto_reminders", {"after_due_days": 8})
    assert too_far.is_error and too_far.content["error"] == "invalid_arguments"


def test_an_early_payment_discount_lowers_the_amount_due(toolkit: Toolkit) -> None:
    invoice_id = sent_invoice(toolkit)
    result = call(
        toolkit,
        "create_conditional_rules_for_invoice",
        {"invoice_id": invoice_id, "discount_percent": "5", "discount_days": 7},
    )
    assert not result.is_error, result.content
    assert result.content["total"] == "356.05"
    assert result.content["due_amount"] == "338.25"
    [rule] = result.content["rules"]
    assert rule["type"] == "EARLY_PAYMENT_DISCOUNT" and rule["value_type"] == "PERCENT"
    assert rule["date"] == "2026-11-28"
    paid = call(toolkit, "record_invoice_payment", {"invoice_id": invoice_id, "method": "CHECK"})
    assert paid.content["status"] == "MARKED_AS_PAID"
    assert paid.content["paid_amount"] == "338.25"


def test_an_automatic_cancellation_cancels_the_invoice_if_still_unpaid(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    invoice_id = sent_invoice(toolkit)
    result = call(
        toolkit,
        "create_conditional_rules_for_invoice",
        {"invoice_id": invoice_id, "cancel_days_after_due": 1},
    )
    assert result.content["rules"][0]["date"] == "2026-12-02"
    assert advance(paypal_client, 11)["invoices_cancelled"] == [
        {"invoice_id": invoice_id, "cancel_date": "2026-12-02"}
    ]
    shown = call(toolkit, "get_invoice", {"invoice_id": invoice_id})
    assert shown.content["status"] == "CANCELLED"


def test_conditional_rule_arguments_must_make_sense(toolkit: Toolkit) -> None:
    invoice = "INV2-Z56S-5LLA-Q52L-CPZ5"
    for arguments in (
        {"invoice_id": invoice},
        {"invoice_id": invoice, "discount_percent": "5"},
        {"invoice_id": invoice, "discount_days": 7},
        {
            "invoice_id": invoice,
            "discount_percent": "5",
            "discount_amount": "3",
            "discount_days": 7,
        },
        {"invoice_id": invoice, "cancel_days_after_due": 1, "cancel_on": "2026-12-30"},
        {"invoice_id": invoice, "discount_percent": "5", "discount_days": 5},
    ):
        result = call(toolkit, "create_conditional_rules_for_invoice", arguments)
        assert result.is_error and result.content["error"] == "invalid_arguments", arguments
