"""ACP's REST binding: discovery, and checkout sessions created, updated, read, completed and
canceled, with the spec's headers and its idempotency rules.

Every call: ``Authorization: Bearer`` (401 otherwise), ``API-Version`` (400
``missing_api_version`` / ``unsupported_api_version``), a valid ``Signature`` for agents that
sign. Every POST: ``Idempotency-Key`` (400 ``idempotency_key_required``), scoped to the agent
and the path; the same key and body replays the stored answer with ``Idempotent-Replayed:
true``, another body is 422 ``idempotency_conflict``, a call still running is 409
``idempotency_in_flight`` with ``Retry-After``; 5xx answers are never stored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ...errors import CheckoutError
from ..agents import AgentKey, Agents, signature_problem
from ..checkout import Checkout
from ..merchant import Merchant, PaymentUnavailable
from ..records import Event, fingerprint
from . import feed, wire
from .schema import SUPPORTED_VERSIONS, check

__all__ = ["AcpSettings", "acp_router"]

log = logging.getLogger(__name__)

MAX_KEY = 255
MAX_BODY = 256 * 1024
RETRY_AFTER = "1"


@dataclass(frozen=True)
class AcpSettings:
    base_url: str
    environment: str = "sandbox"


class _Refusal(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        param: str | None = None,
        kind: str = "invalid_request",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = {"type": kind, "code": code, "message": message}
        if param is not None:
            self.body["param"] = param
        self.headers = headers or {}


def _json(status: int, body: Any, headers: dict[str, str]) -> Response:
    return Response(orjson.dumps(body), status, headers, media_type="application/json")


def _refusal(error: CheckoutError, *, cancel: bool = False) -> _Refusal:
    status = error.status
    if cancel and error.code == "invalid_state":
        status = 405  # the RFC: cancelling a completed or canceled session is 405
    headers = {"Retry-After": RETRY_AFTER} if error.code == "in_progress" else None
    return _Refusal(
        status, error.code, error.message, param=wire.acp_param(error.param), headers=headers
    )


Handler = Callable[[AgentKey, dict[str, Any] | None], tuple[int, dict[str, Any]]]


def acp_router(merchant: Merchant, agents: Agents, settings: AcpSettings) -> APIRouter:
    router = APIRouter()

    def order_created(checkout: Checkout) -> list[Event]:
        agent = agents.named(checkout.owner)
        if agent is None or agent.webhook_url is None:
            return []
        order = render(checkout)["order"]
        body = orjson.dumps({"type": "order_create", "data": order})
        return [Event(agent.name, agent.webhook_url, body)]

    merchant.announce_with("acp", order_created)

    def render(checkout: Checkout, warnings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return wire.session(
            checkout,
            merchant.bill(checkout),
            base_url=settings.base_url,
            environment=settings.environment,
            warnings=warnings,
        )

    async def serve(request: Request, schema: str | None, handler: Handler) -> Response:
        headers: dict[str, str] = {}
        request_id = request.headers.get("request-id")
        if request_id:
            headers["Request-Id"] = request_id[:255]
        key = request.headers.get("idempotency-key")
        if request.method == "POST" and key is not None:
            headers["Idempotency-Key"] = key[:MAX_KEY]
        try:
            agent = _agent(request, agents)
            _version(request)
            if request.method == "POST" and not key:
                raise _Refusal(
                    400,
                    "idempotency_key_required",
                    "Idempotency-Key header is required on all POST requests",
                )
            if key is not None and len(key) > MAX_KEY:
                raise _Refusal(400, "invalid", f"Idempotency-Key is longer than {MAX_KEY}")
            body = await _body(request, schema)
            problem = signature_problem(
                agent,
                request.headers.get("signature"),
                request.headers.get("timestamp"),
                body,
                merchant.clock(),
            )
            if problem is not None:
                raise _Refusal(401, "invalid_signature", problem)
            if key is None or request.method != "POST":
                status, payload = await run_in_threadpool(handler, agent, body)
                return _json(status, payload, headers)
            return await _idempotent(request, agent, key, body, handler, headers)
        except _Refusal as refusal:
            return _json(refusal.status, refusal.body, headers | refusal.headers)

    async def _idempotent(
        request: Request,
        agent: AgentKey,
        key: str,
        body: dict[str, Any] | None,
        handler: Handler,
        headers: dict[str, str],
    ) -> Response:
        scope = f"acp {agent.name} {request.url.path}"
        records = merchant.records
        claim = await run_in_threadpool(
            records.claim, scope, key, fingerprint(body), merchant.clock()
        )
        if claim.kind == "replay":
            replayed = headers | {"Idempotent-Replayed": "true"}
            return Response(claim.body, claim.status_code, replayed, media_type="application/json")
        if claim.kind == "conflict":
            raise _Refusal(
                422,
                "idempotency_conflict",
                "Idempotency-Key has already been used with a different request body",
            )
        if claim.kind == "in_flight":
            raise _Refusal(
                409,
                "idempotency_in_flight",
                "A request with this Idempotency-Key is currently being processed",
                headers={"Retry-After": RETRY_AFTER},
            )
        status: int = 500
        payload: dict[str, Any] = {}
        extra: dict[str, str] = {}
        try:
            status, payload = await run_in_threadpool(handler, agent, body)
        except _Refusal as refusal:
            status, payload, extra = refusal.status, refusal.body, refusal.headers
        except PaymentUnavailable as error:
            status, extra = 503, {"Retry-After": "5"}
            payload = {
                "type": "service_unavailable",
                "code": "payment_unavailable",
                "message": f"PayPal could not be reached; retry: {error}",
            }
        except Exception:
            log.exception("ACP %s %s failed", request.method, request.url.path)
            payload = {
                "type": "processing_error",
                "code": "internal_error",
                "message": "the merchant failed to process the request",
            }
        encoded = orjson.dumps(payload)
        await run_in_threadpool(records.finish, scope, key, status, encoded)
        return Response(encoded, status, headers | extra, media_type="application/json")

    @router.get("/.well-known/acp.json", include_in_schema=False)
    def well_known() -> Response:
        return _json(200, wire.discovery(settings.base_url), {})

    started = merchant.clock()

    @router.get("/feed/metadata.json", include_in_schema=False)
    def metadata() -> Response:
        return _json(200, feed.feed_metadata(started), {})

    @router.get("/feed/products.jsonl", include_in_schema=False)
    def products() -> StreamingResponse:
        lines = (
            orjson.dumps(feed.feed_product(product)) + b"\n"
            for product in merchant.catalog.products
        )
        return StreamingResponse(lines, media_type="application/jsonl")

    @router.post("/checkout_sessions")
    async def create(request: Request) -> Response:
        def run(agent: AgentKey, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            assert body is not None
            try:
                checkout = merchant.create(
                    agent.name, "acp", body["currency"], wire.changes_from(body)
                )
            except CheckoutError as error:
                raise _refusal(error) from error
            return 201, render(checkout, wire.price_warnings(body, merchant.bill(checkout)))

        return await serve(request, "CheckoutSessionCreateRequest", run)

    @router.post("/checkout_sessions/{checkout_session_id}")
    async def update(request: Request, checkout_session_id: str) -> Response:
        def run(agent: AgentKey, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            assert body is not None
            try:
                checkout = merchant.update(agent.name, checkout_session_id, wire.changes_from(body))
            except CheckoutError as error:
                raise _refusal(error) from error
            return 200, render(checkout, wire.price_warnings(body, merchant.bill(checkout)))

        return await serve(request, "CheckoutSessionUpdateRequest", run)

    @router.get("/checkout_sessions/{checkout_session_id}")
    async def get(request: Request, checkout_session_id: str) -> Response:
        def run(agent: AgentKey, _body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            try:
                return 200, render(merchant.get(agent.name, checkout_session_id))
            except CheckoutError as error:
                raise _refusal(error) from error

        return await serve(request, None, run)

    @router.post("/checkout_sessions/{checkout_session_id}/complete")
    async def complete(request: Request, checkout_session_id: str) -> Response:
        def run(agent: AgentKey, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            assert body is not None
            try:
                token = wire.payment_token(body)
                buyer = wire.changes_from(body).buyer
                checkout = merchant.complete(agent.name, checkout_session_id, token, buyer)
            except CheckoutError as error:
                raise _refusal(error) from error
            return 200, render(checkout)

        return await serve(request, "CheckoutSessionCompleteRequest", run)

    @router.post("/checkout_sessions/{checkout_session_id}/cancel")
    async def cancel(request: Request, checkout_session_id: str) -> Response:
        def run(agent: AgentKey, _body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
            try:
                return 200, render(merchant.cancel(agent.name, checkout_session_id))
            except CheckoutError as error:
                raise _refusal(error, cancel=True) from error

        return await serve(request, "CancelSessionRequest", run)

    return router


def _agent(request: Request, agents: Agents) -> AgentKey:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    agent = agents.by_token(token.strip()) if scheme.lower() == "bearer" and token else None
    if agent is None:
        raise _Refusal(
            401,
            "unauthorized",
            "a valid bearer token is required",
            headers={"WWW-Authenticate": 'Bearer realm="acp"'},
        )
    return agent


def _version(request: Request) -> None:
    version = request.headers.get("api-version")
    supported = ", ".join(SUPPORTED_VERSIONS)
    if not version:
        raise _Refusal(
            400, "missing_api_version", f"API-Version header is required; supported: {supported}"
        )
    if version not in SUPPORTED_VERSIONS:
        raise _Refusal(
            400,
            "unsupported_api_version",
            f"API-Version {version[:40]!r} is not supported; supported: {supported}",
        )


async def _body(request: Request, schema: str | None) -> dict[str, Any] | None:
    if request.method != "POST":
        return None
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise _Refusal(413, "request_too_large", f"the body is over {MAX_BODY} bytes")
    if not raw.strip():
        body: Any = {}
    else:
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise _Refusal(400, "invalid_json", f"the body is not JSON: {error}") from None
    if schema is not None:
        try:
            check(schema, body)
        except CheckoutError as error:
            raise _Refusal(
                400, error.code, error.message, param=wire.acp_param(error.param)
            ) from None
    if not isinstance(body, dict):
        raise _Refusal(400, "invalid", "the body must be a JSON object", param="$")
    return body
