"""The invoice document: how a request body becomes a stored invoice and how PayPal shows it.

A stored invoice keeps what the merchant sent (read-only fields dropped, dates and the invoice
number filled in, discount amounts made positive) plus ``payments``/``refunds`` transactions.
Every computed amount is derived again by ``invoice_totals`` when the invoice is shown.
"""

from __future__ import annotations

import copy
from datetime import UTC, date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from ..amounts import MAX_VALUE, check_currency, money, parse_amount, round_money
from ..api import Call
from ..clock import iso
from ..errors import invalid_request, unprocessable
from ..store import Row, Tx
from ..webhooks.events import emit
from .totals import ZERO, Discount, Line, Totals, TotalsError, compute

SPEC = "invoicing_v2"
INVOICE = "invoice"
BASE = "/v2/invoicing/invoices"
READ_ONLY = ("id", "parent_id", "status", "links", "due_amount", "gratuity", "payments", "refunds")
TERM_DAYS = {
    "DUE_ON_RECEIPT": 0,
    "NET_10": 10,
    "NET_15": 15,
    "NET_30": 30,
    "NET_45": 45,
    "NET_60": 60,
    "NET_90": 90,
}
EARLY_PAYMENT_DISCOUNT = "EARLY_PAYMENT_DISCOUNT"
# A conditional rule's relative expiry: counted from the invoice date or from its due date.
RULE_EXPIRY = {
    "THREE_DAYS_AFTER_ISSUE_DATE": ("invoice_date", 3),
    "SEVEN_DAYS_AFTER_ISSUE_DATE": ("invoice_date", 7),
    "FIFTEEN_DAYS_AFTER_ISSUE_DATE": ("invoice_date", 15),
    "THIRTY_DAYS_AFTER_ISSUE_DATE": ("invoice_date", 30),
    "ONE_DAY_AFTER_DUE_DATE": ("due_date", 1),
    "SEVEN_DAYS_AFTER_DUE_DATE": ("due_date", 7),
    "FIFTEEN_DAYS_AFTER_DUE_DATE": ("due_date", 15),
    "THIRTY_DAYS_AFTER_DUE_DATE": ("due_date", 30),
}


def today(call: Call) -> date:
    """The sandbox's current date, in UTC (invoice dates carry no time zone)."""
    return call.now.astimezone(UTC).date()


def parse_date(raw: object, field: str, description: str) -> date | None:
    """A ``YYYY-MM-DD`` field (the spec's pattern still lets through e.g. February 31)."""
    if raw is None:
        return None
    try:
        return date.fromisoformat(str(raw))
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", description, field=field, value=str(raw)
        ) from None


def _decimal(raw: object, field: str) -> Decimal:
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field=field, value=str(raw)) from None
    if not value.is_finite():
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field=field, value=str(raw))
    return value


def _percent(raw: object, field: str) -> Decimal | None:
    if raw is None:
        return None
    value = _decimal(raw, field)
    if not ZERO <= value <= 100:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "Percentage should be between 0 and 100.",
            field=field,
            value=str(raw),
        )
    return value


def _money(obj: Any, field: str, currency: str, *, signed: bool = False) -> Decimal:
    if signed and isinstance(obj, dict) and str(obj.get("value", "")).startswith("-"):
        positive = {**obj, "value": str(obj["value"])[1:]}
        return -parse_amount(positive, field, currency=currency)[0]
    return parse_amount(obj, field, currency=currency)[0]


def _positive_amount(discount: dict[str, Any]) -> None:
    # PayPal shows discounts as negative amounts; a client sending one back means the same.
    amount = discount.get("amount")
    if isinstance(amount, dict) and str(amount.get("value", "")).startswith("-"):
        amount["value"] = str(amount["value"])[1:]


def _discount(obj: Any, field: str, currency: str) -> Discount | None:
    if not isinstance(obj, dict) or not obj:
        return None
    amount = obj.get("amount")
    return Discount(
        percent=_percent(obj.get("percent"), f"{field}/percent"),
        amount=None if amount is None else _money(amount, f"{field}/amount", currency),
    )


def totals_of(doc: dict[str, Any]) -> Totals:
    """Compute (and so validate) every amount of a stored invoice document."""
    currency: str = doc["detail"]["currency_code"]
    lines = []
    for index, item in enumerate(doc.get("items") or []):
        where = f"/items/{index}"
        quantity = _decimal(item["quantity"], f"{where}/quantity")
        if quantity < 0:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE", field=f"{where}/quantity", value=item["quantity"]
            )
        tax = item.get("tax") or {}
        lines.append(
            Line(
                quantity=quantity,
                unit_amount=_money(item["unit_amount"], f"{where}/unit_amount", currency),
                tax_percent=_percent(tax.get("percent"), f"{where}/tax/percent"),
                discount=_discount(item.get("discount"), f"{where}/discount", currency),
            )
        )
    breakdown = (doc.get("amount") or {}).get("breakdown") or {}
    where = "/amount/breakdown"
    shipping = breakdown.get("shipping") or {}
    custom = breakdown.get("custom") or {}
    config = doc.get("configuration") or {}
    try:
        totals = compute(
            lines,
            currency,
            invoice_discount=_discount(
                (breakdown.get("discount") or {}).get("invoice_discount"),
                f"{where}/discount/invoice_discount",
                currency,
            ),
            shipping=(
                _money(shipping["amount"], f"{where}/shipping/amount", currency)
                if "amount" in shipping
                else ZERO
            ),
            shipping_tax_percent=_percent(
                (shipping.get("tax") or {}).get("percent"), f"{where}/shipping/tax/percent"
            ),
            custom=(
                _money(custom["amount"], f"{where}/custom/amount", currency, signed=True)
                if "amount" in custom
                else ZERO
            ),
            tax_after_discount=config.get("tax_calculated_after_discount", True),
            tax_inclusive=config.get("tax_inclusive", False),
        )
    except TotalsError as error:
        raise unprocessable(error.issue, error.description, field=error.field) from None
    if totals.total > MAX_VALUE:
        raise unprocessable(
            "MAX_VALUE_EXCEEDED",
            "Should be less than or equal to 9999999.99.",
            field="/amount/value",
            value=str(totals.total),
        )
    return totals


def prepare(call: Call, body: dict[str, Any], today: date) -> tuple[dict[str, Any], Totals]:
    """The document to store for a create or full-replace request, with its totals."""
    doc = {key: copy.deepcopy(value) for key, value in body.items() if key not in READ_ONLY}
    detail = doc["detail"]
    detail.pop("metadata", None)
    check_currency(detail.get("currency_code"), "/detail/currency_code")
    invoice_date = parse_date(
        detail.get("invoice_date"), "/detail/invoice_date", "Invoice date is invalid."
    )
    invoice_date = invoice_date or today
    detail["invoice_date"] = invoice_date.isoformat()
    _payment_term(detail, invoice_date)
    for index, item in enumerate(doc.get("items") or []):
        item["id"] = item.get("id") or f"ITEM-{call.sandbox.ids.paypal17()}"
        item.get("tax", {}).pop("amount", None)
        _positive_amount(item.get("discount") or {})
        item.setdefault("unit_of_measure", "QUANTITY")
        if item.get("item_date") is not None:
            parse_date(item["item_date"], f"/items/{index}/item_date", "Item Date is invalid.")
    breakdown = (doc.get("amount") or {}).get("breakdown") or {}
    kept: dict[str, Any] = {}
    invoice_discount = (breakdown.get("discount") or {}).get("invoice_discount")
    if invoice_discount:
        _positive_amount(invoice_discount)
        kept["discount"] = {"invoice_discount": invoice_discount}
    if breakdown.get("shipping"):
        kept["shipping"] = breakdown["shipping"]
        (kept["shipping"].get("tax") or {}).pop("amount", None)
    if breakdown.get("custom"):
        kept["custom"] = breakdown["custom"]
    doc.pop("amount", None)
    if kept:
        doc["amount"] = {"breakdown": kept}
    return doc, totals_of(doc)


def _payment_term(detail: dict[str, Any], invoice_date: date) -> None:
    term = detail.get("payment_term")
    if not term:
        return
    term.pop("conditional_rules", None)  # read-only: shown from the invoice's stored rules
    due = parse_date(term.get("due_date"), "/detail/payment_term/due_date", "Due date is invalid.")
    kind = term.get("term_type") or ("DUE_ON_DATE_SPECIFIED" if due else "NO_DUE_DATE")
    term["term_type"] = kind
    if kind in TERM_DAYS:
        term["due_date"] = (invoice_date + timedelta(days=TERM_DAYS[kind])).isoformat()
    elif kind == "NO_DUE_DATE":
        term.pop("due_date", None)
    elif due is None:
        raise invalid_request(
            "MISSING_REQUIRED_PARAMETER",
            "Due date is required for DUE_ON_DATE_SPECIFIED.",
            field="/detail/payment_term/due_date",
        )
    elif due < invoice_date:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX",
            "Due date is invalid.",
            field="/detail/payment_term/due_date",
            value=due.isoformat(),
        )


def transactions(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (doc.get(key) or {}).get("transactions") or []
    return found


def paid_total(doc: dict[str, Any]) -> Decimal:
    return sum((Decimal(t["amount"]["value"]) for t in transactions(doc, "payments")), ZERO)


def refunded_total(doc: dict[str, Any]) -> Decimal:
    return sum((Decimal(t["amount"]["value"]) for t in transactions(doc, "refunds")), ZERO)


def due_date(doc: dict[str, Any]) -> date | None:
    due = (doc["detail"].get("payment_term") or {}).get("due_date")
    return date.fromisoformat(due) if due else None


def rule_end_date(doc: dict[str, Any], rule: dict[str, Any]) -> date | None:
    """When a conditional rule ends (a discount) or takes effect (a cancellation), worked out
    from the invoice as it is now, so that changing its dates moves the rule with them."""
    terms = rule["rule_expiry_terms"]
    relative = RULE_EXPIRY.get(terms["rule_expiry_condition"])
    if relative is None:
        return date.fromisoformat(terms["condition_rule_end_date"])
    anchor, days = relative
    detail = doc["detail"]
    start = (
        date.fromisoformat(detail["invoice_date"]) if anchor == "invoice_date" else due_date(doc)
    )
    return None if start is None else start + timedelta(days=days)


def early_discount(doc: dict[str, Any], total: Decimal, on: date) -> Decimal:
    """What the invoice's early payment discount takes off ``total`` for a payment on ``on``.

    Once a payment in full has earned the discount it stays taken (``_discount_taken``), after
    its end date too; otherwise it applies up to and including its end date.
    """
    taken = doc.get("_discount_taken")
    if taken is not None:
        return Decimal(taken)
    for rule in doc.get("_conditional_rules") or []:
        if rule["conditional_rule_type"] != EARLY_PAYMENT_DISCOUNT:
            continue
        ends = rule_end_date(doc, rule)
        if ends is None or on > ends:
            return ZERO
        value = Decimal(rule["conditional_rule_value"])
        if rule["conditional_rule_value_type"] == "PERCENT":
            value = round_money(total * value / 100, doc["detail"]["currency_code"])
        return min(value, total)
    return ZERO


def settled_status(doc: dict[str, Any], total: Decimal, unsettled: str) -> str:
    """The status that the recorded payments and refunds put an issued invoice in."""
    paid, refunded = paid_total(doc), refunded_total(doc)
    if refunded > 0:
        return "MARKED_AS_REFUNDED" if refunded >= paid else "PARTIALLY_REFUNDED"
    if paid > 0 and paid < total:
        return "PARTIALLY_PAID"
    if paid > 0:  # paid through PayPal (the buyer's page), or marked as paid by the merchant
        through_paypal = any(t.get("type") == "PAYPAL" for t in transactions(doc, "payments"))
        return "PAID" if through_paypal else "MARKED_AS_PAID"
    return unsettled


def current_status(row: Row, today: date) -> str:
    """The stored status, with a scheduled invoice counted as sent once its date arrives."""
    issued_on = date.fromisoformat(row.data["detail"]["invoice_date"])
    if row.status == "SCHEDULED" and issued_on <= today:
        return str(row.data.get("_unsettled", "SENT"))
    return row.status


def merchant_email(call: Call) -> str:
    merchant = call.sandbox.merchant(call.merchant_id)
    return merchant.email if merchant else "merchant@example.com"


def save(
    call: Call,
    tx: Tx,
    invoice_id: str,
    doc: dict[str, Any],
    status: str,
    event: str | None = None,
    summary: str = "",
) -> dict[str, Any]:
    """Store the changed invoice, emit ``event`` about it, and return it as PayPal shows it."""
    metadata = doc["detail"].setdefault("metadata", {})
    metadata["last_update_time"] = iso(call.now)
    metadata["last_updated_by"] = merchant_email(call)
    tx.update(INVOICE, invoice_id, doc, now=call.now, status=status)
    shown = render(call, invoice_id, status, doc)
    if event is not None:
        emit(call, tx, event, shown, summary)
    return shown


def payer_view_url(call: Call, invoice_id: str) -> str:
    return f"{call.base_url}/invoice/p/#{invoice_id}"


def _neg(value: Decimal, currency: str) -> dict[str, str]:
    return money(ZERO - value, currency)


def _links(call: Call, invoice_id: str, status: str) -> list[dict[str, str]]:
    path = f"{BASE}/{invoice_id}"
    links = [call.link(path, "self")]
    if status in ("DRAFT", "SCHEDULED", "SENT", "UNPAID"):
        links.append(call.link(path, "replace", "PUT"))
    if status in ("DRAFT", "SCHEDULED"):
        links.append(call.link(path, "delete", "DELETE"))
    if status == "DRAFT":
        links.append(call.link(f"{path}/send", "send", "POST"))
    if status in ("SENT", "UNPAID", "PARTIALLY_PAID"):
        links.append(call.link(f"{path}/remind", "remind", "POST"))
    if status in ("SENT", "UNPAID"):
        links.append(call.link(f"{path}/cancel", "cancel", "POST"))
    if status in ("SCHEDULED", "SENT", "UNPAID", "PARTIALLY_PAID"):
        links.append(call.link(f"{path}/payments", "record-payment", "POST"))
    if status in ("MARKED_AS_PAID", "PAID", "PARTIALLY_PAID", "PARTIALLY_REFUNDED"):
        links.append(call.link(f"{path}/refunds", "record-refund", "POST"))
    links.append(call.link(f"{path}/generate-qr-code", "qr-code", "POST"))
    return links


def _show_rules(doc: dict[str, Any], currency: str, discount_off: Decimal) -> None:
    """Show the early payment discount in the payment term, as PayPal's reference does."""
    for rule in doc.get("_conditional_rules") or []:
        if rule["conditional_rule_type"] != EARLY_PAYMENT_DISCOUNT:
            continue
        ends = rule_end_date(doc, rule)
        shown: dict[str, Any] = {"discount_end_date": ends.isoformat() if ends else None}
        if rule["conditional_rule_value_type"] == "PERCENT":
            shown["percent"] = rule["conditional_rule_value"]
        else:
            shown["amount"] = money(Decimal(rule["conditional_rule_value"]), currency)
        shown["is_applied"] = discount_off > 0
        term = doc["detail"].setdefault("payment_term", {})
        term["conditional_rules"] = {"early_payment_discount": shown}


def render(call: Call, invoice_id: str, status: str, stored: dict[str, Any]) -> dict[str, Any]:
    """The invoice as PayPal shows it, every computed amount filled in."""
    doc = copy.deepcopy(stored)
    totals = totals_of(doc)
    currency: str = doc["detail"]["currency_code"]
    for item, line in zip(doc.get("items") or [], totals.lines, strict=True):
        if item.get("tax"):
            item["tax"]["amount"] = money(line.tax, currency)
        if item.get("discount"):
            item["discount"]["amount"] = money(line.discount, currency)
    breakdown: dict[str, Any] = {"item_total": money(totals.item_total, currency)}
    given = (doc.get("amount") or {}).get("breakdown") or {}
    discount: dict[str, Any] = {}
    if any(item.get("discount") for item in doc.get("items") or []):
        discount["item_discount"] = _neg(totals.item_discount, currency)
    if "discount" in given:
        shown = {k: v for k, v in given["discount"]["invoice_discount"].items() if k == "percent"}
        discount["invoice_discount"] = {**shown, "amount": _neg(totals.invoice_discount, currency)}
    if discount:
        breakdown["discount"] = discount
    breakdown["tax_total"] = money(totals.tax_total, currency)
    if "shipping" in given:
        shipping = copy.deepcopy(given["shipping"])
        shipping["amount"] = money(totals.shipping, currency)
        if shipping.get("tax"):
            shipping["tax"]["amount"] = money(totals.shipping_tax, currency)
        breakdown["shipping"] = shipping
    if "custom" in given:
        breakdown["custom"] = {**given["custom"], "amount": money(totals.custom, currency)}
    paid, refunded = paid_total(doc), refunded_total(doc)
    on = today(call)
    discount_off = early_discount(doc, totals.total, on)
    _show_rules(doc, currency, discount_off)
    invoice: dict[str, Any] = {"id": invoice_id, "status": status}
    hidden = ("amount", "payments", "refunds")
    invoice.update({k: v for k, v in doc.items() if k not in hidden and not k.startswith("_")})
    invoice["amount"] = {**money(totals.total, currency), "breakdown": breakdown}
    invoice["due_amount"] = money(max(totals.total - discount_off - paid, ZERO), currency)
    if transactions(doc, "payments"):
        invoice["payments"] = {
            "paid_amount": money(paid, currency),
            "transactions": transactions(doc, "payments"),
        }
    if transactions(doc, "refunds"):
        invoice["refunds"] = {
            "refund_amount": money(refunded, currency),
            "transactions": transactions(doc, "refunds"),
        }
    invoice["links"] = _links(call, invoice_id, status)
    return invoice
