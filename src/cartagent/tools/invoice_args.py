"""Argument models of the invoice tools (PayPal Invoicing v2)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from ._models import Amount, Args, Currency, PayPalId, Percent, WithCurrency, id_field

Email = Annotated[
    str,
    Field(
        description="Email address, e.g. bill-me@example.com.",
        max_length=254,
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
    ),
]
InvoiceId = Annotated[
    PayPalId, id_field("The PayPal invoice id, e.g. INV2-Z56S-5LLA-Q52L-CPZ5.", max_length=40)
]
InvoiceNumber = Annotated[
    str,
    Field(
        description="Your invoice number; PayPal assigns the next one if left out.", max_length=25
    ),
]
Status = Literal[
    "DRAFT",
    "SENT",
    "SCHEDULED",
    "PAID",
    "MARKED_AS_PAID",
    "CANCELLED",
    "REFUNDED",
    "PARTIALLY_PAID",
    "PARTIALLY_REFUNDED",
    "MARKED_AS_REFUNDED",
    "UNPAID",
    "PAYMENT_PENDING",
]
Method = Literal[
    "BANK_TRANSFER",
    "CASH",
    "CHECK",
    "CREDIT_CARD",
    "DEBIT_CARD",
    "PAYPAL",
    "WIRE_TRANSFER",
    "OTHER",
]


def _one_of(model: Args, first: str, second: str) -> None:
    if getattr(model, first) is not None and getattr(model, second) is not None:
        raise ValueError(f"give either {first} or {second}, not both")


class InvoiceItem(Args):
    name: str = Field(
        description="What is billed, e.g. 'Painting a house'.", min_length=1, max_length=200
    )
    quantity: Decimal = Field(
        default=Decimal(1),
        gt=0,
        le=Decimal(1_000_000),
        description="Number of units (hours, pieces).",
    )
    unit_price: Amount = Field(description="Price of one unit, before tax and discount.")
    tax_percent: Percent | None = Field(default=None, description="Tax rate on this item, e.g. 8.")
    tax_name: str = Field(
        default="Sales Tax", min_length=1, max_length=100, description="Tax label."
    )
    discount_percent: Percent | None = Field(default=None, description="Discount on this item, %.")
    discount_amount: Amount | None = Field(
        default=None, description="Fixed discount on this item (instead of discount_percent)."
    )
    description: str | None = Field(default=None, max_length=1000, description="Item details.")

    @model_validator(mode="after")
    def _one_discount(self) -> Self:
        _one_of(self, "discount_percent", "discount_amount")
        return self


class InvoiceFields(Args):
    """What create and update share; on update every field left out stays as it is."""

    recipient_name: str | None = Field(
        default=None, min_length=1, max_length=140, description="Recipient's full name."
    )
    discount_percent: Percent | None = Field(
        default=None, description="Discount on the whole invoice, e.g. 5 for 5 %."
    )
    discount_amount: Amount | None = Field(
        default=None, description="Fixed discount on the whole invoice (instead of a percent)."
    )
    shipping: Amount | None = Field(default=None, description="Shipping charge, if any.")
    note: str | None = Field(default=None, max_length=4000, description="Note to the recipient.")
    terms: str | None = Field(
        default=None, max_length=4000, description="Terms and conditions shown on the invoice."
    )
    due_in_days: int | None = Field(
        default=None, ge=0, le=365, description="Due this many days from today (e.g. 10)."
    )
    due_date: date | None = Field(
        default=None, description="Due on this date, YYYY-MM-DD (instead of due_in_days)."
    )
    invoice_number: InvoiceNumber | None = None

    @model_validator(mode="after")
    def _exclusive(self) -> Self:
        _one_of(self, "discount_percent", "discount_amount")
        _one_of(self, "due_in_days", "due_date")
        return self


class CreateInvoiceArgs(InvoiceFields, WithCurrency):
    recipient_email: Email | None = Field(
        default=None,
        description="Who is billed. Leave out when the user only wants a payment link to share.",
    )
    items: list[InvoiceItem] = Field(min_length=1, max_length=100, description="What is billed.")


class UpdateInvoiceArgs(InvoiceFields):
    invoice_id: InvoiceId
    recipient_email: Email | None = Field(default=None, description="New recipient email.")
    items: list[InvoiceItem] | None = Field(
        default=None, min_length=1, max_length=100, description="Replaces ALL items when given."
    )


class InvoiceIdArgs(Args):
    invoice_id: InvoiceId


class ListInvoicesArgs(Args):
    page: int = Field(default=1, ge=1, le=1000, description="Page number, from 1.")
    page_size: int = Field(default=20, ge=1, le=100, description="Invoices per page.")


class SearchInvoicesArgs(ListInvoicesArgs):
    status: list[Status] | None = Field(default=None, max_length=12, description="Any of these.")
    recipient_email: Email | None = None
    invoice_number: InvoiceNumber | None = None
    memo: str | None = Field(default=None, max_length=500, description="Text in the memo.")
    currency: Currency | None = None
    min_total: Amount | None = Field(default=None, description="Lowest total (needs currency).")
    max_total: Amount | None = Field(default=None, description="Highest total (needs currency).")
    invoice_date_from: date | None = Field(default=None, description="Invoice date on/after.")
    invoice_date_to: date | None = Field(default=None, description="Invoice date on/before.")
    due_date_from: date | None = Field(default=None, description="Due date on/after.")
    due_date_to: date | None = Field(default=None, description="Due date on/before.")

    @model_validator(mode="after")
    def _ranges(self) -> Self:
        if (self.min_total is not None or self.max_total is not None) and not self.currency:
            raise ValueError("currency is needed to search by total")
        return self


class SendInvoiceArgs(InvoiceIdArgs):
    subject: str | None = Field(default=None, max_length=4000, description="Email subject.")
    note: str | None = Field(default=None, max_length=4000, description="Email message.")
    send_to_recipient: bool = Field(
        default=True, description="Email the recipient; false just makes the invoice payable."
    )
    send_to_invoicer: bool = Field(default=False, description="Send yourself a copy.")


class RemindInvoiceArgs(InvoiceIdArgs):
    subject: str | None = Field(default=None, max_length=4000, description="Email subject.")
    note: str | None = Field(default=None, max_length=4000, description="Email message.")


class CancelInvoiceArgs(InvoiceIdArgs):
    subject: str | None = Field(default=None, max_length=4000, description="Email subject.")
    note: str | None = Field(default=None, max_length=4000, description="Why it is cancelled.")
    send_to_recipient: bool = Field(default=True, description="Tell the recipient.")


class QrCodeArgs(InvoiceIdArgs):
    width: int = Field(default=500, ge=150, le=500, description="Image width in pixels.")
    height: int = Field(default=500, ge=150, le=500, description="Image height in pixels.")
    action: Literal["pay", "details"] = Field(
        default="pay", description="'pay' opens the payment page, 'details' the invoice."
    )


class NextNumberArgs(Args):
    pass


class RecordPaymentArgs(InvoiceIdArgs):
    method: Method = Field(description="How the money was received outside PayPal.")
    amount: Amount | None = Field(
        default=None, gt=0, description="Amount received; the whole amount due if left out."
    )
    payment_date: date | None = Field(default=None, description="YYYY-MM-DD; today if left out.")
    note: str | None = Field(default=None, max_length=2000, description="A note about it.")


class RecordRefundArgs(InvoiceIdArgs):
    method: Method = Field(description="How the money was given back outside PayPal.")
    amount: Amount | None = Field(
        default=None, gt=0, description="Amount refunded; all that was paid if left out."
    )
    refund_date: date | None = Field(default=None, description="YYYY-MM-DD; today if left out.")
