"""Automatic invoice reminders: a merchant's BEFORE_DUE and AFTER_DUE configurations.

Shapes follow PayPal's public REST reference (developer.paypal.com/api/invoicing/v2:
``POST /v2/invoicing/setup-reminders``, ``PUT /v2/invoicing/reminders/{id}`` with
``Prefer: return=representation``, the ``invoice_auto_reminder_config_setup`` and
``invoice_reminder_configurations`` definitions) and the toolkit's
``SetupInvoiceAutoReminderParameters`` / ``UpdateInvoiceAutoReminderParameters``, which send the
same requests (the issue that asked for this named PATCH for the update; PayPal documents and
its toolkit sends PUT, so PUT is served). ``POST /v2/invoicing/invoices/{id}/cancel-reminders``
follows the toolkit's ``cancel_invoice_auto_reminder``. The request schemas are in
``specs/invoicing_v2_automation.json``, written for the sandbox.

Setting up creates both configurations once per merchant: those in the request ACTIVE, a missing
type with PayPal's defaults (BEFORE_DUE: 2 days before, once; AFTER_DUE: every 2 days, twice)
INACTIVE; a second setup is refused (update instead). When the sandbox clock moves on,
:func:`send_due` sends every reminder that has come due for an unpaid invoice with a due date:
BEFORE_DUE ``interval`` days before the due date (once), AFTER_DUE every ``interval`` days after
it, ``repetition`` times; never for a date before the invoice was issued or the configuration
was made active, nor on or after an automatic cancellation. PayPal documents no webhook event
for a reminder, so each one is an ``INVOICING.INVOICE.UPDATED`` event (summary "A payment
reminder was sent.") dated on its day, and the invoice keeps the reminders it was sent.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fastapi import APIRouter

from ..api import Call, Reply, operation, require
from ..clock import iso, parse_iso
from ..errors import invalid_request, unprocessable
from ..store import Row, Tx
from ..webhooks.events import emit
from .document import (
    BASE,
    INVOICE,
    current_status,
    due_date,
    render,
    rule_end_date,
    save,
    today,
)

router = APIRouter()

SPEC = "invoicing_v2_automation"
REMINDER = "reminder_config"
KEY_TTL = timedelta(hours=72)
TYPES = ("BEFORE_DUE", "AFTER_DUE")
DEFAULTS = {"BEFORE_DUE": (2, 1), "AFTER_DUE": (2, 2)}  # (interval days, repetition)
REMINDABLE = ("SENT", "UNPAID", "PARTIALLY_PAID")
FINISHED = (
    "PAID",
    "MARKED_AS_PAID",
    "CANCELLED",
    "REFUNDED",
    "PARTIALLY_REFUNDED",
    "MARKED_AS_REFUNDED",
)


def _configuration(call: Call, given: dict[str, Any], where: str, status: str) -> dict[str, Any]:
    if given["type"] == "BEFORE_DUE" and given["repetition"] != 1:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "A BEFORE_DUE reminder is sent once: its repetition is 1.",
            field=f"{where}/repetition",
            value=str(given["repetition"]),
        )
    notification = given.get("notification") or {}
    return {
        "type": given["type"],
        "status": status,
        "interval": {"unit": "DAY", "value": given["interval"]["value"]},
        "repetition": given["repetition"],
        "notification": {"send_to_invoicer": bool(notification.get("send_to_invoicer", False))},
    }


def _show(call: Call, config_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    shown = {k: copy.deepcopy(v) for k, v in doc.items() if not k.startswith("_")}
    path = f"/v2/invoicing/reminders/{config_id}"
    return {"id": config_id, **shown, "links": [call.link(path, "replace", "PUT")]}


def _stamp(call: Call, doc: dict[str, Any], old: dict[str, Any] | None) -> None:
    created = iso(call.now) if old is None else old["metadata"]["created_time"]
    doc["metadata"] = {"created_time": created, "last_updated_time": iso(call.now)}
    was_active = old is not None and old["status"] == "ACTIVE"
    if doc["status"] == "ACTIVE":
        doc["_active_since"] = old["_active_since"] if was_active and old else iso(call.now)


@operation(
    router,
    "POST",
    "/v2/invoicing/setup-reminders",
    f"{SPEC}:reminders.setup",
    idempotency_ttl=KEY_TTL,
    body_required=False,
)
def setup_reminders(call: Call, tx: Tx) -> Reply:
    if tx.find(REMINDER, limit=1):
        raise unprocessable(
            "REMINDERS_ALREADY_SET_UP",
            "Auto reminder configurations already exist for this account; update them instead.",
        )
    given = (call.body or {}).get("configurations") or []
    made: dict[str, dict[str, Any]] = {}
    for index, config in enumerate(given):
        if config["type"] in made:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE",
                "Give at most one configuration of each type.",
                field=f"/configurations/{index}/type",
                value=config["type"],
            )
        made[config["type"]] = _configuration(call, config, f"/configurations/{index}", "ACTIVE")
    for kind in TYPES:
        if kind not in made:
            days, repetition = DEFAULTS[kind]
            default = {"type": kind, "interval": {"value": days}, "repetition": repetition}
            made[kind] = _configuration(call, default, "/configurations", "INACTIVE")
    shown = []
    for doc in made.values():
        _stamp(call, doc, None)
        config_id = "RC-" + call.sandbox.ids.paypal17()
        tx.insert(REMINDER, config_id, doc, now=call.now, status=doc["status"])
        shown.append(_show(call, config_id, doc))
    return Reply({"configurations": shown}, 201)


@operation(
    router,
    "PUT",
    "/v2/invoicing/reminders/{reminder_configuration_id}",
    f"{SPEC}:reminders.update",
)
def update_reminder(call: Call, tx: Tx, reminder_configuration_id: str) -> Reply:
    row = require(tx, REMINDER, reminder_configuration_id, lock=True)
    if call.body["type"] != row.data["type"]:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            f"This configuration is the {row.data['type']} one; its type cannot change.",
            field="/type",
            value=call.body["type"],
        )
    doc = _configuration(call, call.body, "", call.body.get("status", row.data["status"]))
    _stamp(call, doc, row.data)
    tx.update(REMINDER, row.id, doc, now=call.now, status=doc["status"])
    if call.wants_representation:
        return Reply(_show(call, row.id, doc))
    return Reply(None, 204)


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/cancel-reminders",
    f"{SPEC}:invoices.cancel-reminders",
    body_required=False,
)
def cancel_reminders(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    if status in FINISHED:
        raise unprocessable(
            "CANNOT_CANCEL_REMINDERS",
            "Automatic reminders can only be cancelled for an invoice that is not yet paid or "
            "cancelled.",
            value=status,
        )
    if "_reminders_cancelled" not in row.data:
        doc = copy.deepcopy(row.data)
        doc["_reminders_cancelled"] = iso(call.now)
        save(call, tx, invoice_id, doc, row.status)
    return Reply(None, 204)


# the clock's work ------------------------------------------------------------------------------
def _dates(config: dict[str, Any], due: date) -> list[tuple[str, date]]:
    """Each reminder a configuration sends for an invoice due on ``due``: (key, day)."""
    days = int(config["interval"]["value"])
    if config["type"] == "BEFORE_DUE":
        return [("BEFORE_DUE:1", due - timedelta(days=days))]
    return [
        (f"AFTER_DUE:{n}", due + timedelta(days=days * n))
        for n in range(1, int(config["repetition"]) + 1)
    ]


def _auto_cancel_date(doc: dict[str, Any]) -> date | None:
    for rule in doc.get("_conditional_rules") or []:
        if rule["conditional_rule_type"] == "AUTO_CANCEL":
            return rule_end_date(doc, rule)
    return None


def _pending(row: Row, configs: list[Row], until: date) -> list[tuple[str, date]]:
    doc = row.data
    due = due_date(doc)
    if due is None or "_reminders_cancelled" in doc:
        return []
    issued = date.fromisoformat(doc["detail"]["invoice_date"])
    sent = {entry["key"] for entry in doc.get("_auto_reminders") or []}
    stop = _auto_cancel_date(doc)
    found = []
    for config in configs:
        since = parse_iso(config.data["_active_since"]).date()
        for key, day in _dates(config.data, due):
            if key in sent or not max(issued, since) <= day <= until:
                continue
            if stop is not None and day >= stop:
                continue
            found.append((key, day))
    return sorted(found, key=lambda pair: pair[1])


def send_due(call: Call, tx: Tx, now: datetime) -> list[dict[str, Any]]:
    """Send every automatic reminder that has come due for this merchant's unpaid invoices."""
    configs = tx.find(REMINDER, statuses=["ACTIVE"], newest_first=False)
    if not configs:
        return []
    until = now.astimezone(UTC).date()
    sent: list[dict[str, Any]] = []
    statuses = [*REMINDABLE, "SCHEDULED"]
    for row in tx.find(INVOICE, statuses=statuses, newest_first=False):
        if current_status(row, until) not in REMINDABLE or not _pending(row, configs, until):
            continue
        locked = tx.get(INVOICE, row.id, lock=True)
        if locked is None:
            continue
        doc = copy.deepcopy(locked.data)
        for key, day in _pending(locked, configs, until):
            at = replace(call, now=max(datetime.combine(day, time.min, UTC), locked.updated_at))
            doc.setdefault("_auto_reminders", []).append({"key": key, "date": day.isoformat()})
            shown = render(at, row.id, current_status(locked, day), doc)
            emit(at, tx, "INVOICING.INVOICE.UPDATED", shown, "A payment reminder was sent.")
            kind = key.split(":")[0]
            sent.append({"invoice_id": row.id, "type": kind, "reminder_date": day.isoformat()})
        tx.update(INVOICE, row.id, doc, now=call.now, status=locked.status)
    return sent
