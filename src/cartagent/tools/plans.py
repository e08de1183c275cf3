"""Subscription (billing) plans: create, list, show, update, activate and deactivate."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from ..errors import ToolError
from ..money import paypal_amount
from ..paypal import api_path
from ._models import Amount, Args, PayPalId, Percent, WithCurrency, id_field
from ._tool import ToolContext, tool

BASE = "/v1/billing/plans"
Unit = Literal["DAY", "WEEK", "MONTH", "YEAR"]
# PayPal's longest interval per unit: one year.
MAX_COUNT = {"DAY": 365, "WEEK": 52, "MONTH": 12, "YEAR": 1}


def _check_count(count: int, unit: str | None) -> int:
    if unit is not None and count > MAX_COUNT[unit]:
        raise ValueError(f"at most {MAX_COUNT[unit]} for {unit} (a billing interval is ≤ 1 year)")
    return count


class Trial(Args):
    interval_unit: Unit = Field(description="Unit of one trial billing period.")
    interval_count: int = Field(default=1, ge=1, le=365, description="Units per trial period.")
    price: Amount = Field(default=Decimal(0), description="Price per trial period; 0 = free.")
    cycles: int = Field(default=1, ge=1, le=999, description="How many trial periods.")

    @field_validator("interval_count")
    @classmethod
    def _count(cls, value: int, info: ValidationInfo) -> int:
        return _check_count(value, info.data.get("interval_unit"))


class CreatePlanArgs(WithCurrency):
    product_id: PayPalId = id_field(
        "The catalog product the plan sells.", min_length=6, max_length=50
    )
    name: str = Field(description="Plan name.", min_length=1, max_length=127)
    description: str | None = Field(default=None, min_length=1, max_length=127)
    interval_unit: Unit = Field(default="MONTH", description="Unit of one billing period.")
    interval_count: int = Field(default=1, ge=1, le=365, description="Units per billing period.")
    price: Amount = Field(gt=0, description="Price per billing period.")
    total_cycles: int = Field(
        default=0, ge=0, le=999, description="Regular periods to bill; 0 = until cancelled."
    )
    trial: Trial | None = Field(default=None, description="An optional trial before billing.")
    setup_fee: Amount | None = Field(default=None, description="One-off fee at sign-up.")
    tax_percent: Percent | None = Field(default=None, description="Tax rate, e.g. 8.25.")
    tax_inclusive: bool = Field(default=False, description="Whether the price includes the tax.")

    @field_validator("interval_count")
    @classmethod
    def _count(cls, value: int, info: ValidationInfo) -> int:
        return _check_count(value, info.data.get("interval_unit"))


def _plan_body(args: CreatePlanArgs) -> dict[str, Any]:
    cycles: list[dict[str, Any]] = []
    if args.trial:
        trial: dict[str, Any] = {
            "frequency": {
                "interval_unit": args.trial.interval_unit,
                "interval_count": args.trial.interval_count,
            },
            "tenure_type": "TRIAL",
            "sequence": 1,
            "total_cycles": args.trial.cycles,
        }
        if args.trial.price:
            trial["pricing_scheme"] = {
                "fixed_price": paypal_amount(args.trial.price, args.currency)
            }
        cycles.append(trial)
    cycles.append(
        {
            "frequency": {
                "interval_unit": args.interval_unit,
                "interval_count": args.interval_count,
            },
            "tenure_type": "REGULAR",
            "sequence": len(cycles) + 1,
            "total_cycles": args.total_cycles,
            "pricing_scheme": {"fixed_price": paypal_amount(args.price, args.currency)},
        }
    )
    preferences: dict[str, Any] = {
        "auto_bill_outstanding": True,
        "setup_fee_failure_action": "CONTINUE",
        "payment_failure_threshold": 3,
    }
    if args.setup_fee:
        preferences["setup_fee"] = paypal_amount(args.setup_fee, args.currency)
    body: dict[str, Any] = {
        "product_id": args.product_id,
        "name": args.name,
        "status": "ACTIVE",
        "billing_cycles": cycles,
        "payment_preferences": preferences,
    }
    if args.description:
        body["description"] = args.description
    if args.tax_percent is not None:
        body["taxes"] = {"percentage": str(args.tax_percent), "inclusive": args.tax_inclusive}
    return body


def _cycle(cycle: dict[str, Any]) -> dict[str, Any]:
    frequency = cycle.get("frequency", {})
    summary: dict[str, Any] = {
        "tenure": cycle.get("tenure_type"),
        "every": f"{frequency.get('interval_count', 1)} {frequency.get('interval_unit')}",
        "total_cycles": cycle.get("total_cycles"),
    }
    price = (cycle.get("pricing_scheme") or {}).get("fixed_price")
    summary["price"] = price["value"] if price else "0"
    if price:
        summary["currency"] = price["currency_code"]
    return summary


def _summary(plan: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "product_id", "name", "status", "description")
    summary = {k: plan[k] for k in keys if k in plan}
    if "billing_cycles" in plan:
        summary["billing_cycles"] = [_cycle(c) for c in plan["billing_cycles"]]
    fee = plan.get("payment_preferences", {}).get("setup_fee")
    if fee and fee.get("value") not in (None, "0", "0.00"):
        summary["setup_fee"] = fee["value"]
    if "taxes" in plan:
        summary["tax_percent"] = plan["taxes"].get("percentage")
        summary["tax_inclusive"] = plan["taxes"].get("inclusive")
    return summary


@tool(family="plans", action="create")
async def create_subscription_plan(ctx: ToolContext, args: CreatePlanArgs) -> dict[str, Any]:
    """Create an active plan for a product: price per period, optional trial, setup fee, tax."""
    plan = await ctx.client.post(
        BASE, _plan_body(args), headers={"Prefer": "return=representation"}
    )
    return _summary(plan)


class ListPlansArgs(Args):
    product_id: PayPalId | None = id_field(
        "Only this product's plans.", min_length=6, max_length=50, default=None
    )
    page: int = Field(default=1, ge=1, le=100_000, description="Page number, from 1.")
    page_size: int = Field(default=10, ge=1, le=20, description="Plans per page.")


@tool(family="plans", action="list", read_only=True, idempotent=True)
async def list_subscription_plans(ctx: ToolContext, args: ListPlansArgs) -> dict[str, Any]:
    """List subscription plans, optionally for one product."""
    params: dict[str, Any] = {
        "page": args.page,
        "page_size": args.page_size,
        "total_required": "true",
    }
    if args.product_id:
        params["product_id"] = args.product_id
    found = await ctx.client.get(BASE, params=params)
    return {
        "plans": [_summary(p) for p in found.get("plans", [])],
        "page": args.page,
        "total_items": found.get("total_items"),
        "total_pages": found.get("total_pages"),
    }


class PlanIdArgs(Args):
    plan_id: PayPalId = id_field(
        "The plan id, e.g. P-5ML4271244454362WXNWU5NQ.", min_length=3, max_length=50
    )


def _plan(plan_id: str) -> str:
    return api_path(BASE + "/{}", plan_id)


@tool(family="plans", action="show", read_only=True, idempotent=True)
async def show_subscription_plan_details(ctx: ToolContext, args: PlanIdArgs) -> dict[str, Any]:
    """Show a plan: status, billing cycles with prices, setup fee and tax."""
    return _summary(await ctx.client.get(_plan(args.plan_id)))


class UpdatePlanArgs(PlanIdArgs):
    name: str | None = Field(default=None, min_length=1, max_length=127, description="New name.")
    description: str | None = Field(default=None, min_length=1, max_length=127)
    setup_fee: Amount | None = Field(default=None, description="New setup fee (plan currency).")
    setup_fee_failure_action: Literal["CONTINUE", "CANCEL"] | None = Field(
        default=None, description="What happens to the subscription if the setup fee fails."
    )
    payment_failure_threshold: int | None = Field(
        default=None, ge=0, le=999, description="Failed payments before suspension."
    )
    auto_bill_outstanding: bool | None = Field(
        default=None, description="Bill an outstanding balance in the next cycle."
    )
    tax_percent: Percent | None = Field(default=None, description="New tax rate.")


PREFERENCES = (
    "setup_fee_failure_action",
    "payment_failure_threshold",
    "auto_bill_outstanding",
)


@tool(family="plans", action="update", idempotent=True)
async def update_subscription_plan(ctx: ToolContext, args: UpdatePlanArgs) -> dict[str, Any]:
    """Change a plan's name, description, payment preferences or tax; returns the plan."""
    path = _plan(args.plan_id)
    patch: list[dict[str, Any]] = []
    for key in ("name", "description"):
        if getattr(args, key) is not None:
            patch.append({"op": "replace", "path": f"/{key}", "value": getattr(args, key)})
    for key in PREFERENCES:
        if getattr(args, key) is not None:
            value = getattr(args, key)
            patch.append({"op": "replace", "path": f"/payment_preferences/{key}", "value": value})
    if args.tax_percent is not None:
        patch.append({"op": "replace", "path": "/taxes/percentage", "value": str(args.tax_percent)})
    if args.setup_fee is not None:
        currency = _currency(await ctx.client.get(path))
        fee = paypal_amount(args.setup_fee, currency)
        patch.append({"op": "replace", "path": "/payment_preferences/setup_fee", "value": fee})
    if not patch:
        raise ToolError("nothing to change: give at least one field to update", field="name")
    await ctx.client.patch(path, patch)
    return _summary(await ctx.client.get(path))


def _currency(plan: dict[str, Any]) -> str:
    for cycle in plan.get("billing_cycles", []):
        price = (cycle.get("pricing_scheme") or {}).get("fixed_price")
        if price:
            return str(price["currency_code"])
    return "USD"


async def _status(ctx: ToolContext, plan_id: str) -> dict[str, Any]:
    plan = await ctx.client.get(_plan(plan_id))
    return {"id": plan["id"], "status": plan["status"]}


@tool(family="plans", action="activate", idempotent=True)
async def activate_subscription_plan(ctx: ToolContext, args: PlanIdArgs) -> dict[str, Any]:
    """Activate a plan so that new subscriptions can be made to it."""
    await ctx.client.post(f"{_plan(args.plan_id)}/activate")
    return await _status(ctx, args.plan_id)


@tool(family="plans", action="deactivate", idempotent=True)
async def deactivate_subscription_plan(ctx: ToolContext, args: PlanIdArgs) -> dict[str, Any]:
    """Deactivate a plan: no new subscriptions; existing ones go on. Reversible."""
    await ctx.client.post(f"{_plan(args.plan_id)}/deactivate")
    return await _status(ctx, args.plan_id)


TOOLS = (
    create_subscription_plan,
    list_subscription_plans,
    show_subscription_plan_details,
    update_subscription_plan,
    activate_subscription_plan,
    deactivate_subscription_plan,
)
