"""Billing plans v1: create, list, show, update, activate, deactivate and reprice plans.

A plan belongs to a product of the same merchant and is CREATED, ACTIVE or INACTIVE; only an
ACTIVE plan takes new subscriptions. Its billing cycles follow PayPal's rules: sequences from
1, at most two trials before exactly one regular cycle, one currency throughout.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter

from ..amounts import CURRENCIES, MAX_VALUE
from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import invalid_request, unprocessable
from ..store import Row, Tx
from ..webhooks.events import emit
from .products import PRODUCT, page_of

router = APIRouter()

PLAN = "plan"
SPEC = "billing_subscriptions_v1"
KEY_TTL = timedelta(hours=72)
PREFERENCE_DEFAULTS: dict[str, Any] = {
    "auto_bill_outstanding": True,
    "setup_fee_failure_action": "CANCEL",
    "payment_failure_threshold": 0,
}


# pricing rules -------------------------------------------------------------------------------
def parse_price(obj: Any, field: str, currency: str | None = None) -> tuple[Decimal, str]:
    """A ``money`` object of a plan or subscription, checked against PayPal's billing rules."""
    if not isinstance(obj, dict):
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field=field)
    code = obj.get("currency_code")
    if currency is not None and code != currency:
        raise unprocessable(
            "CURRENCY_MISMATCH",
            "All currency codes in the request should be of similar value.",
            field=f"{field}/currency_code",
            value=str(code),
        )
    if code not in CURRENCIES:
        raise unprocessable(
            "CURRENCY_NOT_SUPPORTED_FOR_RECEIVER",
            "This currency cannot be accepted for this recipient\u2019s account.",
            field=f"{field}/currency_code",
            value=str(code),
        )
    assert isinstance(code, str)
    raw = obj.get("value")
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=f"{field}/value", value=str(raw)
        ) from None
    exponent = value.as_tuple().exponent
    too_precise = isinstance(exponent, int) and -exponent > CURRENCIES[code]
    if not value.is_finite() or value < 0 or value > MAX_VALUE or too_precise:
        raise invalid_request("INVALID_PARAMETER_VALUE", field=f"{field}/value", value=str(raw))
    return value, code


def parse_quantity(raw: str, field: str) -> Decimal:
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field=field, value=raw) from None
    if value <= 0:
        raise invalid_request("INVALID_PARAMETER_VALUE", field=field, value=raw)
    return value


def check_pricing_scheme(
    scheme: dict[str, Any], field: str, tenure: str, currency: str | None
) -> str | None:
    """Validate one pricing scheme; return its currency (None for a free, priceless scheme)."""
    tiers = scheme.get("tiers")
    model = scheme.get("pricing_model")
    if "fixed_price" in scheme:
        if tiers or model:
            raise unprocessable(
                "FIXED_PRICE_NOT_SUPPORTED",
                "Fixed price is not supported for tiered pricing schemes.",
                field=f"{field}/fixed_price",
            )
        return parse_price(scheme["fixed_price"], f"{field}/fixed_price", currency)[1]
    if model is None and not tiers:
        return None
    if tenure == "TRIAL":
        raise unprocessable(
            "INVALID_PRICING_MODEL",
            "The specified pricing model is not supported for trial billing cycle.",
            field=f"{field}/pricing_model",
        )
    if model is None or not tiers:
        raise unprocessable(
            "MISSING_PRICING_SCHEME_TIERS",
            "Tier(s) are missing for some quantities.",
            field=f"{field}/tiers",
        )
    expected = Decimal(1)
    for index, tier in enumerate(tiers):
        where = f"{field}/tiers/{index}"
        amount, currency = parse_price(tier["amount"], f"{where}/amount", currency)
        if amount == 0:
            raise unprocessable(
                "INVALID_PRICING_TIER_AMOUNT", "Free tiers are not supported.", field=where
            )
        start = Decimal(tier["starting_quantity"])
        end = Decimal(tier["ending_quantity"]) if "ending_quantity" in tier else None
        if end is not None and start > end:
            raise unprocessable(
                "INVALID_PRICING_TIER_QUANTITY",
                "Tier starting quantity must be less than ending quantity.",
                field=where,
            )
        if start < expected:
            raise unprocessable(
                "OVERLAPPING_PRICING_SCHEME_TIERS",
                "The specified quantity overlaps with multiple pricing tiers.",
                field=where,
            )
        if start > expected or (end is None and index != len(tiers) - 1):
            raise unprocessable(
                "MISSING_PRICING_SCHEME_TIERS",
                "Tier(s) are missing for some quantities.",
                field=where,
            )
        expected = (end + 1) if end is not None else expected
    if "ending_quantity" in tiers[-1]:
        raise unprocessable(
            "MISSING_PRICING_SCHEME_TIERS",
            "Tier(s) are missing for some quantities.",
            field=f"{field}/tiers",
        )
    return currency


def check_cycles(cycles: list[dict[str, Any]], currency: str | None = None) -> str | None:
    """Check a plan's billing cycles by PayPal's rules; return the plan's currency."""
    ordered = sorted(cycles, key=lambda c: c["sequence"])
    if [c["sequence"] for c in ordered] != list(range(1, len(ordered) + 1)):
        raise unprocessable(
            "INVALID_BILLING_CYCLE_SEQUENCE",
            "Billing cycle sequence should start with `1` and be consecutive.",
            field="/billing_cycles",
        )
    tenures = [c["tenure_type"] for c in ordered]
    regular = tenures.count("REGULAR")
    if regular == 0:
        raise unprocessable(
            "MISSING_REGULAR_BILLING_CYCLE",
            "Plan should have at least one regular billing cycle.",
            field="/billing_cycles",
        )
    if regular > 1:
        raise unprocessable(
            "MULTIPLE_REGULAR_BILLING_CYCLES_NOT_SUPPORTED",
            "Only one regular billing cycle is allowed.",
            field="/billing_cycles",
        )
    if tenures[-1] != "REGULAR":
        raise unprocessable(
            "INVALID_BILLING_CYCLE_SEQUENCE",
            "Trial Billing cycle should precede regular billing cycle.",
            field="/billing_cycles",
        )
    if len(ordered) > 3:
        raise unprocessable(
            "MORE_THAN_TWO_TRIAL_BILLING_CYCLE_NOT_SUPPORTED",
            "Only two trial billing cycles are allowed.",
            field="/billing_cycles",
        )
    free_trials = 0
    for cycle in ordered:
        index = cycles.index(cycle)
        where = f"/billing_cycles/{index}"
        scheme = cycle.get("pricing_scheme")
        if cycle["tenure_type"] == "TRIAL":
            if cycle.get("total_cycles", 1) == 0:
                raise unprocessable(
                    "INVALID_TRIAL_BILLING_TOTAL_CYCLES",
                    "Total cycles for trial billing must be greater than '0'.",
                    field=f"{where}/total_cycles",
                )
        elif scheme is None:
            raise invalid_request("MISSING_REQUIRED_PARAMETER", field=f"{where}/pricing_scheme")
        found = check_pricing_scheme(
            scheme or {}, f"{where}/pricing_scheme", cycle["tenure_type"], currency
        )
        currency = currency or found
        if cycle["tenure_type"] == "TRIAL" and unit_price(scheme) == 0:
            free_trials += 1
    if free_trials > 1:
        raise unprocessable(
            "MULTIPLE_FREE_TRIAL_BILLING_CYCLES_NOT_SUPPORTED",
            "Only one free trial billing cycle is allowed.",
            field="/billing_cycles",
        )
    last = ordered[-1].get("pricing_scheme") or {}
    if "fixed_price" not in last and not last.get("tiers"):
        raise invalid_request(
            "MISSING_REQUIRED_PARAMETER",
            field=f"/billing_cycles/{cycles.index(ordered[-1])}/pricing_scheme/fixed_price",
        )
    return currency


def unit_price(scheme: dict[str, Any] | None) -> Decimal | None:
    """The fixed price of a scheme; 0 for a free one; None for a tiered one."""
    if not scheme or ("fixed_price" not in scheme and not scheme.get("tiers")):
        return Decimal(0)
    if "fixed_price" in scheme:
        return Decimal(scheme["fixed_price"]["value"])
    return None


def plan_currency(plan: dict[str, Any]) -> str:
    for cycle in plan["billing_cycles"]:
        scheme = cycle.get("pricing_scheme") or {}
        if "fixed_price" in scheme:
            return str(scheme["fixed_price"]["currency_code"])
        for tier in scheme.get("tiers", []):
            return str(tier["amount"]["currency_code"])
    fee = plan.get("payment_preferences", {}).get("setup_fee")
    return str(fee["currency_code"]) if fee else "USD"


def cycle_subtotal(scheme: dict[str, Any] | None, quantity: Decimal) -> Decimal:
    """Price of one cycle for ``quantity`` units (fixed, VOLUME or TIERED pricing)."""
    price = unit_price(scheme)
    if price is not None:
        return price * quantity
    assert scheme is not None
    tiers = scheme["tiers"]
    if scheme.get("pricing_model") == "VOLUME":
        for tier in tiers:
            end = Decimal(tier.get("ending_quantity", "Infinity"))
            if quantity <= end:
                return Decimal(tier["amount"]["value"]) * quantity
        return Decimal(tiers[-1]["amount"]["value"]) * quantity
    total = Decimal(0)
    for tier in tiers:
        start = Decimal(tier["starting_quantity"])
        end = Decimal(tier.get("ending_quantity", "Infinity"))
        units = min(quantity, end) - start + 1
        if units > 0:
            total += Decimal(tier["amount"]["value"]) * units
    return total


def check_percentage(raw: Any, field: str) -> str:
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field=field, value=str(raw)) from None
    if not value.is_finite() or not 0 <= value <= 100:
        raise invalid_request("INVALID_PARAMETER_VALUE", field=field, value=str(raw))
    return str(raw)


def _stamp(scheme: dict[str, Any], now: str, version: int) -> dict[str, Any]:
    stamped = copy.deepcopy(scheme)
    stamped.update({"version": version, "create_time": now, "update_time": now})
    return stamped


# the API -------------------------------------------------------------------------------------
def _links(call: Call, plan_id: str, status: str) -> list[dict[str, str]]:
    path = f"/v1/billing/plans/{plan_id}"
    links = [call.link(path, "self"), call.link(path, "edit", "PATCH")]
    if status == "ACTIVE":
        links.append(call.link(f"{path}/deactivate", "self", "POST"))
    else:
        links.append(call.link(f"{path}/activate", "self", "POST"))
    links.append(call.link(f"{path}/update-pricing-schemes", "edit", "POST"))
    return links


def render(call: Call, row: Row, *, full: bool = True) -> dict[str, Any]:
    plan = copy.deepcopy(row.data)
    plan["status"] = row.status
    plan["links"] = _links(call, row.id, row.status)
    if full:
        return plan
    keys = ("id", "product_id", "name", "status", "description", "create_time", "links")
    return {k: plan[k] for k in keys if k in plan}


@operation(
    router,
    "POST",
    "/v1/billing/plans",
    f"{SPEC}:plans.create",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
)
def create_plan(call: Call, tx: Tx) -> Reply:
    body = call.body
    if tx.get(PRODUCT, body["product_id"]) is None:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "The value of a field is invalid.",
            field="/product_id",
            value=body["product_id"],
        )
    cycles = body["billing_cycles"]
    currency = check_cycles(cycles)
    preferences = {**PREFERENCE_DEFAULTS, **body["payment_preferences"]}
    if "setup_fee" in preferences:
        currency = parse_price(
            preferences["setup_fee"], "/payment_preferences/setup_fee", currency
        )[1]
    tiered = any((c.get("pricing_scheme") or {}).get("tiers") for c in cycles)
    if tiered and body.get("quantity_supported") is False:
        raise unprocessable(
            "INVALID_QUANTITY_SUPPORTED",
            "Quantity is always supported for volume and tiered plans.",
            field="/quantity_supported",
        )
    plan_id = call.sandbox.ids.plan()
    now = iso(call.now)
    plan: dict[str, Any] = {
        "id": plan_id,
        "product_id": body["product_id"],
        "name": body["name"],
    }
    if "description" in body:
        plan["description"] = body["description"]
    plan["billing_cycles"] = [_cycle(cycle, now) for cycle in sorted(cycles, key=_sequence)]
    plan["payment_preferences"] = preferences
    if "taxes" in body:
        taxes = {"inclusive": True, **body["taxes"]}
        taxes["percentage"] = check_percentage(taxes["percentage"], "/taxes/percentage")
        plan["taxes"] = taxes
    plan["quantity_supported"] = bool(body.get("quantity_supported", False) or tiered)
    plan["create_time"] = plan["update_time"] = now
    status = body.get("status", "ACTIVE")
    tx.insert(PLAN, plan_id, plan, now=call.now, status=status, parent_id=body["product_id"])
    row = require(tx, PLAN, plan_id)
    emit(call, tx, "BILLING.PLAN.CREATED", render(call, row), "A billing plan was created")
    return Reply(render(call, row, full=call.wants_representation), 201)


def _sequence(cycle: dict[str, Any]) -> int:
    return int(cycle["sequence"])


def _cycle(cycle: dict[str, Any], now: str) -> dict[str, Any]:
    made: dict[str, Any] = {
        "frequency": {"interval_count": 1, **cycle["frequency"]},
        "tenure_type": cycle["tenure_type"],
        "sequence": cycle["sequence"],
        "total_cycles": cycle.get("total_cycles", 1),
    }
    if cycle.get("pricing_scheme"):
        made["pricing_scheme"] = _stamp(cycle["pricing_scheme"], now, 1)
    return made


@operation(router, "GET", "/v1/billing/plans", f"{SPEC}:plans.list", write=False)
def list_plans(call: Call, tx: Tx) -> Reply:
    rows = tx.find(PLAN, newest_first=False)
    product_id = call.query.get("product_id")
    if product_id:
        rows = [row for row in rows if row.data["product_id"] == product_id]
    if call.query.get("plan_ids"):
        wanted = {part.strip() for part in str(call.query["plan_ids"]).split(",")}
        rows = [row for row in rows if row.id in wanted]
    chosen, extra = page_of(call, rows, "/v1/billing/plans")
    full = call.wants_representation
    return Reply({"plans": [render(call, row, full=full) for row in chosen], **extra})


@operation(router, "GET", "/v1/billing/plans/{plan_id}", f"{SPEC}:plans.get", write=False)
def show_plan(call: Call, tx: Tx, plan_id: str) -> Reply:
    return Reply(render(call, require(tx, PLAN, plan_id)))


PATCHABLE = {
    "/description",
    "/name",
    "/payment_preferences/auto_bill_outstanding",
    "/payment_preferences/payment_failure_threshold",
    "/payment_preferences/setup_fee",
    "/payment_preferences/setup_fee_failure_action",
    "/taxes/percentage",
}


@operation(router, "PATCH", "/v1/billing/plans/{plan_id}", f"{SPEC}:plans.patch")
def update_plan(call: Call, tx: Tx, plan_id: str) -> Reply:
    row = require(tx, PLAN, plan_id, lock=True)
    if row.status == "INACTIVE":
        raise unprocessable(
            "PLAN_STATUS_INACTIVE",
            "Status update is the only patchable filed on an inactive plan.",
        )
    plan = copy.deepcopy(row.data)
    seen: set[str] = set()
    for index, patch in enumerate(call.body):
        where = f"/{index}"
        path = patch.get("path", "")
        claim_patch_path(path, where, seen, patchable=path in PATCHABLE)
        if patch["op"] != "replace":
            raise invalid_request(
                "UNSUPPORTED_PATCH_OPERATION",
                "The specified patch operation not supported for this field.",
                field=f"{where}/op",
                value=patch["op"],
            )
        _patch(plan, path, patch.get("value"), f"{where}/value")
    plan["update_time"] = iso(call.now)
    tx.update(PLAN, plan_id, plan, now=call.now, status=row.status)
    emit(call, tx, "BILLING.PLAN.UPDATED", render(call, require(tx, PLAN, plan_id)), "")
    return Reply(None, 204)


def _patch(plan: dict[str, Any], path: str, value: Any, field: str) -> None:
    def bad() -> Exception:
        return invalid_request("INVALID_PARAMETER_VALUE", field=field, value=str(value))

    preferences = plan["payment_preferences"]
    if path in ("/description", "/name"):
        if not isinstance(value, str) or not 1 <= len(value) <= 127:
            raise bad()
        plan[path[1:]] = value
    elif path == "/payment_preferences/auto_bill_outstanding":
        if not isinstance(value, bool):
            raise bad()
        preferences["auto_bill_outstanding"] = value
    elif path == "/payment_preferences/payment_failure_threshold":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 999:
            raise bad()
        preferences["payment_failure_threshold"] = value
    elif path == "/payment_preferences/setup_fee_failure_action":
        if value not in ("CONTINUE", "CANCEL"):
            raise bad()
        preferences["setup_fee_failure_action"] = value
    elif path == "/payment_preferences/setup_fee":
        _, currency = parse_price(value, field, plan_currency(plan))
        preferences["setup_fee"] = {"currency_code": currency, "value": str(value["value"])}
    else:  # /taxes/percentage
        percentage = check_percentage(value, field)
        plan["taxes"] = {**plan.get("taxes", {"inclusive": True}), "percentage": percentage}


def _transition(call: Call, tx: Tx, plan_id: str, allowed: tuple[str, ...], to: str) -> Reply:
    row = require(tx, PLAN, plan_id, lock=True)
    if row.status not in allowed:
        action = "activate" if to == "ACTIVE" else "deactivate"
        wanted = "either created or inactive" if to == "ACTIVE" else "active"
        raise unprocessable(
            "PLAN_STATUS_INVALID",
            f"Invalid plan status for {action} action; plan status should be {wanted}.",
        )
    plan = copy.deepcopy(row.data)
    plan["update_time"] = iso(call.now)
    tx.update(PLAN, plan_id, plan, now=call.now, status=to)
    event = "BILLING.PLAN.ACTIVATED" if to == "ACTIVE" else "BILLING.PLAN.DEACTIVATED"
    emit(call, tx, event, render(call, require(tx, PLAN, plan_id)), "")
    return Reply(None, 204)


@operation(
    router,
    "POST",
    "/v1/billing/plans/{plan_id}/activate",
    f"{SPEC}:plans.activate",
    body_required=False,
)
def activate_plan(call: Call, tx: Tx, plan_id: str) -> Reply:
    return _transition(call, tx, plan_id, ("CREATED", "INACTIVE"), "ACTIVE")


@operation(
    router,
    "POST",
    "/v1/billing/plans/{plan_id}/deactivate",
    f"{SPEC}:plans.deactivate",
    body_required=False,
)
def deactivate_plan(call: Call, tx: Tx, plan_id: str) -> Reply:
    return _transition(call, tx, plan_id, ("ACTIVE",), "INACTIVE")


@operation(
    router,
    "POST",
    "/v1/billing/plans/{plan_id}/update-pricing-schemes",
    f"{SPEC}:plans.update-pricing-schemes",
)
def update_pricing_schemes(call: Call, tx: Tx, plan_id: str) -> Reply:
    row = require(tx, PLAN, plan_id, lock=True)
    if row.status == "INACTIVE":
        raise unprocessable(
            "PRICING_SCHEME_UPDATE_NOT_ALLOWED",
            "Pricing scheme update is not allowed for the plan.",
        )
    plan = copy.deepcopy(row.data)
    currency = plan_currency(plan)
    now = iso(call.now)
    for index, change in enumerate(call.body["pricing_schemes"]):
        where = f"/pricing_schemes/{index}"
        cycle = next(
            (
                c
                for c in plan["billing_cycles"]
                if c["sequence"] == change["billing_cycle_sequence"]
            ),
            None,
        )
        if cycle is None:
            raise unprocessable(
                "INVALID_BILLING_CYCLE_SEQUENCE",
                "The provided billing cycle sequence is not available.",
                field=f"{where}/billing_cycle_sequence",
            )
        old = cycle.get("pricing_scheme") or {}
        new = change["pricing_scheme"]
        if ("fixed_price" in old) != ("fixed_price" in new) and old:
            raise unprocessable(
                "INVALID_PRICING_SCHEME",
                "The new pricing scheme should be of the same type as that of the old one.",
                field=f"{where}/pricing_scheme",
            )
        check_pricing_scheme(new, f"{where}/pricing_scheme", cycle["tenure_type"], currency)
        stamped = _stamp(new, now, int(old.get("version", 0)) + 1)
        stamped["create_time"] = old.get("create_time", now)
        cycle["pricing_scheme"] = stamped
    plan["update_time"] = now
    tx.update(PLAN, plan_id, plan, now=call.now, status=row.status)
    emit(
        call,
        tx,
        "BILLING.PLAN.PRICING-CHANGE.ACTIVATED",
        render(call, require(tx, PLAN, plan_id)),
        "A billing plan pricing change was activated",
    )
    return Reply(None, 204)


def claim_patch_path(path: str, where: str, seen: set[str], *, patchable: bool) -> None:
    """Refuse a JSON Patch path that cannot be patched or was already patched in this call."""
    if not patchable:
        raise invalid_request(
            "INVALID_PATCH_PATH",
            "The specified field cannot be patched.",
            field=f"{where}/path",
            value=path,
        )
    if path in seen:
        raise invalid_request(
            "INVALID_PATCH_PATH",
            "Multiple operations on the same field are not allowed.",
            field=f"{where}/path",
            value=path,
        )
    seen.add(path)
