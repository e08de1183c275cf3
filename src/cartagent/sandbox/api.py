"""How every sandbox operation runs: one pipeline from HTTP request to committed response.

An operation is a plain function ``fn(call, tx, **path_params) -> Reply``. The pipeline around it
authenticates the bearer token, parses and validates the JSON body and query string against
PayPal's spec, honours ``PayPal-Mock-Response``, opens one database transaction, replays or
records the ``PayPal-Request-Id``, and renders errors in PayPal's envelope. Nothing is written
unless the operation returns.
"""

from __future__ import annotations

import asyncio
from asyncio import AbstractEventLoop
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import orjson
from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter, Request
from fastapi.responses import Response

from . import mocks, spec
from .errors import PayPalError, invalid_request, not_found
from .identity.oauth import bearer_merchant
from .responses import JSON, json_response
from .state import Sandbox
from .store import Row, Store, Tx, dumps


@dataclass
class Reply:
    """What an operation returns: a JSON body (or none, for 204) and its status."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    media_type: str = JSON


@dataclass
class Call:
    """One authenticated, validated request."""

    sandbox: Sandbox
    merchant_id: str
    body: Any
    query: dict[str, Any]
    headers: dict[str, str]
    base_url: str
    now: datetime

    @property
    def request_id(self) -> str | None:
        return self.headers.get("paypal-request-id")

    @property
    def wants_representation(self) -> bool:
        return "return=representation" in self.headers.get("prefer", "").lower()

    @classmethod
    def for_page(cls, request: Request, sandbox: Sandbox, tx: Tx) -> Call:
        """A call made from a buyer-facing page (no bearer token or body) as ``tx``'s merchant,
        at the sandbox time read inside ``tx``."""
        return cls(
            sandbox=sandbox,
            merchant_id=tx.merchant_id,
            body=None,
            query={},
            headers={},
            base_url=str(request.base_url).rstrip("/"),
            now=sandbox.now_in(tx),
        )

    def link(self, path: str, rel: str, method: str = "GET") -> dict[str, str]:
        return {"href": f"{self.base_url}{path}", "rel": rel, "method": method}


Handler = Callable[..., Reply]
WEBHOOK_KIND = "webhook"
T = TypeVar("T")


# Per event loop and store: as many requests in worker threads as the store has connections.
_LIMITERS: WeakKeyDictionary[AbstractEventLoop, WeakKeyDictionary[Store, CapacityLimiter]] = (
    WeakKeyDictionary()
)


async def run_store_work(sandbox: Sandbox, fn: Callable[..., T], *args: Any) -> T:
    """Run blocking database work: inline on SQLite (and PostgreSQL when asked, see
    ``Store.inline``), else in a thread.

    Threads are limited to the store's pool of connections, so a request never holds a thread
    while it waits for a connection, and the database sees a steady number of sessions: the
    others wait their turn on the event loop, which costs nothing.
    """
    store = sandbox.store
    if store.inline:
        return fn(*args)
    per_store = _LIMITERS.setdefault(asyncio.get_running_loop(), WeakKeyDictionary())
    limiter = per_store.get(store)
    if limiter is None:
        limiter = per_store[store] = CapacityLimiter(store.concurrency)
    return await to_thread.run_sync(fn, *args, limiter=limiter)


def parse_body(raw: bytes, content_type: str, op_key: str | None = None) -> Any:
    """The JSON body, ``None`` when empty; PayPal's 415/400 otherwise."""
    if not raw.strip():
        return None
    if content_type and "json" not in content_type.lower():
        raise PayPalError(415)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        malformed = spec.documented_detail(op_key, "MALFORMED_REQUEST_JSON", field="/")
        raise PayPalError(400, details=[malformed]) from None


def operation(
    router: APIRouter,
    method: str,
    path: str,
    op_key: str,
    *,
    write: bool = True,
    idempotency_ttl: timedelta | None = None,
    replay_status: int | None = None,
    body_required: bool | None = None,
) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the sandbox's implementation of PayPal operation ``op_key``.

    ``idempotency_ttl`` turns on ``PayPal-Request-Id`` replay for that long; a replay answers
    ``replay_status`` when given (a replayed capture is 200 where the first was 201).
    """
    op = spec.operation(op_key)
    needs_body = op.body_schema is not None if body_required is None else body_required

    def register(fn: Handler) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                return await run(request)
            except PayPalError as error:
                raise spec.conform(op_key, error) from None

        async def run(request: Request) -> Response:
            sandbox: Sandbox = request.app.state.sandbox
            headers = {k.lower(): v for k, v in request.headers.items()}
            merchant_id = bearer_merchant(sandbox, headers.get("authorization"))
            body = parse_body(await request.body(), headers.get("content-type", ""), op_key)
            if body is None and needs_body and method in ("POST", "PUT", "PATCH"):
                missing = spec.documented_detail(op_key, "MISSING_REQUIRED_PARAMETER", field="/")
                raise PayPalError(400, details=[missing])
            if isinstance(body, dict):
                # An object's null members are absent, as PayPal reads them; a JSON Patch
                # document (an array) keeps its nulls: "value": null is a value there.
                body = spec.without_nulls(body)
            if body is not None:
                spec.validate_body(op_key, body)
            query = spec.validate_query(op_key, dict(request.query_params))
            mock = headers.get("paypal-mock-response")
            if mock:
                raise mocks.mocked_error(op_key, mock)
            if not headers.get("paypal-request-id", "x").strip():
                headers.pop("paypal-request-id")  # an empty key is no key
            request_id = headers.get("paypal-request-id")
            if request_id is not None and len(request_id) > 108:
                raise invalid_request(
                    "INVALID_STRING_LENGTH",
                    field="PayPal-Request-Id",
                    value=request_id,
                    location="header",
                )
            call = partial(
                Call,
                sandbox=sandbox,
                merchant_id=merchant_id,
                body=body,
                query=query,
                headers=headers,
                base_url=str(request.base_url).rstrip("/"),
            )
            params = dict(request.path_params)
            return await run_store_work(
                sandbox, _execute, call, fn, params, write, op_key, idempotency_ttl, replay_status
            )

        endpoint.__name__ = fn.__name__
        # A plain Starlette route: the pipeline above does all the parsing, so FastAPI's
        # per-request dependency solving would be pure overhead.
        router.add_route(path, endpoint, methods=[method], include_in_schema=False)
        return fn

    return register


def _render(reply: Reply) -> Response:
    if reply.content is not None:
        return Response(
            content=reply.content,
            status_code=reply.status,
            media_type=reply.media_type,
            headers=reply.headers,
        )
    if reply.status == 204:
        return Response(status_code=204, headers=reply.headers)
    return json_response(reply.body, reply.status, reply.headers)


def _execute(
    call_at: partial[Call],
    fn: Handler,
    params: dict[str, str],
    write: bool,
    op_key: str,
    ttl: timedelta | None,
    replay_status: int | None,
) -> Response:
    sandbox: Sandbox = call_at.keywords["sandbox"]
    with sandbox.store.transaction(call_at.keywords["merchant_id"], write=write) as tx:
        if write:
            # Writes emit events, which go to the merchant's webhooks: sent ahead, that lookup
            # shares the round trip that reads the clock.
            tx.prefetch(WEBHOOK_KIND)
        # The call's time is the merchant's clock read in the request's own transaction,
        # which needs no connection or round trips of its own.
        call = call_at(now=sandbox.now_in(tx))
        key = call.request_id if ttl is not None else None
        if key is not None:
            tx.lock_key(op_key, key)
            replayed = tx.replay(op_key, key, call.now)
            if replayed is not None:
                status, text = replayed
                status = replay_status or status
                return Response(content=text.encode(), status_code=status, media_type=JSON)
        reply = fn(call, tx, **params)
        if key is not None and ttl is not None and reply.status < 300 and reply.content is None:
            tx.remember(op_key, key, reply.status, dumps(reply.body), call.now + ttl)
    return _render(reply)


def require(tx: Tx, kind: str, resource_id: str, *, lock: bool = False) -> Row:
    """Load a resource of this merchant or fail with PayPal's 404."""
    row = tx.get(kind, resource_id, lock=lock)
    if row is None:
        raise not_found(resource_id)
    return row
