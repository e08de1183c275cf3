"""The Agentic Commerce Protocol (ACP, release 2026-04-17): the merchant's REST and MCP
bindings over one :class:`AcpService`, and an agent's :class:`AcpClient`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_face

if TYPE_CHECKING:
    from .client import AcpClient, SessionView
    from .routes import acp_router
    from .schema import API_VERSION, SUPPORTED_VERSIONS
    from .service import AcpService, AcpSettings

__all__ = [
    "API_VERSION",
    "SUPPORTED_VERSIONS",
    "AcpClient",
    "AcpService",
    "AcpSettings",
    "SessionView",
    "acp_router",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "AcpClient": ".client",
        "SessionView": ".client",
        "acp_router": ".routes",
        "API_VERSION": ".schema",
        "SUPPORTED_VERSIONS": ".schema",
        "AcpService": ".service",
        "AcpSettings": ".service",
    },
)
