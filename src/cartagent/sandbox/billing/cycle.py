"""Billing plans' money rules and the subscription billing cycle.

A subscription bills one cycle at each ``next_billing_time``: trial cycles first, then the
regular cycle, each for its ``total_cycles`` (0 = until cancelled). Periods are counted from an
anchor per cycle so month ends do not drift (Jan 31 → Feb 28 → Mar 31). Every charge settles
as a capture (``T0002``) under the subscription; ``run_due`` bills whatever the sandbox clock
has made due.
"""

from __future__ import annotations

import calendar
import copy
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from ..amounts import money, round_money
from ..api import Call
from ..clock import iso, parse_iso
from ..errors import not_found, unprocessable
from ..payments.settlement import CAPTURE, create_capture
from ..store import Row, Tx
from ..webhooks.events import emit
from .plans import PLAN, cycle_subtotal, plan_currency

SUBSCRIPTION = "subscription"
# One row per subscription payment: what ``/transactions`` lists (the capture holds the money).
SALE = "subscription_sale"
SUBSCRIPTION_PAYMENT = "T0002"
MAX_CHARGES_PER_RUN = 5000


# plans seen through a subscription ------------------------------------------------------------
def effective_plan(plan: dict[str, Any], override: dict[str, Any] | None) -> dict[str, Any]:
    """The plan a subscription bills by: the plan with the subscription's overrides applied."""
    merged = copy.deepcopy(plan)
    if not override:
        return merged
    for change in override.get("billing_cycles", []):
        for cycle in merged["billing_cycles"]:
            if cycle["sequence"] == change["sequence"]:
                if "pricing_scheme" in change:
                    cycle["pricing_scheme"] = copy.deepcopy(change["pricing_scheme"])
                if "total_cycles" in change:
                    cycle["total_cycles"] = change["total_cycles"]
    for key in ("payment_preferences", "taxes"):
        if key in override:
            merged.setdefault(key, {}).update(copy.deepcopy(override[key]))
    return merged


# time ----------------------------------------------------------------------------------------
def add_interval(moment: datetime, unit: str, count: int) -> datetime:
    """``moment`` plus ``count`` units; months and years clamp to the month's last day."""
    if unit == "DAY":
        return moment + timedelta(days=count)
    if unit == "WEEK":
        return moment + timedelta(weeks=count)
    months = count * (12 if unit == "YEAR" else 1)
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


# the billing cycle ---------------------------------------------------------------------------
def initial_executions(plan: dict[str, Any]) -> list[dict[str, Any]]:
    executions = []
    for cycle in sorted(plan["billing_cycles"], key=lambda c: c["sequence"]):
        total = cycle.get("total_cycles", 1)
        execution: dict[str, Any] = {
            "tenure_type": cycle["tenure_type"],
            "sequence": cycle["sequence"],
            "cycles_completed": 0,
            "cycles_remaining": total,
            "current_pricing_scheme_version": (cycle.get("pricing_scheme") or {}).get("version", 1),
            "total_cycles": total,
        }
        executions.append(execution)
    return executions


def _current(executions: list[dict[str, Any]]) -> dict[str, Any] | None:
    for execution in executions:
        total = execution["total_cycles"]
        if total == 0 or execution["cycles_completed"] < total:
            return execution
    return None


def _cycle(plan: dict[str, Any], sequence: int) -> dict[str, Any]:
    return next(c for c in plan["billing_cycles"] if c["sequence"] == sequence)


def _tax(plan: dict[str, Any], subtotal: Decimal, currency: str) -> tuple[Decimal, Decimal]:
    """(tax amount, amount to add to the subtotal) under the plan's taxes."""
    taxes = plan.get("taxes")
    if not taxes:
        return Decimal(0), Decimal(0)
    rate = Decimal(taxes["percentage"]) / 100
    if taxes.get("inclusive", True):
        return round_money(subtotal - subtotal / (1 + rate), currency), Decimal(0)
    tax = round_money(subtotal * rate, currency)
    return tax, tax


def subscriber_name(doc: dict[str, Any]) -> dict[str, Any] | None:
    name = (doc.get("subscriber") or {}).get("name")
    return dict(name) if name else None


def settle(
    call: Call,
    tx: Tx,
    doc: dict[str, Any],
    *,
    gross: Decimal,
    currency: str,
    tax: Decimal = Decimal(0),
    shipping: Decimal = Decimal(0),
    note: str | None = None,
) -> dict[str, Any]:
    """Charge the subscriber ``gross`` now: a capture, its ledger row and the sale events."""
    capture = create_capture(
        call,
        tx,
        parent_id=doc["id"],
        amount=gross,
        currency=currency,
        order_id=None,
        custom_id=doc.get("custom_id"),
        event_code=SUBSCRIPTION_PAYMENT,
    )
    fee = Decimal(capture["seller_receivable_breakdown"]["paypal_fee"]["value"])
    breakdown: dict[str, Any] = {
        "gross_amount": money(gross, currency),
        "fee_amount": money(fee, currency),
        "net_amount": money(gross - fee, currency),
    }
    if shipping:
        breakdown["shipping_amount"] = money(shipping, currency)
    if tax:
        breakdown["tax_amount"] = money(tax, currency)
    sale: dict[str, Any] = {
        "id": capture["id"],
        "status": "COMPLETED",
        "amount_with_breakdown": breakdown,
        "time": iso(call.now),
    }
    name = subscriber_name(doc)
    if name:
        sale["payer_name"] = name
    email = (doc.get("subscriber") or {}).get("email_address")
    if email:
        sale["payer_email"] = email
    # Payments made in one instant (setup fee + first cycle) keep their order by this number.
    stored = {**sale, "_seq": tx.next_number(f"subscription-sales:{doc['id']}")}
    tx.insert(SALE, capture["id"], stored, now=call.now, status="COMPLETED", parent_id=doc["id"])
    emit(
        call, tx, "PAYMENT.SALE.COMPLETED", _sale_event(call, doc, sale, note), "Payment completed"
    )
    return sale


def _sale_event(
    call: Call, doc: dict[str, Any], sale: dict[str, Any], note: str | None
) -> dict[str, Any]:
    breakdown = sale["amount_with_breakdown"]
    gross = breakdown["gross_amount"]
    resource: dict[str, Any] = {
        "id": sale["id"],
        "state": "completed",
        "amount": {
            "total": gross["value"],
            "currency": gross["currency_code"],
            "details": {"subtotal": gross["value"]},
        },
        "payment_mode": "INSTANT_TRANSFER",
        "protection_eligibility": "ELIGIBLE",
        "transaction_fee": {
            "value": breakdown["fee_amount"]["value"],
            "currency": gross["currency_code"],
        },
        "billing_agreement_id": doc["id"],
        "create_time": sale["time"],
        "update_time": sale["time"],
        "links": [
            call.link(f"/v1/payments/sale/{sale['id']}", "self"),
            call.link(f"/v1/payments/sale/{sale['id']}/refund", "refund", "POST"),
            call.link(f"/v1/billing/subscriptions/{doc['id']}", "up"),
        ],
    }
    if doc.get("custom_id"):
        resource["custom"] = doc["custom_id"]
    if note:
        resource["soft_descriptor"] = note[:22]
    return resource


def _anchor(doc: dict[str, Any], execution: dict[str, Any]) -> tuple[datetime, int]:
    anchor = doc["_anchors"][str(execution["sequence"])]
    return parse_iso(anchor["time"]), int(anchor["base"])


def _set_anchor(doc: dict[str, Any], sequence: int, moment: datetime, base: int) -> None:
    doc.setdefault("_anchors", {})[str(sequence)] = {"time": iso(moment), "base": base}


def _next_time(doc: dict[str, Any], plan: dict[str, Any], execution: dict[str, Any]) -> datetime:
    frequency = _cycle(plan, execution["sequence"])["frequency"]
    anchor, base = _anchor(doc, execution)
    periods = execution["cycles_completed"] - base
    return add_interval(
        anchor, frequency["interval_unit"], frequency.get("interval_count", 1) * periods
    )


def start_billing(doc: dict[str, Any], plan: dict[str, Any], first: datetime) -> None:
    """Set up a just-activated subscription's billing_info; the first cycle is due at ``first``."""
    executions = initial_executions(plan)
    currency = plan_currency(plan)
    doc["billing_info"] = {
        "outstanding_balance": money(Decimal(0), currency),
        "cycle_executions": executions,
        "next_billing_time": iso(first),
        "failed_payments_count": 0,
    }
    doc["_anchors"] = {}
    _set_anchor(doc, executions[0]["sequence"], first, 0)


def bill(
    call: Call, tx: Tx, doc: dict[str, Any], plan: dict[str, Any], now: datetime
) -> tuple[str, list[dict[str, Any]]]:
    """Bill every cycle of ``doc`` due by ``now``; return the new status and the charges made.

    ``doc`` (an ACTIVE subscription's document) is updated in place; the caller stores it.
    """
    status = "ACTIVE"
    charges: list[dict[str, Any]] = []
    info = doc["billing_info"]
    currency = plan_currency(plan)
    quantity = Decimal(doc.get("quantity", "1"))
    shipping = Decimal((doc.get("shipping_amount") or {}).get("value", "0"))
    preferences = plan.get("payment_preferences", {})
    while status == "ACTIVE" and len(charges) < MAX_CHARGES_PER_RUN:
        due = parse_iso(info["next_billing_time"]) if "next_billing_time" in info else None
        if due is None or due > now:
            break
        at = replace(call, now=due)
        execution = _current(info["cycle_executions"])
        if execution is None:
            status = "EXPIRED"
            info.pop("next_billing_time", None)
            doc["status_update_time"] = iso(due)
            break
        cycle = _cycle(plan, execution["sequence"])
        subtotal = round_money(cycle_subtotal(cycle.get("pricing_scheme"), quantity), currency)
        tax, extra_tax = _tax(plan, subtotal, currency)
        cycle_shipping = shipping if subtotal else Decimal(0)
        cycle_gross = subtotal + extra_tax + cycle_shipping
        outstanding = Decimal(info["outstanding_balance"]["value"])
        auto_bill = bool(preferences.get("auto_bill_outstanding", True))
        gross = cycle_gross + (outstanding if auto_bill and cycle_gross else Decimal(0))
        charge: dict[str, Any] = {
            "subscription_id": doc["id"],
            "tenure_type": execution["tenure_type"],
            "sequence": execution["sequence"],
            "cycle": execution["cycles_completed"] + 1,
            "time": iso(due),
            "amount": money(gross, currency),
        }
        if gross and doc.get("_decline_payments"):
            info["outstanding_balance"] = money(outstanding + cycle_gross, currency)
            info["failed_payments_count"] += 1
            info["last_failed_payment"] = {
                "amount": money(gross, currency),
                "time": iso(due),
                "reason_code": "PAYMENT_DENIED",
            }
            charge["status"] = "FAILED"
            threshold = preferences.get("payment_failure_threshold", 0)
            if threshold and info["failed_payments_count"] >= threshold:
                status = "SUSPENDED"
                doc["status_update_time"] = iso(due)
            emit(
                at,
                tx,
                "BILLING.SUBSCRIPTION.PAYMENT.FAILED",
                public(at, doc, status),
                "Subscription payment failed",
            )
        elif gross:
            sale = settle(
                at, tx, doc, gross=gross, currency=currency, tax=tax, shipping=cycle_shipping
            )
            if auto_bill:
                info["outstanding_balance"] = money(Decimal(0), currency)
            info["last_payment"] = {"amount": money(gross, currency), "time": iso(due)}
            charge["status"] = "COMPLETED"
            charge["transaction_id"] = sale["id"]
        else:
            charge["status"] = "FREE"
        charges.append(charge)
        _advance(doc, plan, execution)
    return status, charges


def _advance(doc: dict[str, Any], plan: dict[str, Any], execution: dict[str, Any]) -> None:
    """Count one completed cycle of ``execution`` and move ``next_billing_time`` on."""
    info = doc["billing_info"]
    execution["cycles_completed"] += 1
    total = execution["total_cycles"]
    if total:
        execution["cycles_remaining"] = total - execution["cycles_completed"]
    following = _next_time(doc, plan, execution)
    info["next_billing_time"] = iso(following)
    upcoming = _current(info["cycle_executions"])
    if upcoming is not None and upcoming is not execution:
        _set_anchor(doc, upcoming["sequence"], following, 0)
    if upcoming is None:
        info["final_payment_time"] = info.get("last_payment", {}).get("time", iso(following))


def skip_missed(doc: dict[str, Any], plan: dict[str, Any], now: datetime) -> None:
    """Resume billing after a suspension: periods missed while suspended are not billed."""
    info = doc["billing_info"]
    execution = _current(info["cycle_executions"])
    if execution is None or "next_billing_time" not in info:
        return
    due = parse_iso(info["next_billing_time"])
    if due > now:
        return
    frequency = _cycle(plan, execution["sequence"])["frequency"]
    steps = 0
    while due <= now and steps < 100000:
        due = add_interval(due, frequency["interval_unit"], frequency.get("interval_count", 1))
        steps += 1
    _set_anchor(doc, execution["sequence"], due, execution["cycles_completed"])
    info["next_billing_time"] = iso(due)


def public(call: Call, doc: dict[str, Any], status: str) -> dict[str, Any]:
    """A subscription document as the API shows it (without the sandbox's bookkeeping)."""
    shown = {k: copy.deepcopy(v) for k, v in doc.items() if not k.startswith("_")}
    shown["status"] = status
    shown["links"] = links(call, doc["id"], status, doc.get("_ba_token"))
    return shown


def links(call: Call, sub_id: str, status: str, token: str | None) -> list[dict[str, str]]:
    path = f"/v1/billing/subscriptions/{sub_id}"
    found = []
    if status == "APPROVAL_PENDING" and token:
        found.append(call.link(f"/webapps/billing/subscriptions?ba_token={token}", "approve"))
    if status in ("APPROVAL_PENDING", "ACTIVE", "SUSPENDED"):
        found.append(call.link(path, "edit", "PATCH"))
    found.append(call.link(path, "self"))
    if status in ("ACTIVE", "SUSPENDED"):
        found.append(call.link(f"{path}/cancel", "cancel", "POST"))
        found.append(call.link(f"{path}/capture", "capture", "POST"))
    if status == "ACTIVE":
        found.append(call.link(f"{path}/suspend", "suspend", "POST"))
    if status == "SUSPENDED":
        found.append(call.link(f"{path}/activate", "activate", "POST"))
    return found


def run_due(call: Call, tx: Tx, now: datetime) -> dict[str, list[dict[str, Any]]]:
    """Bill every ACTIVE subscription of this merchant whose next billing time has come."""
    charges: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for row in tx.find(SUBSCRIPTION, statuses=["ACTIVE"], newest_first=False):
        due = row.data.get("billing_info", {}).get("next_billing_time")
        if due is None or parse_iso(due) > now:
            continue
        locked = tx.get(SUBSCRIPTION, row.id, lock=True)
        if locked is None or locked.status != "ACTIVE":
            continue
        made, status = bill_row(call, tx, locked, now)
        charges += made
        if status != "ACTIVE":
            changed.append({"subscription_id": row.id, "status": status})
    return {"charges": charges, "status_changes": changed}


def bill_row(call: Call, tx: Tx, row: Row, now: datetime) -> tuple[list[dict[str, Any]], str]:
    """Bill one stored subscription up to ``now`` and store the result."""
    doc = copy.deepcopy(row.data)
    plan = plan_for(tx, doc)
    status, charges = bill(call, tx, doc, plan, now)
    if charges or status != row.status:
        moment = parse_iso(charges[-1]["time"]) if charges else now
        doc["update_time"] = iso(moment)
        tx.update(SUBSCRIPTION, row.id, doc, now=call.now, status=status)
    if status != row.status:
        event = "EXPIRED" if status == "EXPIRED" else "SUSPENDED"
        at = replace(call, now=parse_iso(doc["status_update_time"]))
        emit(
            at,
            tx,
            f"BILLING.SUBSCRIPTION.{event}",
            public(at, doc, status),
            f"Subscription {event.lower()}",
        )
    return charges, status


def plan_for(tx: Tx, doc: dict[str, Any]) -> dict[str, Any]:
    row = tx.get(PLAN, doc["plan_id"])
    if row is None:  # plans cannot be deleted, so only a foreign plan id gets here
        raise not_found(doc["plan_id"])
    return effective_plan(row.data, doc.get("_override"))


def sales(tx: Tx, sub_id: str) -> list[dict[str, Any]]:
    """The subscription's payments, each with its capture's current status."""
    found = []
    for row in sorted(tx.children(SALE, sub_id), key=lambda r: int(r.data.get("_seq", 0))):
        sale = {k: v for k, v in row.data.items() if k != "_seq"}
        capture = tx.get(CAPTURE, row.id)
        if capture is not None and capture.status:
            sale["status"] = capture.status
        found.append(sale)
    return found


# approval ------------------------------------------------------------------------------------
def approve(
    call: Call, tx: Tx, row: Row, payer: dict[str, Any], *, decline_payments: bool = False
) -> str:
    """The subscriber approves: a pending subscription starts billing, a revision takes effect.

    Returns the subscription's new status. ``decline_payments`` makes every automatic charge of
    this subscription fail (the sandbox's way to exercise failed payments).
    """
    doc = copy.deepcopy(row.data)
    if row.status in ("ACTIVE", "SUSPENDED") and "_revision" in doc:
        _apply_revision(call, tx, doc)
        doc["update_time"] = iso(call.now)
        tx.update(SUBSCRIPTION, row.id, doc, now=call.now, status=row.status)
        emit(
            call,
            tx,
            "BILLING.SUBSCRIPTION.UPDATED",
            public(call, doc, row.status),
            "Subscription updated",
        )
        return row.status
    if row.status != "APPROVAL_PENDING":
        raise unprocessable(
            "SUBSCRIPTION_STATUS_INVALID",
            "Invalid subscription status for approve action; subscription status should be "
            "approval pending.",
        )
    plan = plan_for(tx, doc)
    subscriber = doc.setdefault("subscriber", {})
    subscriber.setdefault("name", payer["name"])
    subscriber.setdefault("email_address", payer["email_address"])
    subscriber["payer_id"] = payer["payer_id"]
    doc["_decline_payments"] = decline_payments
    doc["_ba_token"] = None
    first = max(parse_iso(doc["start_time"]), call.now)
    start_billing(doc, plan, first)
    now = iso(call.now)
    doc["status_update_time"] = doc["update_time"] = now
    status = "ACTIVE"
    currency = plan_currency(plan)
    preferences = plan.get("payment_preferences", {})
    fee = Decimal((preferences.get("setup_fee") or {}).get("value", "0"))
    info = doc["billing_info"]
    if fee and decline_payments:
        info["failed_payments_count"] = 1
        info["last_failed_payment"] = {
            "amount": money(fee, currency),
            "time": now,
            "reason_code": "PAYMENT_DENIED",
        }
        if preferences.get("setup_fee_failure_action", "CANCEL") == "CANCEL":
            status = "CANCELLED"
            doc["status_change_note"] = "Setup fee payment failed"
            info.pop("next_billing_time", None)
        else:
            info["outstanding_balance"] = money(fee, currency)
    elif fee:
        settle(call, tx, doc, gross=fee, currency=currency, note="Setup fee")
        info["last_payment"] = {"amount": money(fee, currency), "time": now}
    if status == "CANCELLED":
        tx.update(SUBSCRIPTION, row.id, doc, now=call.now, status=status)
        emit(call, tx, "BILLING.SUBSCRIPTION.CANCELLED", public(call, doc, status), "")
        return status
    tx.update(SUBSCRIPTION, row.id, doc, now=call.now, status=status)
    emit(
        call,
        tx,
        "BILLING.SUBSCRIPTION.ACTIVATED",
        public(call, doc, status),
        "Subscription activated",
    )
    stored = tx.get(SUBSCRIPTION, row.id)
    assert stored is not None
    return bill_row(call, tx, stored, call.now)[1]


def _apply_revision(call: Call, tx: Tx, doc: dict[str, Any]) -> None:
    revision = doc.pop("_revision")
    if "plan" in revision:
        doc["_override"] = revision["plan"]
        doc["plan_overridden"] = True
    new_plan = revision.get("plan_id")
    if new_plan and new_plan != doc["plan_id"]:
        doc["plan_id"] = new_plan
        if "plan" not in revision:
            doc.pop("_override", None)
            doc["plan_overridden"] = False
        plan = plan_for(tx, doc)
        info = doc["billing_info"]
        executions = initial_executions(plan)
        # A plan switch takes effect at the next billing time, without the new plan's trials.
        for execution in executions[:-1]:
            execution["cycles_completed"] = execution["total_cycles"]
            execution["cycles_remaining"] = 0
        info["cycle_executions"] = executions
        info.pop("final_payment_time", None)
        start = info.get("next_billing_time", iso(call.now))
        info["next_billing_time"] = start
        doc["_anchors"] = {}
        _set_anchor(doc, executions[-1]["sequence"], parse_iso(start), 0)
    for key in ("quantity", "shipping_amount"):
        if key in revision:
            doc[key] = revision[key]
    if "shipping_address" in revision:
        doc.setdefault("subscriber", {})["shipping_address"] = revision["shipping_address"]
