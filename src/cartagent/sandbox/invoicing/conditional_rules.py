"""Conditional rules on an invoice: an early payment discount, or cancellation when unpaid.

Shapes follow PayPal's public REST reference for ``POST /v2/invoicing/invoices/{id}/conditional-
rules`` (developer.paypal.com/api/invoicing/v2, the ``conditional_rules``, ``rule_expiry_terms``
and ``payment_term_conditional_rules`` definitions) and the toolkit's
``CreateConditionalRulesParameters``; the request schema is in
``specs/invoicing_v2_automation.json`` (written for the sandbox: ``invoicing_v2.json`` predates it).

The rules matter. An EARLY_PAYMENT_DISCOUNT (a percent of the invoice total, rounded half-up to
the currency's minor unit, or an amount) lowers the amount due of a payment made on or before its
end date (``invoice_document.early_discount``); the invoice shows it in
``detail.payment_term.conditional_rules.early_payment_discount``. An AUTO_CANCEL cancels the
invoice, if it is still unpaid, once the sandbox clock reaches its date (:func:`cancel_due`),
emitting ``INVOICING.INVOICE.CANCELLED``. A relative expiry (``…_AFTER_ISSUE_DATE``,
``…_AFTER_DUE_DATE``) is worked out from the invoice's dates, so a ``condition_rule_end_date``
sent with it is ignored; ``SPECIFIC_DATE`` needs one. Each type appears once per invoice: new
rules replace the invoice's rule of the same type.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter

from ..amounts import parse_amount
from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import invalid_request, unprocessable
from ..store import Tx
from .document import (
    BASE,
    EARLY_PAYMENT_DISCOUNT,
    INVOICE,
    RULE_EXPIRY,
    current_status,
    due_date,
    merchant_email,
    parse_date,
    rule_end_date,
    save,
    today,
    totals_of,
)

router = APIRouter()

SPEC = "invoicing_v2_automation"
KEY_TTL = timedelta(hours=72)
AUTO_CANCEL = "AUTO_CANCEL"
# The invoices a rule can still change: not yet paid (in part or in full) nor cancelled.
OPEN = ("DRAFT", "SCHEDULED", "SENT", "UNPAID")
CANCELLABLE = ("SENT", "UNPAID")


def _rule_id(call: Call) -> str:
    raw = call.sandbox.ids.paypal17() + call.sandbox.ids.paypal17()
    return f"CR-{raw[:4]}-{raw[4:8]}-{raw[8:16]}-{raw[16:20]}-{raw[20:32]}"


def _check_discount(
    rule: dict[str, Any], where: str, currency: str, total: Decimal
) -> dict[str, Any]:
    kind, raw = rule.get("conditional_rule_value_type"), rule.get("conditional_rule_value")
    for key, value in (("conditional_rule_value_type", kind), ("conditional_rule_value", raw)):
        if value is None:
            raise invalid_request(
                "MISSING_REQUIRED_PARAMETER",
                "An early payment discount needs a value and its type.",
                field=f"{where}/{key}",
            )
    field = f"{where}/conditional_rule_value"
    if kind == "PERCENT":
        value = Decimal(str(raw))
    else:
        value, _ = parse_amount(
            {"currency_code": currency, "value": str(raw)}, field, currency=currency
        )
    if value <= 0 or (kind == "PERCENT" and value > 100):
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "A discount is more than 0, and a percentage at most 100.",
            field=field,
            value=str(raw),
        )
    if kind == "AMOUNT" and value > total:
        raise unprocessable(
            "DISCOUNT_EXCEEDS_AMOUNT",
            "The early payment discount cannot exceed the invoice total.",
            field=field,
            value=str(raw),
        )
    return {"conditional_rule_value_type": kind, "conditional_rule_value": str(raw)}


def _checked(call: Call, doc: dict[str, Any], rule: dict[str, Any], where: str) -> dict[str, Any]:
    """One requested rule, validated against the invoice, in the form it is stored."""
    kind = rule["conditional_rule_type"]
    terms = rule["rule_expiry_terms"]
    condition = terms["rule_expiry_condition"]
    anchor = RULE_EXPIRY.get(condition, ("specific", 0))[0]
    fitting = "invoice_date" if kind == EARLY_PAYMENT_DISCOUNT else "due_date"
    if anchor not in (fitting, "specific"):
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "An early payment discount ends a number of days after the issue date, an automatic "
            "cancellation a number of days after the due date (or either on a specific date).",
            field=f"{where}/rule_expiry_terms/rule_expiry_condition",
            value=condition,
        )
    stored: dict[str, Any] = {
        "conditional_rule_type": kind,
        "rule_expiry_terms": {"rule_expiry_condition": condition},
    }
    if anchor == "specific":
        field = f"{where}/rule_expiry_terms/condition_rule_end_date"
        ends = parse_date(terms.get("condition_rule_end_date"), field, "End date is invalid.")
        if ends is None:
            raise invalid_request(
                "MISSING_REQUIRED_PARAMETER",
                "A rule with SPECIFIC_DATE needs its condition_rule_end_date.",
                field=field,
            )
        issued = date.fromisoformat(doc["detail"]["invoice_date"])
        if ends < max(issued, today(call)):
            raise unprocessable(
                "INVALID_RULE_END_DATE",
                "The rule's end date must be on or after the invoice date and not in the past.",
                field=field,
                value=ends.isoformat(),
            )
        stored["rule_expiry_terms"]["condition_rule_end_date"] = ends.isoformat()
    elif anchor == "due_date" and due_date(doc) is None:
        raise unprocessable(
            "DUE_DATE_REQUIRED",
            "The invoice needs a due date for a rule relative to it.",
            field=f"{where}/rule_expiry_terms/rule_expiry_condition",
            value=condition,
        )
    if kind == EARLY_PAYMENT_DISCOUNT:
        currency = doc["detail"]["currency_code"]
        stored.update(_check_discount(rule, where, currency, totals_of(doc).total))
    stored["conditional_rule_id"] = _rule_id(call)
    stored["create_time"] = stored["update_time"] = iso(call.now)
    return stored


def shown(doc: dict[str, Any], rule: dict[str, Any]) -> dict[str, Any]:
    """A stored rule as PayPal shows it, its end date worked out from the invoice."""
    rule = copy.deepcopy(rule)
    ends = rule_end_date(doc, rule)
    if ends is not None:
        rule["rule_expiry_terms"]["condition_rule_end_date"] = ends.isoformat()
    return rule


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/conditional-rules",
    f"{SPEC}:invoices.conditional-rules.create",
    idempotency_ttl=KEY_TTL,
)
def create_rules(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    if status not in OPEN:
        raise unprocessable(
            "CANNOT_ADD_CONDITIONAL_RULES",
            "Conditional rules can only be added to an invoice that is not yet paid or cancelled.",
            value=status,
        )
    doc = copy.deepcopy(row.data)
    rules = call.body.get("rules") or []
    if not rules:
        raise invalid_request(
            "MISSING_REQUIRED_PARAMETER", "Give at least one rule.", field="/rules"
        )
    seen: set[str] = set()
    added = []
    for index, rule in enumerate(rules):
        kind = rule["conditional_rule_type"]
        if kind in seen:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE",
                "An invoice has at most one rule of each type.",
                field=f"/rules/{index}/conditional_rule_type",
                value=kind,
            )
        seen.add(kind)
        added.append(_checked(call, doc, rule, f"/rules/{index}"))
    kept = [
        r for r in doc.get("_conditional_rules") or [] if r["conditional_rule_type"] not in seen
    ]
    doc["_conditional_rules"] = kept + added
    save(
        call,
        tx,
        invoice_id,
        doc,
        row.status,
        "INVOICING.INVOICE.UPDATED",
        "Conditional rules were added to an invoice.",
    )
    return Reply({"rules": [shown(doc, rule) for rule in doc["_conditional_rules"]]}, 201)


def cancel_due(call: Call, tx: Tx, now: datetime) -> list[dict[str, Any]]:
    """Cancel this merchant's unpaid invoices whose AUTO_CANCEL date the clock has reached."""
    until = now.astimezone(UTC).date()
    cancelled: list[dict[str, Any]] = []
    for row in tx.find(INVOICE, statuses=["SENT", "UNPAID", "SCHEDULED"], newest_first=False):
        rule = next(
            (
                r
                for r in row.data.get("_conditional_rules") or []
                if r["conditional_rule_type"] == AUTO_CANCEL
            ),
            None,
        )
        takes_effect = None if rule is None else rule_end_date(row.data, rule)
        if takes_effect is None or takes_effect > until:
            continue
        locked = tx.get(INVOICE, row.id, lock=True)
        if locked is None or current_status(locked, until) not in CANCELLABLE:
            continue
        at = replace(call, now=max(datetime.combine(takes_effect, time.min, UTC), row.updated_at))
        doc = copy.deepcopy(locked.data)
        doc["detail"]["metadata"]["cancel_time"] = iso(at.now)
        doc["detail"]["metadata"]["cancelled_by"] = merchant_email(at)
        save(
            at,
            tx,
            row.id,
            doc,
            "CANCELLED",
            "INVOICING.INVOICE.CANCELLED",
            "An unpaid invoice was cancelled automatically.",
        )
        cancelled.append({"invoice_id": row.id, "cancel_date": takes_effect.isoformat()})
    return cancelled
