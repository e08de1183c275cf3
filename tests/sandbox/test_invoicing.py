"""Invoicing v2 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import io
import re
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
import zxingcpp
from PIL import Image

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events, ledger
from tests.conftest import Api, issues

BASE = "/v2/invoicing/invoices"
PAYMENT = {"method": "CASH", "amount": {"currency_code": "USD", "value": "100.00"}}


def usd(value: str) -> dict[str, str]:
    return {"currency_code": "USD", "value": value}


def house(**detail: Any) -> dict[str, Any]:
    """PayPal's acceptance example: one item, 8% sales tax, 5% off the invoice."""
    return {
        "detail": {"currency_code": "USD", "memo": "Blue house", **detail},
        "primary_recipients": [
            {
                "billing_info": {
                    "email_address": "bill-me@example.com",
                    "name": {"given_name": "Stephanie", "surname": "Meyers"},
                }
            }
        ],
        "items": [
            {
                "name": "Painting a house",
                "quantity": "1",
                "unit_amount": usd("450.00"),
                "tax": {"name": "Sales Tax", "percent": "8"},
            }
        ],
        "amount": {"breakdown": {"discount": {"invoice_discount": {"percent": "5"}}}},
    }


def create(api: Api, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = api.post(BASE, body or house())
    assert response.status_code == 201, response.text
    invoice: dict[str, Any] = response.json()
    return invoice


def sent(api: Api, body: dict[str, Any] | None = None) -> dict[str, Any]:
    invoice = create(api, body)
    assert api.post(f"{BASE}/{invoice['id']}/send", {}).status_code == 200
    shown: dict[str, Any] = api.get(f"{BASE}/{invoice['id']}").json()
    return shown


def show(api: Api, invoice_id: str) -> dict[str, Any]:
    response = api.get(f"{BASE}/{invoice_id}")
    assert response.status_code == 200, response.text
    invoice: dict[str, Any] = response.json()
    return invoice


def event_types(sandbox: Sandbox, invoice_id: str) -> list[str]:
    """The event types recorded about an invoice (in no particular order: the clock is pinned)."""
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.event_type).where(events.c.resource_id == invoice_id)
        )
        return [row.event_type for row in rows]


def ledger_row(sandbox: Sandbox, transaction_id: str) -> Any:
    with sandbox.store.engine.connect() as conn:
        return conn.execute(
            sa.select(ledger).where(ledger.c.transaction_id == transaction_id)
        ).first()


def ledger_count(sandbox: Sandbox, invoice_id: str) -> int:
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(sa.select(ledger.c.data))
        return sum(1 for row in rows if invoice_id in row.data)


# create, numbering, show ----------------------------------------------------------------------


def test_create_returns_a_draft_with_paypals_totals_for_the_house_example(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = create(api)
    assert re.fullmatch(r"INV2(-[A-Z0-9]{4}){4}", invoice["id"])
    assert invoice["status"] == "DRAFT"
    breakdown = invoice["amount"]["breakdown"]
    assert breakdown["item_total"] == usd("450.00")
    assert breakdown["discount"]["invoice_discount"] == {"percent": "5", "amount": usd("-22.50")}
    assert breakdown["tax_total"] == usd("34.20")
    assert invoice["amount"]["value"] == "461.70"
    assert invoice["amount"]["currency_code"] == "USD"
    assert invoice["items"][0]["tax"]["amount"] == usd("34.20")
    assert invoice["items"][0]["id"].startswith("ITEM-")
    assert invoice["due_amount"] == usd("461.70")
    assert "payments" not in invoice
    assert event_types(sandbox, invoice["id"]) == ["INVOICING.INVOICE.CREATED"]


def test_create_fills_number_date_invoicer_and_metadata(api: Api) -> None:
    invoice = create(api)
    detail = invoice["detail"]
    assert detail["invoice_number"] == "0001"
    assert detail["invoice_date"] == "2026-11-21"
    assert invoice["invoicer"]["email_address"]
    metadata = detail["metadata"]
    assert metadata["create_time"] == "2026-11-21T12:00:00Z"
    assert metadata["recipient_view_url"] == f"http://sandbox.test/invoice/p/#{invoice['id']}"
    rels = {link["rel"] for link in invoice["links"]}
    assert {"self", "send", "replace", "delete", "qr-code"} <= rels


def test_show_returns_the_invoice_as_created(api: Api) -> None:
    invoice = create(api)
    assert show(api, invoice["id"]) == invoice


def test_show_of_an_unknown_invoice_is_404(api: Api) -> None:
    response = api.get(f"{BASE}/INV2-AAAA-BBBB-CCCC-DDDD")
    assert response.status_code == 404
    assert issues(response) == ["INVALID_RESOURCE_ID"]


def test_another_merchant_can_neither_see_nor_touch_an_invoice(api: Api, other_api: Api) -> None:
    invoice = create(api)
    path = f"{BASE}/{invoice['id']}"
    assert other_api.get(path).status_code == 404
    assert other_api.post(f"{path}/send", {}).status_code == 404
    assert other_api.delete(path).status_code == 404
    assert other_api.post(f"{path}/generate-qr-code", {}).status_code == 404
    assert other_api.get(BASE).json()["items"] == []
    assert show(api, invoice["id"])["status"] == "DRAFT"


def test_invoice_numbers_count_up_per_merchant(api: Api, other_api: Api) -> None:
    assert create(api)["detail"]["invoice_number"] == "0001"
    assert create(api)["detail"]["invoice_number"] == "0002"
    assert create(other_api)["detail"]["invoice_number"] == "0001"


def test_generate_next_invoice_number_skips_numbers_already_used(api: Api) -> None:
    first = api.post("/v2/invoicing/generate-next-invoice-number")
    assert first.status_code == 200
    assert first.json() == {"invoice_number": "0001"}
    create(api, house(invoice_number="0002"))
    assert api.post("/v2/invoicing/generate-next-invoice-number").json() == {
        "invoice_number": "0003"
    }
    assert create(api)["detail"]["invoice_number"] == "0004"


def test_a_duplicate_invoice_number_is_refused_and_nothing_is_written(api: Api) -> None:
    create(api, house(invoice_number="A-7"))
    response = api.post(BASE, house(invoice_number="A-7"))
    assert response.status_code == 422
    assert issues(response) == ["DUPLICATE_INVOICE_NUMBER"]
    assert len(api.get(BASE).json()["items"]) == 1


def test_deleting_a_draft_frees_its_invoice_number(api: Api) -> None:
    invoice = create(api, house(invoice_number="A-7"))
    assert api.delete(f"{BASE}/{invoice['id']}").status_code == 204
    assert create(api, house(invoice_number="A-7"))["detail"]["invoice_number"] == "A-7"


def test_create_with_a_request_id_is_replayed_not_duplicated(api: Api) -> None:
    headers = {"PayPal-Request-Id": "inv-create-1"}
    first = api.post(BASE, house(), headers=headers)
    again = api.post(BASE, house(), headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert len(api.get(BASE).json()["items"]) == 1


# due dates ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "due"),
    [("DUE_ON_RECEIPT", "2026-11-21"), ("NET_10", "2026-12-01"), ("NET_90", "2027-02-19")],
)
def test_payment_terms_set_the_due_date_from_the_invoice_date(
    api: Api, term: str, due: str
) -> None:
    invoice = create(api, house(payment_term={"term_type": term}))
    assert invoice["detail"]["payment_term"] == {"term_type": term, "due_date": due}


def test_a_due_date_alone_means_due_on_that_date(api: Api) -> None:
    invoice = create(api, house(payment_term={"due_date": "2026-12-24"}))
    assert invoice["detail"]["payment_term"] == {
        "term_type": "DUE_ON_DATE_SPECIFIED",
        "due_date": "2026-12-24",
    }


def test_a_due_date_before_the_invoice_date_is_refused(api: Api) -> None:
    response = api.post(
        BASE, house(invoice_date="2026-12-01", payment_term={"due_date": "2026-11-30"})
    )
    assert response.status_code == 400
    assert issues(response) == ["INVALID_PARAMETER_SYNTAX"]
    assert response.json()["details"][0]["description"] == "Due date is invalid."


def test_an_impossible_invoice_date_is_refused(api: Api) -> None:
    response = api.post(BASE, house(invoice_date="2026-02-31"))
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "/detail/invoice_date"


def test_due_on_a_date_specified_needs_the_date(api: Api) -> None:
    response = api.post(BASE, house(payment_term={"term_type": "DUE_ON_DATE_SPECIFIED"}))
    assert response.status_code == 400
    assert issues(response) == ["MISSING_REQUIRED_PARAMETER"]


# amounts through the API ----------------------------------------------------------------------


def test_paypals_yoga_example_totals_74_21_with_negative_discounts(api: Api) -> None:
    body = house()
    body["items"] = [
        {
            "name": "Yoga Mat",
            "quantity": "1",
            "unit_amount": usd("50.00"),
            "tax": {"name": "Sales Tax", "percent": "7.25"},
            "discount": {"percent": "5"},
        },
        {
            "name": "Yoga t-shirt",
            "quantity": "1",
            "unit_amount": usd("10.00"),
            "tax": {"name": "Sales Tax", "percent": "7.25"},
            "discount": {"amount": usd("5.00")},
        },
    ]
    body["amount"]["breakdown"].update(
        shipping={"amount": usd("10.00"), "tax": {"name": "Sales Tax", "percent": "7.25"}},
        custom={"label": "Packing Charges", "amount": usd("10.00")},
    )
    invoice = create(api, body)
    breakdown = invoice["amount"]["breakdown"]
    assert invoice["amount"]["value"] == "74.21"
    assert breakdown["discount"]["item_discount"] == usd("-7.50")
    assert breakdown["discount"]["invoice_discount"]["amount"] == usd("-2.63")
    assert breakdown["tax_total"] == usd("4.34")
    assert breakdown["shipping"]["tax"]["amount"] == usd("0.73")
    assert breakdown["custom"] == {"label": "Packing Charges", "amount": usd("10.00")}
    assert [item["tax"]["amount"]["value"] for item in invoice["items"]] == ["3.27", "0.34"]
    assert invoice["items"][0]["discount"] == {"percent": "5", "amount": usd("2.50")}


def test_a_yen_invoice_has_no_decimals(api: Api) -> None:
    body = house(currency_code="JPY")
    body["items"][0]["unit_amount"] = {"currency_code": "JPY", "value": "45000"}
    invoice = create(api, body)
    assert invoice["amount"] == {
        "currency_code": "JPY",
        "value": "46170",
        "breakdown": {
            "item_total": {"currency_code": "JPY", "value": "45000"},
            "discount": {
                "invoice_discount": {
                    "percent": "5",
                    "amount": {"currency_code": "JPY", "value": "-2250"},
                }
            },
            "tax_total": {"currency_code": "JPY", "value": "3420"},
        },
    }


def test_yen_amounts_with_decimals_are_refused(api: Api) -> None:
    body = house(currency_code="JPY")
    body["items"][0]["unit_amount"] = {"currency_code": "JPY", "value": "450.50"}
    response = api.post(BASE, body)
    assert response.status_code == 422
    assert issues(response) == ["DECIMAL_PRECISION"]


def test_an_item_in_another_currency_is_refused(api: Api) -> None:
    body = house()
    body["items"][0]["unit_amount"] = {"currency_code": "EUR", "value": "450.00"}
    response = api.post(BASE, body)
    assert response.status_code == 422
    assert issues(response) == ["CURRENCY_MISMATCH"]


def test_an_unsupported_currency_is_refused(api: Api) -> None:
    response = api.post(BASE, house(currency_code="XXX"))
    assert response.status_code == 422
    assert issues(response) == ["CURRENCY_NOT_SUPPORTED"]


def test_a_discount_larger_than_its_item_is_refused(api: Api) -> None:
    body = house()
    body["items"][0]["discount"] = {"amount": usd("450.01")}
    response = api.post(BASE, body)
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == "/items/0/discount"
    assert api.get(BASE).json()["items"] == []


def test_a_percentage_over_100_is_refused(api: Api) -> None:
    body = house()
    body["items"][0]["tax"]["percent"] = "101"
    response = api.post(BASE, body)
    assert response.status_code == 400
    assert issues(response) == ["INVALID_PARAMETER_VALUE"]


@pytest.mark.parametrize(
    ("mutate", "issue"),
    [
        (lambda b: b.pop("detail"), "MISSING_REQUIRED_PARAMETER"),
        (lambda b: b["items"][0].update(quantity=1), "INVALID_PARAMETER_SYNTAX"),
        (lambda b: b["items"][0].update(quantity="two"), "INVALID_PARAMETER_SYNTAX"),
        (lambda b: b["items"][0]["unit_amount"].update(value="4.5.0"), "INVALID_PARAMETER_SYNTAX"),
    ],
)
def test_malformed_invoices_are_refused_with_400(api: Api, mutate: Any, issue: str) -> None:
    body = house()
    mutate(body)
    response = api.post(BASE, body)
    assert response.status_code == 400
    assert issue in issues(response)


# update ---------------------------------------------------------------------------------------


def test_update_replaces_the_invoice_and_recomputes_its_totals(api: Api, sandbox: Sandbox) -> None:
    invoice = create(api)
    body = house(invoice_number=invoice["detail"]["invoice_number"])
    body["items"][0]["quantity"] = "2"
    response = api.put(f"{BASE}/{invoice['id']}", body)
    assert response.status_code == 200
    updated = response.json()
    assert updated["amount"]["value"] == "923.40"
    assert (
        updated["detail"]["metadata"]["create_time"] == invoice["detail"]["metadata"]["create_time"]
    )
    assert show(api, invoice["id"])["amount"]["value"] == "923.40"
    assert "INVOICING.INVOICE.UPDATED" in event_types(sandbox, invoice["id"])


def test_update_keeps_the_invoice_number_when_none_is_sent(api: Api) -> None:
    invoice = create(api)
    updated = api.put(f"{BASE}/{invoice['id']}", house()).json()
    assert updated["detail"]["invoice_number"] == invoice["detail"]["invoice_number"]


def test_an_invoice_as_shown_can_be_sent_back_unchanged(api: Api) -> None:
    invoice = create(api)
    response = api.put(f"{BASE}/{invoice['id']}", copy.deepcopy(invoice))
    assert response.status_code == 200
    again = response.json()
    assert again["amount"] == invoice["amount"]
    assert again["items"] == invoice["items"]


def test_update_to_an_invoice_number_in_use_is_refused(api: Api) -> None:
    create(api, house(invoice_number="A-1"))
    second = create(api)
    response = api.put(f"{BASE}/{second['id']}", house(invoice_number="A-1"))
    assert response.status_code == 422
    assert issues(response) == ["DUPLICATE_INVOICE_NUMBER"]


def test_a_cancelled_invoice_cannot_be_updated(api: Api) -> None:
    invoice = sent(api)
    api.post(f"{BASE}/{invoice['id']}/cancel", {})
    response = api.put(f"{BASE}/{invoice['id']}", house())
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_UPDATE_INVOICE"]


# send, remind, cancel, delete -----------------------------------------------------------------


def test_send_moves_a_draft_to_sent_and_links_the_payer_view(api: Api, sandbox: Sandbox) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/send", {"send_to_invoicer": True})
    assert response.status_code == 200
    assert response.json() == {
        "href": f"http://sandbox.test/invoice/p/#{invoice['id']}",
        "rel": "payer-view",
        "method": "GET",
    }
    shown = show(api, invoice["id"])
    assert shown["status"] == "SENT"
    assert shown["detail"]["metadata"]["first_sent_time"] == "2026-11-21T12:00:00Z"
    assert "INVOICING.INVOICE.UPDATED" in event_types(sandbox, invoice["id"])


def test_send_needs_no_body(api: Api) -> None:
    invoice = create(api)
    assert api.post(f"{BASE}/{invoice['id']}/send").status_code == 200


def test_an_invoice_not_emailed_to_the_recipient_becomes_unpaid(api: Api) -> None:
    invoice = create(api)
    api.post(f"{BASE}/{invoice['id']}/send", {"send_to_recipient": False})
    assert show(api, invoice["id"])["status"] == "UNPAID"


def test_sending_twice_is_refused(api: Api) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/send", {})
    assert response.status_code == 422
    assert issues(response) == ["INVOICE_ALREADY_SENT"]


def test_a_cancelled_invoice_cannot_be_sent(api: Api) -> None:
    invoice = sent(api)
    api.post(f"{BASE}/{invoice['id']}/cancel", {})
    response = api.post(f"{BASE}/{invoice['id']}/send", {})
    assert response.status_code == 422
    assert issues(response) == ["CANT_SEND_INVOICE"]
    assert show(api, invoice["id"])["status"] == "CANCELLED"


def test_a_future_dated_invoice_is_scheduled_then_sent_on_its_date(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = create(api, house(invoice_date="2026-11-25"))
    response = api.post(f"{BASE}/{invoice['id']}/send", {})
    assert response.status_code == 202
    assert response.json()["links"][0]["rel"] == "self"
    assert show(api, invoice["id"])["status"] == "SCHEDULED"
    assert "INVOICING.INVOICE.SCHEDULED" in event_types(sandbox, invoice["id"])
    sandbox.clock.advance(timedelta(days=4))
    assert show(api, invoice["id"])["status"] == "SENT"


def test_a_scheduled_invoice_can_be_deleted(api: Api) -> None:
    invoice = create(api, house(invoice_date="2026-11-25"))
    api.post(f"{BASE}/{invoice['id']}/send", {})
    assert api.delete(f"{BASE}/{invoice['id']}").status_code == 204
    assert api.get(f"{BASE}/{invoice['id']}").status_code == 404


def test_delete_removes_a_draft(api: Api) -> None:
    invoice = create(api)
    assert api.delete(f"{BASE}/{invoice['id']}").status_code == 204
    assert api.get(f"{BASE}/{invoice['id']}").status_code == 404
    assert api.delete(f"{BASE}/{invoice['id']}").status_code == 404


def test_a_sent_invoice_cannot_be_deleted(api: Api) -> None:
    invoice = sent(api)
    response = api.delete(f"{BASE}/{invoice['id']}")
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_DELETE_INVOICE"]
    assert show(api, invoice["id"])["status"] == "SENT"


@pytest.mark.parametrize("send_to_recipient", [True, False])
def test_sent_and_unpaid_invoices_can_be_reminded(api: Api, send_to_recipient: bool) -> None:
    invoice = create(api)
    api.post(f"{BASE}/{invoice['id']}/send", {"send_to_recipient": send_to_recipient})
    response = api.post(f"{BASE}/{invoice['id']}/remind", {"note": "Gentle nudge"})
    assert response.status_code == 204


def test_a_draft_cannot_be_reminded(api: Api) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/remind")
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_REMIND_INVOICE"]


def test_cancel_moves_a_sent_invoice_to_cancelled(api: Api, sandbox: Sandbox) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/cancel", {"send_to_recipient": False})
    assert response.status_code == 204
    shown = show(api, invoice["id"])
    assert shown["status"] == "CANCELLED"
    assert shown["detail"]["metadata"]["cancel_time"] == "2026-11-21T12:00:00Z"
    assert "INVOICING.INVOICE.CANCELLED" in event_types(sandbox, invoice["id"])


def test_cancelling_a_draft_is_refused(api: Api) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/cancel", {})
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_CANCEL_DRAFT_INVOICE"]
    assert response.json()["details"][0]["description"] == "Draft invoice cannot be canceled."
    assert show(api, invoice["id"])["status"] == "DRAFT"


def test_cancelling_twice_is_refused(api: Api) -> None:
    invoice = sent(api)
    api.post(f"{BASE}/{invoice['id']}/cancel", {})
    response = api.post(f"{BASE}/{invoice['id']}/cancel", {})
    assert response.status_code == 422
    assert issues(response) == ["INVOICE_CANCELED_ALREADY"]


def test_cancelling_a_paid_or_refunded_invoice_is_refused(api: Api) -> None:
    invoice = sent(api)
    path = f"{BASE}/{invoice['id']}"
    api.post(f"{path}/payments", PAYMENT)
    response = api.post(f"{path}/cancel", {})
    assert issues(response) == ["CANNOT_CANCEL_PAID_INVOICE"]
    api.post(f"{path}/refunds", {"method": "CASH"})
    response = api.post(f"{path}/cancel", {})
    assert issues(response) == ["CANNOT_CANCEL_REFUNDED_INVOICE"]
    assert show(api, invoice["id"])["status"] == "MARKED_AS_REFUNDED"


def test_cancel_needs_a_body(api: Api) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/cancel")
    assert response.status_code == 400
    assert issues(response) == ["MISSING_REQUIRED_PARAMETER"]


# payments and refunds -------------------------------------------------------------------------


def test_a_partial_payment_leaves_the_rest_due_and_writes_the_ledger(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = sent(api)
    response = api.post(
        f"{BASE}/{invoice['id']}/payments", {**PAYMENT, "payment_date": "2026-11-20"}
    )
    assert response.status_code == 200
    payment_id = response.json()["payment_id"]
    assert re.fullmatch(r"EXTR-[A-Z0-9]{17}", payment_id)
    shown = show(api, invoice["id"])
    assert shown["status"] == "PARTIALLY_PAID"
    assert shown["due_amount"] == usd("361.70")
    assert shown["payments"]["paid_amount"] == usd("100.00")
    assert shown["payments"]["transactions"] == [
        {
            "type": "EXTERNAL",
            "payment_id": payment_id,
            "payment_date": "2026-11-20",
            "method": "CASH",
            "amount": usd("100.00"),
        }
    ]
    row = ledger_row(sandbox, payment_id)
    assert (row.event_code, row.status, row.currency) == ("T0000", "S", "USD")
    assert str(row.amount) == "100.00"


def test_paying_the_rest_marks_the_invoice_paid(api: Api, sandbox: Sandbox) -> None:
    invoice = sent(api)
    api.post(f"{BASE}/{invoice['id']}/payments", PAYMENT)
    rest = {"method": "CHECK", "amount": usd("361.70")}
    assert api.post(f"{BASE}/{invoice['id']}/payments", rest).status_code == 200
    shown = show(api, invoice["id"])
    assert shown["status"] == "MARKED_AS_PAID"
    assert shown["due_amount"] == usd("0.00")
    assert "INVOICING.INVOICE.PAID" in event_types(sandbox, invoice["id"])


def test_a_payment_without_an_amount_pays_what_is_due(api: Api) -> None:
    invoice = sent(api)
    api.post(f"{BASE}/{invoice['id']}/payments", {"method": "BANK_TRANSFER"})
    shown = show(api, invoice["id"])
    assert shown["status"] == "MARKED_AS_PAID"
    assert shown["payments"]["paid_amount"] == usd("461.70")
    assert shown["payments"]["transactions"][0]["payment_date"] == "2026-11-21"


def test_paying_more_than_is_due_is_refused_and_nothing_is_written(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = sent(api)
    response = api.post(
        f"{BASE}/{invoice['id']}/payments", {"method": "CASH", "amount": usd("461.71")}
    )
    assert response.status_code == 422
    assert issues(response) == ["PAYMENT_AMOUNT_GREATER_THAN_AMOUNT_DUE"]
    assert show(api, invoice["id"]) == invoice
    assert ledger_count(sandbox, invoice["id"]) == 0


def test_a_draft_cannot_take_payments(api: Api) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/payments", PAYMENT)
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_PROCESS_PAYMENTS"]


@pytest.mark.parametrize(
    ("payment", "status", "issue"),
    [
        ({"method": "CASH", "amount": usd("0.00")}, 400, "VALUE_CANNOT_BE_ZERO"),
        ({"method": "CASH", "amount": usd("1.005")}, 400, "INVALID_DECIMAL_VALUE"),
        ({"method": "CASH", "amount": usd("-1.00")}, 400, "INVALID_DECIMAL_VALUE"),
        (
            {"method": "CASH", "amount": {"currency_code": "EUR", "value": "1.00"}},
            400,
            "NOT_SUPPORTED",
        ),
        (
            {"method": "CASH", "amount": {"currency_code": "ABC", "value": "1.00"}},
            400,
            "NOT_SUPPORTED",
        ),
        ({"method": "BITCOIN"}, 400, "INVALID_PARAMETER_VALUE"),
        ({"amount": usd("1.00")}, 400, "MISSING_REQUIRED_PARAMETER"),
        ({"method": "CASH", "payment_date": "2026-13-01"}, 400, "INVALID_PARAMETER_SYNTAX"),
        ({"method": "CASH", "payment_date": "2026-02-30"}, 400, "INVALID_PARAMETER_SYNTAX"),
    ],
)
def test_bad_payments_are_refused_and_nothing_is_written(
    api: Api, sandbox: Sandbox, payment: dict[str, Any], status: int, issue: str
) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/payments", payment)
    assert response.status_code == status
    assert issues(response) == [issue]
    assert show(api, invoice["id"]) == invoice
    assert ledger_count(sandbox, invoice["id"]) == 0


def test_a_payment_with_a_request_id_is_recorded_once(api: Api) -> None:
    invoice = sent(api)
    headers = {"PayPal-Request-Id": "pay-1"}
    first = api.post(f"{BASE}/{invoice['id']}/payments", PAYMENT, headers=headers)
    again = api.post(f"{BASE}/{invoice['id']}/payments", PAYMENT, headers=headers)
    assert first.json() == again.json()
    assert show(api, invoice["id"])["payments"]["paid_amount"] == usd("100.00")


def test_deleting_a_payment_reopens_the_invoice_and_reverses_the_ledger(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = sent(api)
    payment_id = api.post(f"{BASE}/{invoice['id']}/payments", PAYMENT).json()["payment_id"]
    response = api.delete(f"{BASE}/{invoice['id']}/payments/{payment_id}")
    assert response.status_code == 204
    shown = show(api, invoice["id"])
    assert shown["status"] == "SENT"
    assert "payments" not in shown
    assert shown["due_amount"] == usd("461.70")
    assert ledger_row(sandbox, payment_id).status == "V"


def test_deleting_an_unknown_payment_is_404(api: Api) -> None:
    invoice = sent(api)
    response = api.delete(f"{BASE}/{invoice['id']}/payments/EXTR-NOPE")
    assert response.status_code == 404


def test_refunds_partially_then_fully_refund_a_paid_invoice(api: Api, sandbox: Sandbox) -> None:
    invoice = sent(api)
    path = f"{BASE}/{invoice['id']}"
    api.post(f"{path}/payments", {"method": "CASH"})
    first = api.post(
        f"{path}/refunds", {"method": "CASH", "amount": usd("61.70"), "refund_date": "2026-11-21"}
    )
    assert first.status_code == 200
    refund_id = first.json()["refund_id"]
    shown = show(api, invoice["id"])
    assert shown["status"] == "PARTIALLY_REFUNDED"
    assert shown["refunds"]["refund_amount"] == usd("61.70")
    assert shown["refunds"]["transactions"][0]["refund_id"] == refund_id
    row = ledger_row(sandbox, refund_id)
    assert (row.event_code, str(row.amount)) == ("T1107", "-61.70")
    assert "INVOICING.INVOICE.REFUNDED" in event_types(sandbox, invoice["id"])
    api.post(f"{path}/refunds", {"method": "CASH", "amount": usd("400.00")})
    assert show(api, invoice["id"])["status"] == "MARKED_AS_REFUNDED"


def test_refunding_more_than_was_paid_is_refused_and_nothing_is_written(
    api: Api, sandbox: Sandbox
) -> None:
    invoice = sent(api)
    path = f"{BASE}/{invoice['id']}"
    api.post(f"{path}/payments", PAYMENT)
    before = show(api, invoice["id"])
    response = api.post(f"{path}/refunds", {"method": "CASH", "amount": usd("100.01")})
    assert response.status_code == 422
    assert issues(response) == ["INVALID_REFUND_AMOUNT"]
    assert show(api, invoice["id"]) == before
    assert ledger_count(sandbox, invoice["id"]) == 1


def test_an_unpaid_invoice_cannot_be_refunded(api: Api) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/refunds", {"method": "CASH"})
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_PROCESS_REFUNDS"]


def test_a_payment_that_a_refund_depends_on_cannot_be_deleted(api: Api) -> None:
    invoice = sent(api)
    path = f"{BASE}/{invoice['id']}"
    payment_id = api.post(f"{path}/payments", PAYMENT).json()["payment_id"]
    api.post(f"{path}/refunds", {"method": "CASH", "amount": usd("50.00")})
    response = api.delete(f"{path}/payments/{payment_id}")
    assert response.status_code == 422
    assert issues(response) == ["CANNOT_DELETE_EXTERNAL_PAYMENT"]
    assert show(api, invoice["id"])["payments"]["paid_amount"] == usd("100.00")


def test_deleting_a_refund_restores_the_paid_status(api: Api, sandbox: Sandbox) -> None:
    invoice = sent(api)
    path = f"{BASE}/{invoice['id']}"
    api.post(f"{path}/payments", {"method": "CASH"})
    refund_id = api.post(f"{path}/refunds", {"method": "CASH"}).json()["refund_id"]
    assert api.delete(f"{path}/refunds/{refund_id}").status_code == 204
    shown = show(api, invoice["id"])
    assert shown["status"] == "MARKED_AS_PAID"
    assert "refunds" not in shown
    assert ledger_row(sandbox, refund_id).status == "V"
    assert api.delete(f"{path}/refunds/{refund_id}").status_code == 404


# QR codes -------------------------------------------------------------------------------------


def test_the_qr_code_is_a_png_that_decodes_to_the_payer_view(api: Api) -> None:
    invoice = sent(api)
    response = api.post(f"{BASE}/{invoice['id']}/generate-qr-code", {"width": 300, "height": 200})
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    assert image.size == (300, 200)
    decoded = [barcode.text for barcode in zxingcpp.read_barcodes(image)]
    assert decoded == [invoice["detail"]["metadata"]["recipient_view_url"]]


def test_the_qr_code_defaults_to_500_pixels_square(api: Api) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/generate-qr-code")
    assert Image.open(io.BytesIO(response.content)).size == (500, 500)


@pytest.mark.parametrize("config", [{"width": 149}, {"height": 501}, {"action": "steal"}])
def test_qr_code_sizes_outside_150_to_500_are_refused(api: Api, config: dict[str, Any]) -> None:
    invoice = create(api)
    response = api.post(f"{BASE}/{invoice['id']}/generate-qr-code", config)
    assert response.status_code == 400


# list and search ------------------------------------------------------------------------------


def three_invoices(api: Api, sandbox: Sandbox) -> list[dict[str, Any]]:
    made = []
    for number, value in (("A-1", "100.00"), ("A-2", "200.00"), ("A-3", "300.00")):
        body = house(invoice_number=number)
        body["items"][0]["unit_amount"] = usd(value)
        made.append(create(api, body))
        sandbox.clock.advance(timedelta(minutes=1))
    return made


def test_list_pages_newest_first_with_totals_when_asked(api: Api, sandbox: Sandbox) -> None:
    made = three_invoices(api, sandbox)
    first = api.get(f"{BASE}?page=1&page_size=2&total_required=true").json()
    assert [i["id"] for i in first["items"]] == [made[2]["id"], made[1]["id"]]
    assert (first["total_items"], first["total_pages"]) == (3, 2)
    rels = {link["rel"]: link["href"] for link in first["links"]}
    assert rels["next"].endswith("page=2&page_size=2&total_required=true")
    second = api.get(f"{BASE}?page=2&page_size=2").json()
    assert [i["id"] for i in second["items"]] == [made[0]["id"]]
    assert "total_items" not in second


def test_list_refuses_a_page_size_over_100(api: Api) -> None:
    response = api.get(f"{BASE}?page_size=101")
    assert response.status_code == 400


def search(api: Api, criteria: dict[str, Any]) -> list[str]:
    response = api.post("/v2/invoicing/search-invoices?total_required=true", criteria)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total_items"] == len(body["items"])
    return [invoice["detail"]["invoice_number"] for invoice in body["items"]]


def test_search_filters_by_status_number_and_recipient(api: Api, sandbox: Sandbox) -> None:
    made = three_invoices(api, sandbox)
    api.post(f"{BASE}/{made[0]['id']}/send", {})
    assert search(api, {"status": ["SENT"]}) == ["A-1"]
    assert search(api, {"status": ["DRAFT", "SENT"]}) == ["A-3", "A-2", "A-1"]
    assert search(api, {"invoice_number": "A-2"}) == ["A-2"]
    assert search(api, {"recipient_email": "BILL-ME@example.com"}) == ["A-3", "A-2", "A-1"]
    assert search(api, {"recipient_email": "someone@example.com"}) == []
    assert search(api, {"recipient_first_name": "steph"}) == ["A-3", "A-2", "A-1"]
    assert search(api, {"memo": "blue"}) == ["A-3", "A-2", "A-1"]
    assert search(api, {"currency_code": "EUR"}) == []
    assert search(api, {"archived": True}) == []


def test_search_filters_by_total_and_date_ranges(api: Api, sandbox: Sandbox) -> None:
    three_invoices(api, sandbox)
    span = {"lower_amount": usd("150.00"), "upper_amount": usd("250.00")}
    assert search(api, {"total_amount_range": span}) == ["A-2"]  # 205.20
    dates = {"start": "2026-11-21", "end": "2026-11-21"}
    assert search(api, {"invoice_date_range": dates}) == ["A-3", "A-2", "A-1"]
    assert search(api, {"due_date_range": dates}) == []
    created = {"start": "2026-11-21T12:01:00Z", "end": "2026-11-21T12:05:00Z"}
    assert search(api, {"creation_date_range": created}) == ["A-3", "A-2"]


def test_search_with_no_criteria_lists_everything(api: Api, sandbox: Sandbox) -> None:
    three_invoices(api, sandbox)
    response = api.post("/v2/invoicing/search-invoices?page_size=1")
    assert response.status_code == 200
    assert len(response.json()["items"]) == 1


def test_search_refuses_more_than_five_statuses(api: Api) -> None:
    statuses = ["DRAFT", "SENT", "PAID", "UNPAID", "CANCELLED", "REFUNDED"]
    response = api.post("/v2/invoicing/search-invoices", {"status": statuses})
    assert response.status_code == 400
    assert issues(response) == ["INVALID_ARRAY_MAX_ITEMS"]
