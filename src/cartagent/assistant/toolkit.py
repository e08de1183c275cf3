"""The assistant's toolkit: every registry tool, approved only under the shopper's consent."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

from ..tools import ALL_TOOLS, SpendLimits, Toolkit, ToolkitConfig
from .consent import approve_granted

if TYPE_CHECKING:
    from ..paypal import AsyncPayPalClient

__all__ = ["assistant_toolkit"]


def assistant_toolkit(
    client: AsyncPayPalClient,
    *,
    limits: SpendLimits | None = None,
    today: Callable[[], date] = date.today,
) -> Toolkit:
    """All tools on ``client``; money-moving and destructive calls need a
    :class:`~cartagent.assistant.consent.Grant` from the turn, and ``limits`` still apply."""
    tools = list(ALL_TOOLS)
    config = ToolkitConfig.everything((t.family, t.action) for t in tools)
    return Toolkit(
        client, tools, config=config, approve=approve_granted, limits=limits, today=today
    )
