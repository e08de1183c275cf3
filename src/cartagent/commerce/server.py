"""The merchant's HTTP app: the store's checkouts over each protocol it speaks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from .acp import AcpSettings, acp_router
from .agents import Agents
from .merchant import Merchant
from .webhooks import WebhookSender

__all__ = ["create_merchant_app"]


def create_merchant_app(
    merchant: Merchant,
    agents: Agents,
    *,
    base_url: str,
    webhooks: WebhookSender | None = None,
) -> FastAPI:
    """A FastAPI app serving ACP at the root (``/checkout_sessions``, ``/.well-known/acp.json``).

    With ``webhooks``, order events are delivered in the background while the app runs.
    """

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if webhooks is not None:
            webhooks.start()
        try:
            yield
        finally:
            if webhooks is not None:
                webhooks.stop()

    app = FastAPI(title="cartagent merchant", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.include_router(acp_router(merchant, agents, AcpSettings(base_url=base_url)))
    return app
