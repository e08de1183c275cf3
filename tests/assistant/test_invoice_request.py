"""Reading invoice requests without a model: what is read, and what is asked instead."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from cartagent.assistant.specialists.back_office.invoice_request import (
    MAX_REQUEST_CHARS,
    InvoiceDraft,
    Unclear,
    money_mentions,
    read_invoice_request,
)


def _item(name: str, price: str, quantity: str = "1", **extra: str) -> dict[str, Any]:
    return {"name": name, "quantity": quantity, "unit_price": price, **extra}


READABLE: list[tuple[str, dict[str, Any]]] = [
    (
        "Create a PayPal invoice link for painting a house with a cost of $450. Add 8% tax and "
        "apply 5% discount. Make sure it expires in 10 days.",
        {
            "items": [_item("Painting a house", "450", tax_percent="8", discount_percent="5")],
            "due_in_days": 10,
        },
    ),
    (
        "invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days",
        {
            "items": [_item("Painting a house", "450", tax_percent="8", discount_percent="5")],
            "due_in_days": 10,
        },
    ),
    (
        "bill jamie@example.com 3 hours of consulting at $120/hour, net 30",
        {
            "items": [_item("Consulting", "120", "3")],
            "due_in_days": 30,
            "recipient_email": "jamie@example.com",
        },
    ),
    ("invoice for logo design 900 dollars", {"items": [_item("Logo design", "900")]}),
    (
        "invoice jamie@example.com €250 for a website audit, due 2026-12-15",
        {
            "currency": "EUR",
            "items": [_item("Website audit", "250")],
            "due_date": "2026-12-15",
            "recipient_email": "jamie@example.com",
        },
    ),
    (
        "invoice for 2 x tshirt printing at 15.50 each",
        {"items": [_item("Tshirt printing", "15.50", "2")]},
    ),
    (
        "Send an invoice to Acme for catering, 1,200.00 USD, 10% VAT",
        {"items": [_item("Catering", "1200.00", tax_percent="10", tax_name="VAT")]},
    ),
    (
        "invoice for painting $450 due in 2 weeks",
        {"items": [_item("Painting", "450")], "due_in_days": 14},
    ),
    (  # a price not said to be per unit is the line's total
        "invoice for 3 hours of consulting, $360 total",
        {"items": [_item("Consulting", "120", "3")]},
    ),
    (
        "invoice for a website, $2,000 plus $25 shipping, 10% off, payable within 10 days",
        {
            "items": [_item("Website", "2000", discount_percent="10")],
            "shipping": "25",
            "due_in_days": 10,
        },
    ),
    (
        "invoice for tutoring 40 eur per hour for 5 hours",
        {"currency": "EUR", "items": [_item("Tutoring", "40", "5")]},
    ),
    (
        "bill for a mug, £12, due on receipt",
        {"currency": "GBP", "items": [_item("Mug", "12")], "due_in_days": 0},
    ),
    ("invoice for a massage, ¥8000", {"currency": "JPY", "items": [_item("Massage", "8000")]}),
    ("invoice for a rub down, $5", {"items": [_item("Rub down", "5")]}),
]


@pytest.mark.parametrize(("text", "expected"), READABLE)
def test_a_request_is_read_into_create_invoice_arguments(
    text: str, expected: dict[str, Any]
) -> None:
    read = read_invoice_request(text)

    assert isinstance(read, InvoiceDraft), read
    arguments = read.arguments()
    for item in arguments["items"]:
        if item["tax_name"] == "Sales Tax":  # the tool's default label
            del item["tax_name"]
    assert arguments == {"currency": "USD", **expected}


UNCLEAR: list[tuple[str, str, str]] = [
    ("invoice for a logo design", "unit_price", "How much should the invoice for logo design be?"),
    ("invoice for $450", "name", "What is the invoice for?"),
    ("invoice for painting, $99999999", "unit_price", "less than or equal to 9999999.99"),
    (
        "invoice for painting $450 with 150% discount",
        "discount_percent",
        "less than or equal to 100",
    ),
    ("invoice for painting $450 due in 1000 days", "due_in_days", "less than or equal to 365"),
    ("invoice for 3 hours of consulting for $100", "unit_price", "does not split evenly over 3"),
    ("invoice for logo design $900 and business cards $150", "unit_price", "more than one price"),
    ("invoice for consulting ¥5000.50", "unit_price", "more decimals than JPY allows"),
    ("charge bob@example.com 20 EUR for a yoga lesson in USD", "currency", "(EUR, USD)"),
    ("bill a@example.com and c@example.com for mowing $40", "recipient_email", "more than one"),
    ("invoice for painting $450, 8% tax, 10% tax", "tax_percent", "more than one tax rate"),
    ("invoice for painting $450 due 2026-02-30", "due_date", "2026-02-30 is not a date"),
    ("invoice for painting $450, due in 5 days, net 30", "due", "more than one due date"),
    ("invoice for 0 hours of consulting at $50/hour", "quantity", "greater than 0"),
    ("invoice for " + "very " * 60 + "long work, $5", "name", "at most 200 characters"),
    ("invoice for painting $450 " + "x" * MAX_REQUEST_CHARS, "request", "too long"),
]


@pytest.mark.parametrize(("text", "field", "said"), UNCLEAR)
def test_a_missing_or_ambiguous_piece_is_asked_for(text: str, field: str, said: str) -> None:
    read = read_invoice_request(text)

    assert isinstance(read, Unclear), read
    assert read.field == field and said in read.question


def test_the_arguments_are_the_tools_own_validated_model() -> None:
    read = read_invoice_request("invoice jamie@example.com for painting, $450.50, due 2026-12-15")

    assert isinstance(read, InvoiceDraft)
    assert read.args.items[0].unit_price == Decimal("450.50")
    assert read.args.due_date == date(2026, 12, 15)
    assert read.args.currency == "USD"


def test_money_is_read_with_its_currency_and_whether_it_is_per_unit() -> None:
    found = money_mentions(
        "$1,200.50, then 30 EUR, at 15 each, 7 hours and 4%, and 120 dollars/hour"
    )

    assert [(m.amount, m.currency, m.per_unit) for m in found] == [
        (Decimal("1200.50"), "USD", False),
        (Decimal("30"), "EUR", False),
        (Decimal("15"), None, True),
        (Decimal("120"), "USD", True),
    ]


@pytest.mark.parametrize(
    ("text", "draft"),
    [
        ("Draft an invoice for a logo, $300", True),
        ("invoice for a logo, $300, but don't send it yet", True),
        ("preview an invoice for a logo, $300", True),
        ("invoice for a logo, $300, due in 10 days", False),
        ("send an invoice for a logo, $300", False),
    ],
)
def test_a_draft_is_asked_for_in_words(text: str, draft: bool) -> None:
    from cartagent.assistant.specialists.back_office.invoice_request import DRAFT_ONLY

    assert bool(DRAFT_ONLY.search(text)) is draft


@pytest.mark.parametrize(
    ("text", "sends"),
    [
        ("send it", True),
        ("ok, send it", True),
        ("Looks good, please send the invoice", True),
        ("yes send the draft", True),
        ("send it to jo@example.com", False),  # a new recipient: another intent
        ("can you send me the list of invoices", False),
        ("I will send it tomorrow myself", False),
    ],
)
def test_send_it_is_read_only_as_a_whole_answer(text: str, sends: bool) -> None:
    from cartagent.assistant.specialists.back_office.invoice_request import SEND_IT

    assert bool(SEND_IT.search(text)) is sends
