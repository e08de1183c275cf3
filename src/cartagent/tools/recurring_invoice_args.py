"""Argument models of the recurring invoice series tools (PayPal Invoicing v2)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from ._models import Amount, Args, Currency, PayPalId, WithCurrency, id_field
from .invoice_args import Email, InvoiceItem

SeriesId = Annotated[
    PayPalId,
    id_field(
        "The recurring invoice series id, e.g. RI-9Y6699772R098892C.", min_length=20, max_length=20
    ),
]
IntervalUnit = Literal["DAY", "WEEK", "MONTH", "YEAR"]
PaymentTerm = Literal[
    "DUE_ON_RECEIPT", "NET_10", "NET_15", "NET_30", "NET_45", "NET_60", "NET_90", "NO_DUE_DATE"
]
SeriesStatus = Literal["DRAFT", "ACTIVE", "CANCELLED", "EXPIRED"]


class SeriesFields(Args):
    """What create and update share; on update every field left out stays as it is."""

    interval_count: int | None = Field(
        default=None, ge=1, le=52, description="Invoice every this many units (2 = every other)."
    )
    total_cycles: int | None = Field(
        default=None, ge=0, le=999, description="How many invoices in all; 0 = until cancelled."
    )
    recipient_name: str | None = Field(
        default=None, min_length=1, max_length=140, description="Recipient's full name."
    )
    payment_term: PaymentTerm | None = Field(
        default=None, description="When each invoice is due, counted from its date."
    )
    shipping: Amount | None = Field(default=None, description="Shipping charged on each invoice.")
    reference: str | None = Field(
        default=None, max_length=120, description="A reference on each invoice, e.g. a PO number."
    )
    note: str | None = Field(default=None, max_length=4000, description="Note to the recipient.")
    terms: str | None = Field(
        default=None, max_length=4000, description="Terms and conditions on each invoice."
    )


class CreateSeriesArgs(SeriesFields, WithCurrency):
    interval_unit: IntervalUnit = Field(default="MONTH", description="How often: the unit.")
    start_date: date = Field(
        description="Date of the first invoice, YYYY-MM-DD, today or later; the next ones follow "
        "every interval from it."
    )
    recipient_email: Email = Field(description="Who is billed.")
    items: list[InvoiceItem] = Field(
        min_length=1, max_length=100, description="What each invoice bills."
    )


class UpdateSeriesArgs(SeriesFields):
    recurring_series_id: SeriesId
    interval_unit: IntervalUnit | None = Field(default=None, description="How often: the unit.")
    start_date: date | None = Field(
        default=None, description="New date of the first invoice (a series not yet started)."
    )
    recipient_email: Email | None = Field(default=None, description="New recipient email.")
    items: list[InvoiceItem] | None = Field(
        default=None, min_length=1, max_length=100, description="Replaces ALL items when given."
    )


class SeriesIdArgs(Args):
    recurring_series_id: SeriesId


class SearchSeriesArgs(Args):
    status: list[SeriesStatus] | None = Field(
        default=None, min_length=1, max_length=4, description="Any of these statuses."
    )
    text: str | None = Field(
        default=None,
        min_length=3,
        max_length=800,
        description="Text in the recipient's name, email or business, the items or the reference.",
    )
    currency: Currency | None = None
    next_invoice_from: date | None = Field(
        default=None, description="Next invoice on or after this date."
    )
    next_invoice_to: date | None = Field(
        default=None, description="Next invoice on or before this date."
    )
    page: int = Field(default=1, ge=1, le=1000, description="Page number, from 1.")
    page_size: int = Field(default=20, ge=1, le=100, description="Series per page.")
