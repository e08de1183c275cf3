"""The merchant's HTTP app: the store's checkouts over each protocol it speaks."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import orjson
from fastapi import FastAPI
from starlette.types import Scope

from ..body_limit import BodyLimit
from .acp import AcpService, AcpSettings, acp_router
from .agents import Agents
from .merchant import Merchant
from .paypal_cart import JwtVerifier, PayPalCartService, paypal_cart_router
from .paypal_cart import wire as paypal_cart_wire
from .requests import MAX_BODY
from .storefront import storefront_router
from .ucp import (
    FetchedProfiles,
    PlatformProfiles,
    UcpPolicy,
    UcpService,
    UcpSettings,
    ucp_router,
)
from .ucp.service import ANONYMOUS
from .webhooks import WebhookSender

__all__ = ["PAYPAL_CART_PREFIX", "UCP_PREFIX", "create_merchant_app"]

PAYPAL_CART_PREFIX = "/api/paypal/v1"
UCP_PREFIX = "/ucp"


def create_merchant_app(
    merchant: Merchant,
    agents: Agents,
    *,
    base_url: str,
    webhooks: WebhookSender | None = None,
    mcp_url: str | None = None,
    paypal_cart: JwtVerifier | None = None,
    ucp_profiles: PlatformProfiles | None = None,
    ucp_mcp_url: str | None = None,
    ucp_policy: UcpPolicy | None = None,
    ucp_prefix: str = UCP_PREFIX,
    storefront_url: str | None = None,
) -> FastAPI:
    """A FastAPI app serving ACP at the root (``/checkout_sessions``, ``/.well-known/acp.json``)
    and, with ``paypal_cart`` (the check of PayPal's JWTs), PayPal's Cart API at
    ``/api/paypal/v1/merchant-cart`` (the base path PayPal's Store Sync guide uses).

    UCP is served too: the business profile at ``/.well-known/ucp`` and the REST operations
    under ``/ucp`` (the profile's endpoint); ``ucp_profiles`` is where platform profiles come
    from (fetched over HTTPS by default); ``ucp_mcp_url`` is where UCP's MCP binding is served,
    if it is (see ``ucp_mcp_app``; the app's ``state.ucp`` is the service it must share);
    ``ucp_policy`` is how platforms are met (releases, access, negotiation, private URLs);
    ``ucp_prefix`` is where the UCP operations are mounted (``""``: at the root, beside ACP's,
    whose paths differ); ``storefront_url`` is the store's web shop, where UCP's buyer-facing
    links lead (default: the merchant's own pages under ``/shop``, always served).

    With ``webhooks``, order events (ACP's and UCP's, the latter signed with the UCP business
    key) are delivered in the background while the app runs;
    ``mcp_url`` is where the ACP MCP binding is served, if it is (see ``acp_mcp_app``).

    A body over :data:`~cartagent.commerce.requests.MAX_BODY` is refused with 413 before it is
    read (in the error shape of the protocol its path belongs to), and each protocol's routes
    check the caller's credentials before they read a body.
    """

    profiles = ucp_profiles or FetchedProfiles()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if webhooks is not None:
            webhooks.start()
        try:
            yield
        finally:
            if webhooks is not None:
                webhooks.stop()
            if isinstance(profiles, FetchedProfiles):
                profiles.close()

    app = FastAPI(title="cartagent merchant", docs_url=None, redoc_url=None, lifespan=lifespan)
    service = AcpService(merchant, agents, AcpSettings(base_url=base_url, mcp_url=mcp_url))
    app.state.acp = service  # for the MCP binding's app, which must share it
    app.include_router(acp_router(service))
    ucp = UcpService(
        merchant,
        agents,
        UcpSettings(
            base_url=base_url,
            api_prefix=ucp_prefix,
            mcp_url=ucp_mcp_url,
            policy=ucp_policy or UcpPolicy(),
            storefront_url=storefront_url,
        ),
        profiles,
    )
    app.state.ucp = ucp
    if webhooks is not None:
        webhooks.sign_with("ucp", ucp.webhook_signer())
        if ucp.settings.policy.open_access:
            webhooks.send_for(ANONYMOUS.name)
    app.include_router(ucp_router(ucp))
    app.include_router(storefront_router(merchant, base_url))
    if paypal_cart is not None:
        cart = PayPalCartService(merchant, paypal_cart)
        app.include_router(paypal_cart_router(cart), prefix=PAYPAL_CART_PREFIX)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY, refusal=partial(_too_large, ucp_prefix))
    return app


_UCP_PATHS = ("/checkout-sessions", "/orders/", "/catalog/", "/testing/")


def _too_large(ucp_prefix: str, scope: Scope, message: str) -> bytes:
    """A 413's body in the error shape of the protocol the request's path belongs to."""
    path = str(scope.get("path", ""))
    ucp = path.startswith(ucp_prefix + "/") if ucp_prefix else path.startswith(_UCP_PATHS)
    if path.startswith(PAYPAL_CART_PREFIX + "/"):
        body = paypal_cart_wire.error("INVALID_REQUEST", message, secrets.token_hex(8))
    elif ucp:
        body = {"code": "request_too_large", "content": message}
    else:
        body = {"type": "invalid_request", "code": "request_too_large", "message": message}
    return orjson.dumps(body)
