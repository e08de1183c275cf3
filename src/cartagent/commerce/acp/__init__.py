"""The Agentic Commerce Protocol (ACP, release 2026-04-17), merchant side."""

from .routes import AcpSettings, acp_router
from .schema import API_VERSION, SUPPORTED_VERSIONS

__all__ = ["API_VERSION", "SUPPORTED_VERSIONS", "AcpSettings", "acp_router"]
