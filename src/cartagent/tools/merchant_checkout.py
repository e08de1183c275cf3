"""Checkouts at another merchant over an agentic-commerce protocol (ACP, UCP), paid with PayPal.

These tools act through the toolkit's ``merchant`` client (a
:class:`~cartagent.shopping.shop_client.ShopClient`: ACP or UCP), not through PayPal directly:
the merchant prices the checkout (its tax and shipping are authoritative) and captures the
payment itself. Completing
moves money, so it passes the approval gate and spend limits like ``capture_order``, priced at
the total the merchant quotes for the checkout at that moment.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from ..addresses import Address, Contact
from ..errors import CheckoutError, ToolError
from ..money import Money
from ..shopping import SessionView, ShopClient
from ._models import Args, PayPalId, id_field
from ._tool import ToolContext, tool

__all__ = ["TOOLS"]


class MerchantItem(Args):
    item_id: str = Field(min_length=1, max_length=128, description="The merchant's item id.")
    quantity: int = Field(default=1, ge=1, le=999, description="Number of units.")


class ShipTo(Args):
    name: str = Field(min_length=1, max_length=300)
    line_one: str = Field(min_length=1, max_length=300)
    line_two: str = Field(default="", max_length=300)
    city: str = Field(min_length=1, max_length=120)
    state: str = Field(min_length=1, max_length=120)
    postal_code: str = Field(min_length=1, max_length=20)
    country: str = Field(min_length=2, max_length=2, description="ISO 3166-1 alpha-2, e.g. US.")


class CreateMerchantCheckoutArgs(Args):
    items: list[MerchantItem] = Field(min_length=1, max_length=100)
    ship_to: ShipTo
    email: str | None = Field(
        default=None,
        max_length=254,
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        description="Where the merchant sends updates.",
    )


class MerchantCheckoutIdArgs(Args):
    checkout_id: PayPalId = id_field("The merchant's checkout session id.", max_length=128)


class CompleteMerchantCheckoutArgs(MerchantCheckoutIdArgs):
    payment_token: str = Field(
        min_length=1, max_length=255, description="The buyer's PayPal payment token."
    )


def _summary(session: SessionView) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": session.id,
        "status": session.status,
        "ready": session.ready,
        "currency": session.currency,
        "lines": [
            {
                "item_id": line.item_id,
                "name": line.name,
                "quantity": line.quantity,
                "unit_price": str(line.unit_price.amount),
                "total": str(line.total.amount),
            }
            for line in session.lines
        ],
        "totals": {kind: str(money.amount) for kind, money in session.totals.items()},
        "problems": session.problems,
    }
    if session.order is not None:
        out["order"] = {
            key: session.order[key]
            for key in ("id", "order_number", "permalink_url", "status")
            if key in session.order
        }
    return out


def _merchant(ctx: ToolContext) -> ShopClient:
    if ctx.merchant is None:
        raise ToolError("no merchant is configured for checkouts elsewhere")
    return ctx.merchant


async def _ask(ctx: ToolContext, method: str, *args: Any, **kwargs: Any) -> SessionView:
    try:
        session: SessionView = await asyncio.to_thread(
            getattr(_merchant(ctx), method), *args, **kwargs
        )
    except CheckoutError as error:
        field = ".".join(str(part) for part in error.param) or None
        message = f"the merchant refused: {error.message} ({error.code})"
        raise ToolError(message, field=field) from error
    return session


@tool(family="merchant_checkout", action="create")
async def create_merchant_checkout(
    ctx: ToolContext, args: CreateMerchantCheckoutArgs
) -> dict[str, Any]:
    """Start a checkout at the merchant: it answers the authoritative lines, tax, shipping and
    total, and any problem (out of stock, missing address) that stops payment."""
    ship = args.ship_to
    address = Address(
        name=ship.name,
        line_one=ship.line_one,
        line_two=ship.line_two,
        city=ship.city,
        state=ship.state,
        country=ship.country.upper(),
        postal_code=ship.postal_code,
    )
    contact = Contact(name=ship.name, email=args.email or "")
    items = [(item.item_id, item.quantity) for item in args.items]
    return _summary(await _ask(ctx, "create", items, address=address, contact=contact))


@tool(family="merchant_checkout", action="get", read_only=True, idempotent=True)
async def get_merchant_checkout(ctx: ToolContext, args: MerchantCheckoutIdArgs) -> dict[str, Any]:
    """Show a merchant checkout as the merchant sees it now (status, totals, order once paid)."""
    return _summary(await _ask(ctx, "get", args.checkout_id))


async def _checkout_total(ctx: ToolContext, args: CompleteMerchantCheckoutArgs) -> Money | None:
    return (await _ask(ctx, "get", args.checkout_id)).total


@tool(
    family="merchant_checkout",
    action="complete",
    moves_money=True,
    idempotent=True,
    spend=_checkout_total,
)
async def complete_merchant_checkout(
    ctx: ToolContext, args: CompleteMerchantCheckoutArgs
) -> dict[str, Any]:
    """Pay for a merchant checkout with the buyer's PayPal payment token (takes the money);
    the merchant answers the order."""
    return _summary(await _ask(ctx, "complete", args.checkout_id, args.payment_token))


@tool(family="merchant_checkout", action="cancel", destructive=True, idempotent=True)
async def cancel_merchant_checkout(
    ctx: ToolContext, args: MerchantCheckoutIdArgs
) -> dict[str, Any]:
    """Cancel a merchant checkout that has not been paid."""
    return _summary(await _ask(ctx, "cancel", args.checkout_id))


TOOLS = (
    create_merchant_checkout,
    get_merchant_checkout,
    complete_merchant_checkout,
    cancel_merchant_checkout,
)
