"""The sandbox as an ASGI application."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from ..body_limit import BodyLimit
from . import clock_routes
from .agentic import cart_api, delegate_payment
from .billing import plans, products, subscriptions
from .clock import Clock
from .database import migrate
from .disputes import routes as disputes
from .engine import DEFAULT_POOL_SIZE, create_engine
from .errors import PayPalError
from .identity import authorization_server, oauth
from .identity.client_secrets import LOG2_N
from .ids import IdFactory
from .invoicing import conditional_rules, pages, recurring, reminders
from .invoicing import routes as invoicing
from .payments import buyer_page, captures, orders
from .reporting import insights, transactions
from .responses import json_response
from .shipping import tracking
from .state import Sandbox
from .store import Store
from .webhooks import delivery
from .webhooks import routes as webhooks

log = logging.getLogger("cartagent.sandbox")

MAX_BODY = 10 * 1024 * 1024
"""Bytes of one request body: room for a dispute's evidence file (PayPal takes 10 MB each)."""

ROUTERS = (
    oauth.router,
    orders.router,
    buyer_page.router,
    pages.router,
    captures.router,
    invoicing.router,
    recurring.router,
    reminders.router,
    conditional_rules.router,
    products.router,
    plans.router,
    subscriptions.router,
    disputes.router,
    tracking.router,
    transactions.router,
    insights.router,
    webhooks.router,
    clock_routes.router,
    cart_api.router,
    authorization_server.router,
    delegate_payment.router,
)


def open_sandbox(
    db_url: str,
    *,
    clock: Clock | None = None,
    ids: IdFactory | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    db_calls: str = "auto",
    allow_private_webhooks: bool = False,
    secret_cost: int = LOG2_N,
) -> Sandbox:
    """Connect to (and migrate) the sandbox database at ``db_url`` (``pool_size``: PostgreSQL
    connections for requests; ``db_calls``: see :func:`~.engine.calls_inline`;
    ``allow_private_webhooks``: webhooks may go to loopback and private addresses, for local
    development; ``secret_cost``: log2 of scrypt's N for the client secrets it stores, see
    :mod:`.client_secrets`)."""
    engine = create_engine(db_url, pool_size=pool_size)
    store = Store(engine, db_calls=db_calls, secret_cost=secret_cost)
    migrate(store.engine)
    key = store.meta_get("token_key") or store.meta_setdefault("token_key", secrets.token_hex(32))
    sandbox = Sandbox(
        store=store,
        clock=clock or Clock(),
        ids=ids or IdFactory(),
        allow_private_webhooks=allow_private_webhooks,
    )
    sandbox.token_key = bytes.fromhex(key)
    return sandbox


def ensure_merchant(sandbox: Sandbox, client_id: str, client_secret: str) -> str:
    """Create the merchant owning these credentials if it does not exist (an existing one
    takes this secret); return its id."""
    existing = sandbox.store.merchant_by_client_id(client_id)
    merchant_id = existing.id if existing is not None else sandbox.ids.payer()
    merchant = sandbox.store.ensure_merchant(
        merchant_id,
        client_id,
        client_secret,
        f"sb-{merchant_id.lower()}@business.example.com",
        datetime.now(UTC),
    )
    return merchant.id


def create_app(sandbox: Sandbox, *, deliver_webhooks: bool = False) -> FastAPI:
    """The HTTP application for ``sandbox``; ``deliver_webhooks`` starts the delivery worker."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        worker = delivery.DeliveryWorker(sandbox) if deliver_webhooks else None
        if worker is not None:
            worker.start()
        try:
            yield
        finally:
            if worker is not None:
                worker.stop()

    app = FastAPI(
        title="cartagent PayPal sandbox",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.sandbox = sandbox
    for router in ROUTERS:
        app.include_router(router)

    @app.exception_handler(PayPalError)
    async def paypal_error(request: Request, error: PayPalError) -> Response:
        return _error_response(sandbox, error)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        status = error.status_code if error.status_code in (404, 405) else 400
        return _error_response(sandbox, PayPalError(status))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> Response:
        log.exception("unhandled error in %s %s", request.method, request.url.path)
        return _error_response(sandbox, PayPalError(500))

    def too_large(_scope: Scope, message: str) -> tuple[bytes, dict[str, str]]:
        debug_id = sandbox.ids.debug_id()
        sentence = f"{message[:1].upper()}{message[1:]}."  # PayPal's messages are sentences
        error = PayPalError(413, name="REQUEST_ENTITY_TOO_LARGE", message=sentence)
        return orjson.dumps(error.body(debug_id)), {"Paypal-Debug-Id": debug_id}

    app.add_middleware(BodyLimit, max_bytes=MAX_BODY, refusal=too_large)
    return app


def _error_response(sandbox: Sandbox, error: PayPalError) -> Response:
    debug_id = sandbox.ids.debug_id()
    headers = {"Paypal-Debug-Id": debug_id, **error.headers}
    return json_response(error.body(debug_id), error.status, headers)
