"""Refunds of captured payments (PayPal Payments v2): give money back, look a refund up."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import Field, field_validator

from ..money import Money
from ..paypal import api_path
from ._models import Amount, Args, Currency, PayPalId, check_currency, id_field
from ._tool import ToolContext, tool


class CreateRefundArgs(Args):
    capture_id: PayPalId = id_field(
        "The captured payment to refund, e.g. 2GG279541U471931P.", max_length=36
    )
    amount: Amount | None = Field(
        default=None, gt=0, description="Amount to give back; all that is left if left out."
    )
    currency: Currency | None = Field(
        default=None, description="Currency of amount; the capture's currency if left out."
    )
    note: str | None = Field(
        default=None, max_length=255, description="Why, shown to the buyer (note_to_payer)."
    )
    invoice_id: str | None = Field(
        default=None, max_length=127, description="Your reference for this refund."
    )

    @field_validator("currency")
    @classmethod
    def _known_currency(cls, value: str | None) -> str | None:
        return None if value is None else check_currency(value)


def _capture_path(args: CreateRefundArgs) -> str:
    """The capture's path: what the spend check prices is what the refund refunds."""
    return api_path("/v2/payments/captures/{}", args.capture_id)


async def _capture(ctx: ToolContext, args: CreateRefundArgs) -> dict[str, Any]:
    capture: dict[str, Any] = await ctx.client.get(_capture_path(args))
    return capture


async def _refunded(ctx: ToolContext, capture: dict[str, Any]) -> Decimal:
    """What earlier refunds took from ``capture``, as the order it belongs to lists them."""
    related = (capture.get("supplementary_data") or {}).get("related_ids") or {}
    order_id = related.get("order_id")
    if capture.get("status") != "PARTIALLY_REFUNDED" or not order_id:
        return Decimal(0)
    order = await ctx.client.get(api_path("/v2/checkout/orders/{}", order_id))
    mine = api_path("/v2/payments/captures/{}", capture["id"])
    total = Decimal(0)
    for unit in order.get("purchase_units") or []:
        for refund in (unit.get("payments") or {}).get("refunds") or []:
            ups = [link["href"] for link in refund.get("links") or [] if link.get("rel") == "up"]
            if refund.get("status") != "CANCELLED" and any(h.endswith(mine) for h in ups):
                total += Decimal(refund["amount"]["value"])
    return total


async def _refund_amount(ctx: ToolContext, args: CreateRefundArgs) -> Money | None:
    """The money the refund gives back: the amount asked, else what is left of the capture."""
    if args.amount is not None and args.currency is not None:
        return Money(args.amount, args.currency)
    capture = await _capture(ctx, args)
    gross = Money.from_paypal(capture["amount"])
    if args.amount is not None:
        return Money(args.amount, gross.currency)
    # An order-less capture shows no earlier refunds: its gross amount is then the bound.
    return Money(gross.amount - await _refunded(ctx, capture), gross.currency)


def _summary(refund: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"id": refund["id"], "status": refund.get("status")}
    amount = refund.get("amount") or {}
    if amount:
        summary["amount"] = amount.get("value")
        summary["currency"] = amount.get("currency_code")
    breakdown = refund.get("seller_payable_breakdown") or {}
    for key in ("net_amount", "total_refunded_amount"):
        if key in breakdown:
            summary[key] = breakdown[key].get("value")
    up = [link["href"] for link in refund.get("links") or [] if link.get("rel") == "up"]
    if up:
        summary["capture_id"] = up[0].rstrip("/").rsplit("/", 1)[-1]
    for key in ("note_to_payer", "invoice_id", "create_time"):
        if refund.get(key):
            summary[key] = refund[key]
    return summary


@tool(family="refunds", action="create", moves_money=True, spend=_refund_amount)
async def create_refund(ctx: ToolContext, args: CreateRefundArgs) -> dict[str, Any]:
    """Refund a captured payment to the buyer, fully or in part (gives money back)."""
    body: dict[str, Any] = {}
    if args.amount is not None:
        money = await _refund_amount(ctx, args)
        assert money is not None
        body["amount"] = money.to_paypal()
    if args.note:
        body["note_to_payer"] = args.note
    if args.invoice_id:
        body["invoice_id"] = args.invoice_id
    refund = await ctx.client.post(
        f"{_capture_path(args)}/refund",
        body or None,
        headers={"Prefer": "return=representation"},
    )
    return _summary(refund)


class RefundIdArgs(Args):
    refund_id: PayPalId = id_field("The PayPal refund id, e.g. 1JU08902781691411.", max_length=36)


@tool(family="refunds", action="get", read_only=True, idempotent=True)
async def get_refund(ctx: ToolContext, args: RefundIdArgs) -> dict[str, Any]:
    """Show a refund: status, amount, the capture it belongs to."""
    return _summary(await ctx.client.get(api_path("/v2/payments/refunds/{}", args.refund_id)))


TOOLS = (create_refund, get_refund)
