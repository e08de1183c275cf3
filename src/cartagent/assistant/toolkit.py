"""The assistant's toolkit: every registry tool, approved only under the shopper's consent."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

from ..tools import ALL_TOOLS, MERCHANT_TOOLS, SpendLimits, Toolkit, ToolkitConfig
from .consent import approve_granted

if TYPE_CHECKING:
    from ..paypal import AsyncPayPalClient
    from ..shopping import ShopClient

__all__ = ["assistant_toolkit"]


def assistant_toolkit(
    client: AsyncPayPalClient,
    *,
    limits: SpendLimits | None = None,
    today: Callable[[], date] = date.today,
    merchant: ShopClient | None = None,
) -> Toolkit:
    """All tools on ``client`` (and, with ``merchant``, the tools that check out there);
    money-moving and destructive calls need a :class:`~cartagent.assistant.consent.Grant`
    from the turn, and ``limits`` still apply."""
    tools = list(ALL_TOOLS) + (list(MERCHANT_TOOLS) if merchant is not None else [])
    config = ToolkitConfig.everything((t.family, t.action) for t in tools)
    return Toolkit(
        client,
        tools,
        config=config,
        approve=approve_granted,
        limits=limits,
        today=today,
        merchant=merchant,
    )
