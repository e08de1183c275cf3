"""Orders: create (with items and per-unit tax PayPal will accept), get, capture."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import Field

from ..money import Money, unit_tax
from ..paypal import api_path
from ._models import Amount, Args, PayPalId, Percent, WithCurrency, id_field
from ._tool import ToolContext, tool


class OrderItem(Args):
    name: str = Field(description="Item name shown to the buyer.", min_length=1, max_length=127)
    quantity: int = Field(default=1, ge=1, le=10_000, description="Number of units.")
    unit_price: Amount = Field(description="Price of one unit, before tax.")
    tax_percent: Percent | None = Field(
        default=None, description="Sales tax rate for this item, e.g. 8.25."
    )
    sku: str | None = Field(default=None, max_length=127)


class CreateOrderArgs(WithCurrency):
    items: list[OrderItem] = Field(min_length=1, max_length=100, description="What is bought.")
    shipping: Amount | None = Field(default=None, description="Shipping charge, if any.")
    description: str | None = Field(default=None, max_length=127)
    return_url: str | None = Field(default=None, description="Where the buyer lands after paying.")
    cancel_url: str | None = Field(default=None)
    invoice_id: str | None = Field(default=None, max_length=127, description="Your reference.")


def _purchase_unit(args: CreateOrderArgs) -> tuple[dict[str, Any], Money]:
    currency = args.currency
    item_total = Money.zero(currency)
    tax_total = Money.zero(currency)
    items = []
    taxed = any(i.tax_percent is not None for i in args.items)
    for item in args.items:
        price = Money(item.unit_price, currency)
        entry: dict[str, Any] = {
            "name": item.name,
            "quantity": str(item.quantity),
            "unit_amount": price.to_paypal(),
        }
        if taxed:
            tax = unit_tax(price, item.tax_percent or Decimal(0))
            entry["tax"] = tax.to_paypal()
            tax_total = tax_total + tax * item.quantity
        if item.sku:
            entry["sku"] = item.sku
        items.append(entry)
        item_total = item_total + price * item.quantity
    breakdown: dict[str, Any] = {"item_total": item_total.to_paypal()}
    total = item_total
    if taxed:
        breakdown["tax_total"] = tax_total.to_paypal()
        total = total + tax_total
    if args.shipping:
        shipping = Money(args.shipping, currency)
        breakdown["shipping"] = shipping.to_paypal()
        total = total + shipping
    unit: dict[str, Any] = {
        "amount": {**total.to_paypal(), "breakdown": breakdown},
        "items": items,
    }
    if args.description:
        unit["description"] = args.description
    if args.invoice_id:
        unit["invoice_id"] = args.invoice_id
    return unit, total


def _summary(order: dict[str, Any]) -> dict[str, Any]:
    links = {link["rel"]: link["href"] for link in order.get("links", [])}
    summary: dict[str, Any] = {"id": order["id"], "status": order["status"]}
    approve = links.get("approve") or links.get("payer-action")
    if approve:
        summary["approve_url"] = approve
    units = order.get("purchase_units") or []
    if units:
        summary["amount"] = units[0].get("amount", {}).get("value")
        summary["currency"] = units[0].get("amount", {}).get("currency_code")
        captures = units[0].get("payments", {}).get("captures", [])
        if captures:
            summary["capture_id"] = captures[0]["id"]
            summary["capture_status"] = captures[0]["status"]
            if captures[0].get("create_time"):
                summary["capture_time"] = captures[0]["create_time"]
        live = [
            refund
            for unit in units
            for refund in (unit.get("payments") or {}).get("refunds") or []
            if refund.get("status") != "CANCELLED" and "amount" in refund
        ]
        if live:
            amounts = (Decimal(refund["amount"]["value"]) for refund in live)
            summary["refunded"] = str(sum(amounts, Decimal(0)))
            invoices = [str(r["invoice_id"]) for r in live if r.get("invoice_id")]
            if invoices:
                summary["refund_invoice_ids"] = invoices
    return summary


@tool(family="orders", action="create")
async def create_order(ctx: ToolContext, args: CreateOrderArgs) -> dict[str, Any]:
    """Create a PayPal order for the buyer to approve; returns its id and approve_url.

    Item tax is computed per unit and rounded the way PayPal checks it, so totals always match.
    """
    unit, _ = _purchase_unit(args)
    body: dict[str, Any] = {"intent": "CAPTURE", "purchase_units": [unit]}
    if args.return_url or args.cancel_url:
        context = {
            k: v for k, v in (("return_url", args.return_url), ("cancel_url", args.cancel_url)) if v
        }
        body["payment_source"] = {"paypal": {"experience_context": context}}
    order = await ctx.client.post(
        "/v2/checkout/orders", body, headers={"Prefer": "return=representation"}
    )
    return _summary(order)


class OrderIdArgs(Args):
    order_id: PayPalId = id_field("The PayPal order id, e.g. 5O190127TN364715T.", max_length=36)


def _order(args: OrderIdArgs) -> str:
    """The order's path: what the spend check prices is what the capture captures."""
    return api_path("/v2/checkout/orders/{}", args.order_id)


@tool(
    family="orders", action="get", read_only=True, idempotent=True, aliases=("get_order_details",)
)
async def get_order(ctx: ToolContext, args: OrderIdArgs) -> dict[str, Any]:
    """Show an order's status, amount and, once paid, its capture."""
    return _summary(await ctx.client.get(_order(args)))


async def _order_amount(ctx: ToolContext, args: OrderIdArgs) -> Money | None:
    order = await ctx.client.get(_order(args))
    units = order.get("purchase_units") or []
    total = Money.zero(units[0]["amount"]["currency_code"]) if units else None
    for unit in units:
        total = (total or Money.zero(unit["amount"]["currency_code"])) + Money.from_paypal(
            unit["amount"]
        )
    return total


@tool(
    family="orders",
    action="capture",
    moves_money=True,
    idempotent=True,
    spend=_order_amount,
    aliases=("pay_order",),
)
async def capture_order(ctx: ToolContext, args: OrderIdArgs) -> dict[str, Any]:
    """Capture the payment of an order the buyer has approved (takes the money)."""
    return _summary(await ctx.client.post(f"{_order(args)}/capture"))


TOOLS = (create_order, get_order, capture_order)
