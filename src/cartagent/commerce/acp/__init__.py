"""The Agentic Commerce Protocol (ACP, release 2026-04-17): the merchant's REST and MCP
bindings over one :class:`AcpService`. An agent's client is
:class:`cartagent.shopping.AcpClient`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_face

if TYPE_CHECKING:
    from ...protocols.acp.schema import API_VERSION, SUPPORTED_VERSIONS
    from .routes import acp_router
    from .service import AcpService, AcpSettings

__all__ = [
    "API_VERSION",
    "SUPPORTED_VERSIONS",
    "AcpService",
    "AcpSettings",
    "acp_router",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "acp_router": ".routes",
        "API_VERSION": "...protocols.acp.schema",
        "SUPPORTED_VERSIONS": "...protocols.acp.schema",
        "AcpService": ".service",
        "AcpSettings": ".service",
    },
)
