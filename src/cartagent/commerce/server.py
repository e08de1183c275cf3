"""The merchant's HTTP app: the store's checkouts over each protocol it speaks."""

from __future__ import annotations

from fastapi import FastAPI

from .acp import AcpSettings, acp_router
from .agents import Agents
from .merchant import Merchant

__all__ = ["create_merchant_app"]


def create_merchant_app(merchant: Merchant, agents: Agents, *, base_url: str) -> FastAPI:
    """A FastAPI app serving ACP at the root (``/checkout_sessions``, ``/.well-known/acp.json``)."""
    app = FastAPI(title="cartagent merchant", docs_url=None, redoc_url=None)
    app.include_router(acp_router(merchant, agents, AcpSettings(base_url=base_url)))
    return app
