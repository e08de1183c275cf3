"""Subscriptions: create (for the buyer to approve), show, update, suspend, activate, cancel."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from ..errors import ToolError
from ..money import Money
from ..paypal import api_path
from ._models import Amount, Args, PayPalId, id_field
from ._tool import ToolContext, tool

BASE = "/v1/billing/subscriptions"


def _summary(sub: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "status", "plan_id", "quantity", "start_time", "custom_id")
    summary: dict[str, Any] = {k: sub[k] for k in keys if k in sub}
    links = {link["rel"]: link["href"] for link in sub.get("links", [])}
    if "approve" in links:
        summary["approve_url"] = links["approve"]
    if "shipping_amount" in sub:
        summary["shipping_amount"] = sub["shipping_amount"]["value"]
        summary["currency"] = sub["shipping_amount"]["currency_code"]
    email = sub.get("subscriber", {}).get("email_address")
    if email:
        summary["subscriber_email"] = email
    billing = sub.get("billing_info", {})
    if "next_billing_time" in billing:
        summary["next_billing_time"] = billing["next_billing_time"]
    if "last_payment" in billing:
        summary["last_payment"] = billing["last_payment"].get("amount", {}).get("value")
    balance = billing.get("outstanding_balance", {}).get("value")
    if balance not in (None, "0", "0.00", "0.0"):
        summary["outstanding_balance"] = balance
    return summary


async def _plan_currency(ctx: ToolContext, plan_id: str) -> str:
    plan = await ctx.client.get(api_path("/v1/billing/plans/{}", plan_id))
    for cycle in plan.get("billing_cycles", []):
        price = (cycle.get("pricing_scheme") or {}).get("fixed_price")
        if price:
            return str(price["currency_code"])
    return "USD"


class CreateSubscriptionArgs(Args):
    plan_id: PayPalId = id_field("The active plan to subscribe to.", min_length=3, max_length=50)
    quantity: int | None = Field(
        default=None, ge=1, le=10_000, description="Units, if the plan supports quantity."
    )
    start_time: datetime | None = Field(
        default=None, description="When billing starts (ISO 8601, future); default now."
    )
    shipping_amount: Amount | None = Field(
        default=None, description="Shipping charged per cycle, in the plan's currency."
    )
    custom_id: str | None = Field(default=None, min_length=1, max_length=127)
    subscriber_email: str | None = Field(
        default=None,
        description="The buyer's e-mail.",
        max_length=254,
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
    )
    subscriber_given_name: str | None = Field(default=None, min_length=1, max_length=140)
    subscriber_surname: str | None = Field(default=None, min_length=1, max_length=140)
    return_url: str | None = Field(
        default=None, description="Where the buyer lands after approving.", max_length=4000
    )
    cancel_url: str | None = Field(default=None, max_length=4000)


@tool(family="subscriptions", action="create")
async def create_subscription(ctx: ToolContext, args: CreateSubscriptionArgs) -> dict[str, Any]:
    """Create a subscription to a plan; the buyer must open approve_url to start it."""
    body: dict[str, Any] = {"plan_id": args.plan_id}
    if args.quantity is not None:
        body["quantity"] = str(args.quantity)
    if args.start_time is not None:
        body["start_time"] = args.start_time.isoformat().replace("+00:00", "Z")
    if args.shipping_amount is not None:
        currency = await _plan_currency(ctx, args.plan_id)
        body["shipping_amount"] = Money(args.shipping_amount, currency).to_paypal()
    if args.custom_id:
        body["custom_id"] = args.custom_id
    subscriber: dict[str, Any] = {}
    if args.subscriber_email:
        subscriber["email_address"] = str(args.subscriber_email)
    name = {
        k: v
        for k, v in (
            ("given_name", args.subscriber_given_name),
            ("surname", args.subscriber_surname),
        )
        if v
    }
    if name:
        subscriber["name"] = name
    if subscriber:
        body["subscriber"] = subscriber
    context = {
        k: v for k, v in (("return_url", args.return_url), ("cancel_url", args.cancel_url)) if v
    }
    if context:
        body["application_context"] = context
    sub = await ctx.client.post(BASE, body, headers={"Prefer": "return=representation"})
    return _summary(sub)


class SubscriptionIdArgs(Args):
    subscription_id: PayPalId = id_field(
        "The subscription id, e.g. I-BW452GLLEP1G.", min_length=3, max_length=50
    )


def _subscription(subscription_id: str) -> str:
    return api_path(BASE + "/{}", subscription_id)


@tool(family="subscriptions", action="show", read_only=True, idempotent=True)
async def show_subscription_details(ctx: ToolContext, args: SubscriptionIdArgs) -> dict[str, Any]:
    """Show a subscription: status, plan, next billing time, last payment, balance."""
    return _summary(await ctx.client.get(_subscription(args.subscription_id)))


class UpdateSubscriptionArgs(SubscriptionIdArgs):
    shipping_amount: Amount | None = Field(
        default=None, description="New shipping charge per cycle, in the plan's currency."
    )
    custom_id: str | None = Field(
        default=None, min_length=1, max_length=127, description="New reference of yours."
    )


@tool(family="subscriptions", action="update", idempotent=True)
async def update_subscription(ctx: ToolContext, args: UpdateSubscriptionArgs) -> dict[str, Any]:
    """Change a subscription's shipping amount or custom_id; returns the subscription."""
    if args.shipping_amount is None and args.custom_id is None:
        raise ToolError("nothing to change: give shipping_amount or custom_id", field="custom_id")
    path = _subscription(args.subscription_id)
    current = await ctx.client.get(path)
    patch: list[dict[str, Any]] = []
    if args.custom_id is not None:
        op = "replace" if "custom_id" in current else "add"
        patch.append({"op": op, "path": "/custom_id", "value": args.custom_id})
    if args.shipping_amount is not None:
        currency = await _plan_currency(ctx, current["plan_id"])
        op = "replace" if "shipping_amount" in current else "add"
        value = Money(args.shipping_amount, currency).to_paypal()
        patch.append({"op": op, "path": "/shipping_amount", "value": value})
    await ctx.client.patch(path, patch)
    return _summary(await ctx.client.get(path))


class ReasonArgs(SubscriptionIdArgs):
    reason: str = Field(
        description="Why (kept with the subscription).", min_length=1, max_length=128
    )


class OptionalReasonArgs(SubscriptionIdArgs):
    reason: str | None = Field(
        default=None, description="Why (kept with the subscription).", min_length=1, max_length=128
    )


async def _change(ctx: ToolContext, sub_id: str, action: str, reason: str | None) -> dict[str, Any]:
    body = {"reason": reason} if reason else None
    path = _subscription(sub_id)
    await ctx.client.post(f"{path}/{action}", body)
    sub = await ctx.client.get(path)
    return {"id": sub["id"], "status": sub["status"]}


@tool(family="subscriptions", action="suspend", idempotent=True)
async def suspend_subscription(ctx: ToolContext, args: ReasonArgs) -> dict[str, Any]:
    """Pause an active subscription's billing until it is activated again."""
    return await _change(ctx, args.subscription_id, "suspend", args.reason)


@tool(family="subscriptions", action="activate", idempotent=True)
async def activate_subscription(ctx: ToolContext, args: OptionalReasonArgs) -> dict[str, Any]:
    """Resume a suspended subscription's billing."""
    return await _change(ctx, args.subscription_id, "activate", args.reason)


@tool(family="subscriptions", action="cancel", destructive=True, idempotent=True)
async def cancel_subscription(ctx: ToolContext, args: ReasonArgs) -> dict[str, Any]:
    """Cancel a subscription for good: it can never be billed or resumed again."""
    return await _change(ctx, args.subscription_id, "cancel", args.reason)


TOOLS = (
    create_subscription,
    show_subscription_details,
    update_subscription,
    suspend_subscription,
    activate_subscription,
    cancel_subscription,
)
