"""Automatic invoice reminders against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events
from tests.conftest import Api, issues

INVOICES = "/v2/invoicing/invoices"
SETUP = "/v2/invoicing/setup-reminders"
REMINDERS = "/v2/invoicing/reminders"
REPRESENTATION = {"Prefer": "return=representation"}
# Due on 2026-12-01 (NET_10 from the pinned clock's 2026-11-21): a reminder 3 days before, then
# two every 2 days after.
CONFIGURATIONS = [
    {"type": "BEFORE_DUE", "interval": {"unit": "DAY", "value": 3}, "repetition": 1},
    {"type": "AFTER_DUE", "interval": {"value": 2}, "repetition": 2},
]


def sent_invoice(api: Api, term: str = "NET_10") -> str:
    body = {
        "detail": {"currency_code": "USD", "payment_term": {"term_type": term}},
        "primary_recipients": [{"billing_info": {"email_address": "ada@example.com"}}],
        "items": [
            {"name": "Hedge trim", "quantity": "1", "unit_amount": usd("80.00")},
        ],
    }
    created = api.post(INVOICES, body)
    assert created.status_code == 201, created.text
    invoice_id: str = created.json()["id"]
    assert api.post(f"{INVOICES}/{invoice_id}/send", {}).status_code == 200
    return invoice_id


def usd(value: str) -> dict[str, str]:
    return {"currency_code": "USD", "value": value}


def setup(api: Api, configurations: list[dict[str, Any]] | None = None) -> dict[str, str]:
    response = api.post(SETUP, {"configurations": configurations or CONFIGURATIONS})
    assert response.status_code == 201, response.text
    return {config["type"]: config["id"] for config in response.json()["configurations"]}


def advance(api: Api, days: int) -> list[dict[str, Any]]:
    response = api.post("/v1/sandbox/clock/advance", {"days": days})
    assert response.status_code == 200, response.text
    sent: list[dict[str, Any]] = response.json()["reminders_sent"]
    return sent


def reminder_events(sandbox: Sandbox, invoice_id: str) -> list[dict[str, Any]]:
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.data).where(
                events.c.resource_id == invoice_id,
                events.c.event_type == "INVOICING.INVOICE.UPDATED",
            )
        ).all()
    found = [json.loads(row.data) for row in rows]
    return sorted(
        (e for e in found if e["summary"] == "A payment reminder was sent."),
        key=lambda e: e["create_time"],
    )


def test_setup_makes_both_configurations_the_missing_one_inactive_with_defaults(
    api: Api,
) -> None:
    response = api.post(SETUP, {"configurations": [CONFIGURATIONS[1]]})
    assert response.status_code == 201, response.text
    configs = {c["type"]: c for c in response.json()["configurations"]}
    after, before = configs["AFTER_DUE"], configs["BEFORE_DUE"]
    assert after["status"] == "ACTIVE"
    assert after["interval"] == {"unit": "DAY", "value": 2} and after["repetition"] == 2
    assert before["status"] == "INACTIVE"
    assert before["interval"] == {"unit": "DAY", "value": 2} and before["repetition"] == 1
    assert before["id"].startswith("RC-") and len(before["id"]) == 20
    assert before["notification"] == {"send_to_invoicer": False}
    again = api.post(SETUP, {})
    assert again.status_code == 422 and issues(again) == ["REMINDERS_ALREADY_SET_UP"]


def test_an_empty_setup_makes_both_defaults_inactive(api: Api) -> None:
    response = api.post(SETUP)
    assert response.status_code == 201, response.text
    assert {c["status"] for c in response.json()["configurations"]} == {"INACTIVE"}


def test_the_clock_sends_due_reminders_each_once_as_webhook_events(
    api: Api, sandbox: Sandbox
) -> None:
    invoice_id = sent_invoice(api)
    setup(api)
    assert advance(api, 6) == []  # 2026-11-27
    assert advance(api, 1) == [
        {"invoice_id": invoice_id, "type": "BEFORE_DUE", "reminder_date": "2026-11-28"}
    ]
    assert advance(api, 1) == []
    sent = advance(api, 30)  # to 2026-12-29: both AFTER_DUE reminders, then no more
    assert [(r["type"], r["reminder_date"]) for r in sent] == [
        ("AFTER_DUE", "2026-12-03"),
        ("AFTER_DUE", "2026-12-05"),
    ]
    assert advance(api, 30) == []
    announced = reminder_events(sandbox, invoice_id)
    assert [e["create_time"][:10] for e in announced] == ["2026-11-28", "2026-12-03", "2026-12-05"]
    assert {e["resource"]["id"] for e in announced} == {invoice_id}
    assert {e["resource"]["status"] for e in announced} == {"SENT"}


def test_paid_cancelled_undated_and_opted_out_invoices_get_no_reminders(api: Api) -> None:
    paid = sent_invoice(api)
    api.post(f"{INVOICES}/{paid}/payments", {"method": "CASH"})
    cancelled = sent_invoice(api)
    api.post(f"{INVOICES}/{cancelled}/cancel", {})
    undated = sent_invoice(api, term="NO_DUE_DATE")
    opted_out = sent_invoice(api)
    assert api.post(f"{INVOICES}/{opted_out}/cancel-reminders", {}).status_code == 204
    assert api.post(f"{INVOICES}/{opted_out}/cancel-reminders").status_code == 204  # idempotent
    reminded = sent_invoice(api)
    setup(api)
    sent = advance(api, 20)
    assert {r["invoice_id"] for r in sent} == {reminded}
    assert {paid, cancelled, undated, opted_out}.isdisjoint(r["invoice_id"] for r in sent)
    refused = api.post(f"{INVOICES}/{paid}/cancel-reminders", {})
    assert refused.status_code == 422 and issues(refused) == ["CANNOT_CANCEL_REMINDERS"]
    assert api.post(f"{INVOICES}/INV2-AAAA-BBBB-CCCC-DDDD/cancel-reminders").status_code == 404


def test_reminders_due_before_the_configuration_was_active_are_not_sent(api: Api) -> None:
    invoice_id = sent_invoice(api)
    advance(api, 13)  # 2026-12-04: the BEFORE_DUE day and the first AFTER_DUE day have passed
    setup(api)
    assert advance(api, 1) == [
        {"invoice_id": invoice_id, "type": "AFTER_DUE", "reminder_date": "2026-12-05"}
    ]


def test_an_update_changes_the_schedule_and_can_switch_reminders_off(api: Api) -> None:
    sent_invoice(api)
    ids = setup(api)
    changed = {"type": "AFTER_DUE", "interval": {"value": 5}, "repetition": 3}
    updated = api.put(f"{REMINDERS}/{ids['AFTER_DUE']}", changed, headers=REPRESENTATION)
    assert updated.status_code == 200, updated.text
    shown = updated.json()
    assert shown["id"] == ids["AFTER_DUE"] and shown["status"] == "ACTIVE"
    assert shown["interval"] == {"unit": "DAY", "value": 5} and shown["repetition"] == 3
    off = {"type": "BEFORE_DUE", "interval": {"value": 3}, "repetition": 1, "status": "INACTIVE"}
    assert api.put(f"{REMINDERS}/{ids['BEFORE_DUE']}", off).status_code == 204
    sent = advance(api, 30)  # due 2026-12-01: after it on the 6th, 11th and 16th only
    assert [(r["type"], r["reminder_date"]) for r in sent] == [
        ("AFTER_DUE", "2026-12-06"),
        ("AFTER_DUE", "2026-12-11"),
        ("AFTER_DUE", "2026-12-16"),
    ]


def test_bad_configurations_are_refused(api: Api) -> None:
    twice = api.post(SETUP, {"configurations": [CONFIGURATIONS[0], CONFIGURATIONS[0]]})
    assert twice.status_code == 400 and issues(twice) == ["INVALID_PARAMETER_VALUE"]
    repeated = dict(CONFIGURATIONS[0], repetition=2)
    before = api.post(SETUP, {"configurations": [repeated]})
    assert before.status_code == 400
    assert before.json()["details"][0]["field"] == "/configurations/0/repetition"
    too_far = {"type": "AFTER_DUE", "interval": {"value": 8}, "repetition": 1}
    assert api.post(SETUP, {"configurations": [too_far]}).status_code == 400
    wrong_type = {"type": "WEEKLY", "interval": {"value": 1}, "repetition": 1}
    assert api.post(SETUP, {"configurations": [wrong_type]}).status_code == 400
    ids = setup(api)
    switched = {"type": "BEFORE_DUE", "interval": {"value": 2}, "repetition": 1}
    refused = api.put(f"{REMINDERS}/{ids['AFTER_DUE']}", switched)
    assert refused.status_code == 400 and refused.json()["details"][0]["field"] == "/type"
    missing = api.put(f"{REMINDERS}/{ids['AFTER_DUE']}", {"type": "AFTER_DUE"})
    assert missing.status_code == 400 and "MISSING_REQUIRED_PARAMETER" in issues(missing)
    assert api.put(f"{REMINDERS}/RC-00000000000000000", switched).status_code == 404


def test_a_repeated_request_id_replays_the_setup(api: Api) -> None:
    headers = {"PayPal-Request-Id": "reminders-1"}
    first = api.post(SETUP, {"configurations": CONFIGURATIONS}, headers=headers)
    again = api.post(SETUP, {"configurations": CONFIGURATIONS}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()


def test_merchants_reminders_are_their_own(api: Api, other_api: Api) -> None:
    invoice_id = sent_invoice(api)
    ids = setup(api)
    change = {"type": "AFTER_DUE", "interval": {"value": 1}, "repetition": 1}
    assert other_api.put(f"{REMINDERS}/{ids['AFTER_DUE']}", change).status_code == 404
    assert other_api.post(f"{INVOICES}/{invoice_id}/cancel-reminders").status_code == 404
    assert advance(other_api, 20) == []
    setup(other_api)  # the other merchant sets up its own without a conflict
    assert [r["invoice_id"] for r in advance(api, 20)] == [invoice_id] * 3
