"""The Agentic Commerce Protocol (ACP, release 2026-04-17): the merchant's REST and MCP
bindings over one :class:`AcpService`, and an agent's :class:`AcpClient`."""

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
