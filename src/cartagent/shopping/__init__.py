"""The agent's side of agentic commerce: clients that shop at a merchant, server-free.

:class:`ShopClient` is what the toolkit and the assistant need of a merchant;
:class:`AcpClient` (ACP) and :class:`UcpClient` (UCP) provide it over one
:class:`~cartagent.shopping.transport.ProtocolTransport` (guarded destinations, bounded reads,
retries that keep the idempotency key). The protocols' shapes they read and write are defined
once, beside the merchant's side, in :mod:`cartagent.commerce.acp` and
:mod:`cartagent.commerce.ucp`; nothing here serves HTTP or opens a database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_face

if TYPE_CHECKING:
    from .acp import AcpClient
    from .shop_client import SessionLine, SessionView, ShopClient
    from .ucp import UcpClient, UcpSessionView

__all__ = ["AcpClient", "SessionLine", "SessionView", "ShopClient", "UcpClient", "UcpSessionView"]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AcpClient": ".acp",
        "SessionLine": ".shop_client",
        "SessionView": ".shop_client",
        "ShopClient": ".shop_client",
        "UcpClient": ".ucp",
        "UcpSessionView": ".ucp",
    },
)
