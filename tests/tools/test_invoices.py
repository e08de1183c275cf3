"""The invoice tools against the in-process sandbox, through the Toolkit."""

from __future__ import annotations

import asyncio
import base64
import struct
from datetime import timedelta
from typing import Any

import pytest

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit
from cartagent.tools.invoices import TOOLS

from .conftest import TODAY, call

HOUSE: dict[str, Any] = {
    "recipient_email": "bill-me@example.com",
    "recipient_name": "Stephanie Meyers",
    "items": [{"name": "Painting a house", "unit_price": "450", "tax_percent": "8"}],
    "discount_percent": "5",
    "due_in_days": 10,
}


def created(toolkit: Toolkit, **changes: Any) -> dict[str, Any]:
    result = call(toolkit, "create_invoice", {**HOUSE, **changes})
    assert not result.is_error, result.content
    return result.content


def sent(toolkit: Toolkit, **changes: Any) -> dict[str, Any]:
    invoice = created(toolkit, **changes)
    result = call(toolkit, "send_invoice", {"invoice_id": invoice["id"]})
    assert not result.is_error, result.content
    return invoice


def count(toolkit: Toolkit) -> int:
    result = call(toolkit, "list_invoices")
    assert not result.is_error, result.content
    return len(result.content["invoices"])


def raw(client: AsyncPayPalClient, path: str) -> dict[str, Any]:
    answer: dict[str, Any] = asyncio.run(client.get(path))
    return answer


def test_the_house_journey_drafts_461_70_due_in_ten_days_then_sends_with_a_payer_link(
    toolkit: Toolkit,
) -> None:
    invoice = created(toolkit)
    assert invoice["status"] == "DRAFT"
    assert invoice["total"] == "461.70"
    assert invoice["currency"] == "USD"
    assert invoice["breakdown"] == {
        "item_total": "450.00",
        "discount": "22.50",
        "tax_total": "34.20",
    }
    assert invoice["due_date"] == (TODAY + timedelta(days=10)).isoformat()
    assert invoice["number"]

    result = call(toolkit, "send_invoice", {"invoice_id": invoice["id"]})
    assert not result.is_error, result.content
    assert result.content["status"] == "SENT"
    assert result.content["payer_view_url"].endswith(f"/invoice/p/#{invoice['id']}")
    assert result.content["total"] == "461.70"


def test_create_invoice_leaves_a_draft_that_was_never_sent(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    invoice = created(toolkit)
    assert "payer_view_url" not in invoice
    stored = raw(paypal_client, f"/v2/invoicing/invoices/{invoice['id']}")
    assert stored["status"] == "DRAFT"
    assert "first_sent_time" not in stored["detail"]["metadata"]
    assert "send" in {link["rel"] for link in stored["links"]}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"items": [{"name": "Paint", "unit_price": "-1"}]}, "items.0.unit_price"),
        ({"currency": "XYZ"}, "currency"),
        (
            {"items": [{"name": "Paint", "unit_price": "450", "tax_percent": "150"}]},
            "items.0.tax_percent",
        ),
        ({"colour": "blue"}, "colour"),
        ({"recipient_email": "not-an-email"}, "recipient_email"),
        ({"due_in_days": 10, "due_date": "2026-12-01"}, "(arguments)"),
    ],
)
def test_bad_arguments_are_an_error_naming_the_field_and_create_nothing(
    toolkit: Toolkit, changes: dict[str, Any], field: str
) -> None:
    arguments = {k: v for k, v in {**HOUSE, **changes}.items() if v is not None}
    result = call(toolkit, "create_invoice", arguments)
    assert result.is_error
    assert result.content["error"] == "invalid_arguments"
    assert result.content["field"] == field
    assert field in result.content["message"]
    assert count(toolkit) == 0


def test_a_due_date_in_the_past_is_refused_before_anything_is_created(toolkit: Toolkit) -> None:
    yesterday = (TODAY - timedelta(days=1)).isoformat()
    result = call(toolkit, "create_invoice", {**HOUSE, "due_in_days": None, "due_date": yesterday})
    assert result.is_error
    assert result.content["field"] == "due_date"
    assert count(toolkit) == 0


def test_item_discounts_shipping_and_a_due_date_reach_paypals_totals(toolkit: Toolkit) -> None:
    invoice = created(
        toolkit,
        items=[
            {"name": "Hours", "quantity": "3", "unit_price": "40", "discount_amount": "10"},
            {"name": "Paint", "unit_price": "25.50", "tax_percent": "10", "discount_percent": "10"},
        ],
        discount_percent=None,
        shipping="5",
        due_in_days=None,
        due_date="2026-12-24",
    )
    # 120 - 10 + 25.50 - 2.55 = 132.95; tax 10 % of 22.95 = 2.30 (half-up); shipping 5.
    assert invoice["breakdown"] == {
        "item_total": "145.50",
        "discount": "12.55",
        "tax_total": "2.30",
        "shipping": "5.00",
    }
    assert invoice["total"] == "140.25"
    assert invoice["due_date"] == "2026-12-24"


def test_get_and_list_show_the_invoice_with_its_items(toolkit: Toolkit) -> None:
    invoice = created(toolkit, note="Thanks!")
    shown = call(toolkit, "get_invoice", {"invoice_id": invoice["id"]}).content
    assert shown["items"] == [
        {"name": "Painting a house", "quantity": "1", "unit_price": "450.00", "tax_percent": "8"}
    ]
    assert shown["recipient"] == "bill-me@example.com"
    assert shown["note"] == "Thanks!"
    listed = call(toolkit, "list_invoices").content
    assert [i["id"] for i in listed["invoices"]] == [invoice["id"]]
    assert listed["has_more"] is False


def test_update_replaces_items_and_paypal_recomputes_the_kept_discount(toolkit: Toolkit) -> None:
    invoice = created(toolkit)
    result = call(
        toolkit,
        "update_invoice",
        {
            "invoice_id": invoice["id"],
            "items": [{"name": "Painting a barn", "unit_price": "500", "tax_percent": "8"}],
            "note": "Barn instead",
        },
    )
    assert not result.is_error, result.content
    # 5 % off 500 = 25.00, tax 8 % of 475 = 38.00.
    assert result.content["total"] == "513.00"
    assert result.content["breakdown"]["discount"] == "25.00"
    assert result.content["items"][0]["name"] == "Painting a barn"
    assert result.content["note"] == "Barn instead"
    assert result.content["due_date"] == invoice["due_date"]
    assert result.content["number"] == invoice["number"]


def test_update_can_change_the_recipient_and_the_due_date(toolkit: Toolkit) -> None:
    invoice = created(toolkit)
    result = call(
        toolkit,
        "update_invoice",
        {"invoice_id": invoice["id"], "recipient_email": "new@example.com", "due_in_days": 30},
    )
    assert not result.is_error, result.content
    assert result.content["recipient"] == "new@example.com"
    assert result.content["due_date"] == (TODAY + timedelta(days=30)).isoformat()
    assert result.content["total"] == "461.70"


def test_delete_removes_a_draft(toolkit: Toolkit) -> None:
    invoice = created(toolkit)
    result = call(toolkit, "delete_invoice", {"invoice_id": invoice["id"]})
    assert result.content == {"id": invoice["id"], "deleted": True}
    gone = call(toolkit, "get_invoice", {"invoice_id": invoice["id"]})
    assert gone.is_error and gone.content["status"] == 404
    assert count(toolkit) == 0


def test_deleting_needs_approval_like_every_destructive_tool(make_toolkit: Any) -> None:
    invoice = created(make_toolkit())
    refused = call(make_toolkit(approve=None), "delete_invoice", {"invoice_id": invoice["id"]})
    assert refused.is_error and refused.content["kind"] == "ApprovalRequired"
    assert count(make_toolkit()) == 1


def test_sending_a_cancelled_invoice_returns_paypals_issue(toolkit: Toolkit) -> None:
    invoice = sent(toolkit)
    cancelled = call(toolkit, "cancel_sent_invoice", {"invoice_id": invoice["id"]})
    assert cancelled.content == {"id": invoice["id"], "status": "CANCELLED"}
    result = call(toolkit, "send_invoice", {"invoice_id": invoice["id"]})
    assert result.is_error
    assert result.content["error"] == "paypal"
    assert [i["issue"] for i in result.content["issues"]] == ["CANT_SEND_INVOICE"]


def test_a_reminder_goes_for_a_sent_invoice_but_not_a_draft(toolkit: Toolkit) -> None:
    invoice = sent(toolkit)
    result = call(toolkit, "send_invoice_reminder", {"invoice_id": invoice["id"], "note": "Hi"})
    assert result.content == {"id": invoice["id"], "reminded": True}
    draft = created(toolkit)
    refused = call(toolkit, "send_invoice_reminder", {"invoice_id": draft["id"]})
    assert refused.is_error
    assert [i["issue"] for i in refused.content["issues"]] == ["CANNOT_REMIND_INVOICE"]


def test_sending_without_emailing_leaves_an_unpaid_invoice(toolkit: Toolkit) -> None:
    invoice = created(toolkit)
    result = call(
        toolkit, "send_invoice", {"invoice_id": invoice["id"], "send_to_recipient": False}
    )
    assert result.content["status"] == "UNPAID"
    assert "payer_view_url" in result.content


def test_the_qr_code_is_a_png_of_the_requested_size(toolkit: Toolkit) -> None:
    invoice = sent(toolkit)
    result = call(
        toolkit,
        "generate_invoice_qr_code",
        {"invoice_id": invoice["id"], "width": 200, "height": 300},
    )
    assert not result.is_error, result.content
    png = base64.b64decode(result.content["image_base64"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", png[16:24]) == (200, 300)
    assert (result.content["width"], result.content["height"]) == (200, 300)


@pytest.mark.parametrize(("field", "size"), [("width", 149), ("height", 501)])
def test_qr_code_sizes_outside_150_to_500_are_refused(
    toolkit: Toolkit, field: str, size: int
) -> None:
    result = call(toolkit, "generate_invoice_qr_code", {"invoice_id": "INV2-X", field: size})
    assert result.is_error and result.content["field"] == field


def test_the_next_invoice_number_follows_the_ones_in_use(toolkit: Toolkit) -> None:
    invoice = created(toolkit)
    result = call(toolkit, "generate_next_invoice_number")
    assert not result.is_error, result.content
    assert result.content["invoice_number"] != invoice["number"]
    assert int(result.content["invoice_number"]) > int(invoice["number"])


def test_recorded_payments_and_refunds_settle_the_invoice(toolkit: Toolkit) -> None:
    invoice = sent(toolkit)
    part = call(
        toolkit,
        "record_invoice_payment",
        {"invoice_id": invoice["id"], "method": "CASH", "amount": "100", "note": "deposit"},
    )
    assert not part.is_error, part.content
    assert part.content["payment_id"].startswith("EXTR-")
    assert part.content["status"] == "PARTIALLY_PAID"
    assert part.content["due_amount"] == "361.70"
    rest = call(toolkit, "record_invoice_payment", {"invoice_id": invoice["id"], "method": "CHECK"})
    assert rest.content["status"] == "MARKED_AS_PAID"
    assert rest.content["paid_amount"] == "461.70"
    refund = call(
        toolkit,
        "record_invoice_refund",
        {"invoice_id": invoice["id"], "method": "CASH", "refund_date": TODAY.isoformat()},
    )
    assert not refund.is_error, refund.content
    assert refund.content["status"] == "MARKED_AS_REFUNDED"
    assert refund.content["refunded_amount"] == "461.70"


def test_paying_more_than_is_due_is_paypals_error(toolkit: Toolkit) -> None:
    invoice = sent(toolkit)
    result = call(
        toolkit,
        "record_invoice_payment",
        {"invoice_id": invoice["id"], "method": "CASH", "amount": "461.71"},
    )
    assert result.is_error
    issues = [i["issue"] for i in result.content["issues"]]
    assert issues == ["PAYMENT_AMOUNT_GREATER_THAN_AMOUNT_DUE"]


def test_search_finds_invoices_by_status_recipient_and_total(toolkit: Toolkit) -> None:
    draft = created(toolkit)
    other = sent(toolkit, recipient_email="someone@example.com", discount_percent=None)

    def found(criteria: dict[str, Any]) -> list[str]:
        result = call(toolkit, "search_invoices", criteria)
        assert not result.is_error, result.content
        return [i["id"] for i in result.content["invoices"]]

    assert found({"status": ["DRAFT"]}) == [draft["id"]]
    assert found({"recipient_email": "someone@example.com"}) == [other["id"]]
    assert found({"currency": "USD", "min_total": "470"}) == [other["id"]]
    assert sorted(found({})) == sorted([draft["id"], other["id"]])


def test_searching_by_total_needs_a_currency(toolkit: Toolkit) -> None:
    result = call(toolkit, "search_invoices", {"min_total": "10"})
    assert result.is_error and "currency" in result.content["message"]


def test_each_tool_says_what_it_does_to_data() -> None:
    hints = {
        t.name: (t.annotations.read_only, t.annotations.destructive, t.annotations.idempotent)
        for t in TOOLS
    }
    assert hints == {
        "create_invoice": (False, False, False),
        "list_invoices": (True, False, True),
        "get_invoice": (True, False, True),
        "update_invoice": (False, False, True),
        "delete_invoice": (False, True, True),
        "send_invoice": (False, False, False),
        "send_invoice_reminder": (False, False, False),
        "cancel_sent_invoice": (False, True, True),
        "generate_invoice_qr_code": (True, False, True),
        "generate_next_invoice_number": (False, False, False),
        "record_invoice_payment": (False, False, False),
        "record_invoice_refund": (False, False, False),
        "search_invoices": (True, False, True),
    }
    assert not any(t.moves_money for t in TOOLS)
    assert all(t.family == "invoices" for t in TOOLS)


def test_an_invoice_without_a_recipient_is_a_payment_link_to_share(toolkit: Toolkit) -> None:
    invoice = created(toolkit, recipient_email=None, recipient_name=None)
    assert invoice["total"] == "461.70"
    result = call(toolkit, "send_invoice", {"invoice_id": invoice["id"]})
    assert not result.is_error, result.content
    assert result.content["payer_view_url"].startswith("http")
