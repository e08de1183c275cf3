"""ACP's checkout operations with the spec's rules, whatever transport carries them (REST or
the MCP binding): one :class:`AcpService` answers a :class:`AcpCall` with an :class:`AcpAnswer`.

Every call: an authenticated agent (401 otherwise), ``API-Version`` (400
``missing_api_version`` / ``unsupported_api_version``), a valid ``Signature`` for agents that
sign. Every mutating call: ``Idempotency-Key`` (400 ``idempotency_key_required``), scoped to the
agent and the operation's path; the same key and body replays the stored answer with
``Idempotent-Replayed: true``, another body is 422 ``idempotency_conflict``, a call still
running is 409 ``idempotency_in_flight`` with ``Retry-After``; 5xx answers are never stored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from ...errors import CheckoutError
from ..agents import AgentKey, Agents, signature_problem
from ..checkout import Checkout
from ..merchant import Merchant, PaymentUnavailable
from ..records import Event, fingerprint
from . import wire
from .schema import SUPPORTED_VERSIONS, check

__all__ = ["OPERATIONS", "AcpAnswer", "AcpCall", "AcpService", "AcpSettings", "Operation"]

log = logging.getLogger(__name__)

MAX_KEY = 255
MAX_BODY = 256 * 1024
RETRY_AFTER = "1"


@dataclass(frozen=True)
class AcpSettings:
    """Where agents reach the merchant, and its MCP binding if it serves one."""

    base_url: str
    environment: str = "sandbox"
    mcp_url: str | None = None


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: str  # with {id} for the session id
    schema: str | None  # the request body's $defs name, None without a body


OPERATIONS = {
    op.name: op
    for op in (
        Operation("create", "POST", "/checkout_sessions", "CheckoutSessionCreateRequest"),
        Operation("update", "POST", "/checkout_sessions/{id}", "CheckoutSessionUpdateRequest"),
        Operation("get", "GET", "/checkout_sessions/{id}", None),
        Operation(
            "complete", "POST", "/checkout_sessions/{id}/complete", "CheckoutSessionCompleteRequest"
        ),
        Operation("cancel", "POST", "/checkout_sessions/{id}/cancel", "CancelSessionRequest"),
        Operation("cart_create", "POST", "/carts", "CartCreateRequest"),
        Operation("cart_get", "GET", "/carts/{id}", None),
        Operation("cart_update", "PUT", "/carts/{id}", "CartUpdateRequest"),
        Operation("cart_cancel", "POST", "/carts/{id}/cancel", None),
    )
}
CART = "acp_cart"
"""The protocol name carts are stored under: a cart is never a checkout session."""


@dataclass(frozen=True)
class AcpCall:
    """One request: the operation, its session id, headers (lower-case names) and raw body.

    ``agent`` is set when the transport authenticated the caller itself (MCP); otherwise the
    ``authorization`` header is checked. ``key_required`` is False where the binding only
    recommends an ``Idempotency-Key`` (MCP).
    """

    operation: Operation
    headers: Mapping[str, str]
    body: bytes | None = None
    session_id: str | None = None
    agent: AgentKey | None = None
    key_required: bool = True

    @property
    def path(self) -> str:
        return self.operation.path.replace("{id}", self.session_id or "")


@dataclass(frozen=True)
class AcpAnswer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    replayed: bool = False

    def json(self) -> Any:
        return orjson.loads(self.body)


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


def _refusal(error: CheckoutError, *, cancel: bool = False) -> _Refusal:
    status = error.status
    if cancel and error.code == "invalid_state":
        status = 405  # the RFC: cancelling a completed or canceled session is 405
    headers = {"Retry-After": RETRY_AFTER} if error.code == "in_progress" else None
    return _Refusal(
        status, error.code, error.message, param=wire.acp_param(error.param), headers=headers
    )


Handler = Callable[[AgentKey, str | None, dict[str, Any] | None], tuple[int, dict[str, Any]]]


class AcpService:
    def __init__(self, merchant: Merchant, agents: Agents, settings: AcpSettings) -> None:
        self.merchant = merchant
        self.agents = agents
        self.settings = settings
        self._handlers: dict[str, Handler] = {
            "create": self._create,
            "update": self._update,
            "get": self._get,
            "complete": self._complete,
            "cancel": self._cancel,
            "cart_create": self._cart_create,
            "cart_get": self._cart_get,
            "cart_update": self._cart_update,
            "cart_cancel": self._cart_cancel,
        }
        merchant.announce_with("acp", self._order_created)

    def render(
        self, checkout: Checkout, warnings: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        return wire.session(
            checkout,
            self.merchant.bill(checkout),
            base_url=self.settings.base_url,
            environment=self.settings.environment,
            warnings=warnings,
        )

    def _order_created(self, checkout: Checkout) -> list[Event]:
        agent = self.agents.named(checkout.owner)
        if agent is None or agent.webhook_url is None:
            return []
        body = orjson.dumps({"type": "order_create", "data": self.render(checkout)["order"]})
        return [Event(agent.name, agent.webhook_url, body)]

    async def answer(self, call: AcpCall) -> AcpAnswer:
        """Answer ``call`` in a worker thread: its database and PayPal calls block, and one
        hop per request (not one per step) keeps the event loop's overhead down."""
        return await run_in_threadpool(self.answer_sync, call)

    def answer_sync(self, call: AcpCall) -> AcpAnswer:
        headers: dict[str, str] = {}
        request_id = call.headers.get("request-id")
        if request_id:
            headers["Request-Id"] = request_id[:255]
        key = call.headers.get("idempotency-key")
        posting = call.operation.method != "GET"  # every call that changes something
        if posting and key is not None:
            headers["Idempotency-Key"] = key[:MAX_KEY]
        try:
            agent = call.agent or self._agent(call.headers)
            _version(call.headers)
            if posting and not key and call.key_required:
                raise _Refusal(
                    400,
                    "idempotency_key_required",
                    "Idempotency-Key header is required on all POST requests",
                )
            if key is not None and len(key) > MAX_KEY:
                raise _Refusal(400, "invalid", f"Idempotency-Key is longer than {MAX_KEY}")
            body = _body(call)
            problem = signature_problem(
                agent,
                call.headers.get("signature"),
                call.headers.get("timestamp"),
                body,
                self.merchant.clock(),
            )
            if problem is not None:
                raise _Refusal(401, "invalid_signature", problem)
            handler = self._handlers[call.operation.name]
            if not posting or key is None:
                status, payload = handler(agent, call.session_id, body)
                return AcpAnswer(status, orjson.dumps(payload), headers)
            return self._idempotent(call, agent, key, body, handler, headers)
        except _Refusal as refusal:
            return AcpAnswer(refusal.status, orjson.dumps(refusal.body), headers | refusal.headers)

    def _idempotent(
        self,
        call: AcpCall,
        agent: AgentKey,
        key: str,
        body: dict[str, Any] | None,
        handler: Handler,
        headers: dict[str, str],
    ) -> AcpAnswer:
        scope = f"acp {agent.name} {call.path}"
        records = self.merchant.records
        claim = records.claim(scope, key, fingerprint(body), self.merchant.clock())
        if claim.kind == "replay":
            replayed = headers | {"Idempotent-Replayed": "true"}
            return AcpAnswer(claim.status_code, claim.body, replayed, replayed=True)
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
            status, payload = handler(agent, call.session_id, body)
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
            log.exception("ACP %s %s failed", call.operation.name, call.path)
            payload = {
                "type": "processing_error",
                "code": "internal_error",
                "message": "the merchant failed to process the request",
            }
        encoded = orjson.dumps(payload)
        records.finish(scope, key, status, encoded)
        return AcpAnswer(status, encoded, headers | extra)

    def _agent(self, headers: Mapping[str, str]) -> AgentKey:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        found = None
        if scheme.lower() == "bearer" and token.strip():
            found = self.agents.by_token(token.strip())
        if found is None:
            raise _Refusal(
                401,
                "unauthorized",
                "a valid bearer token is required",
                headers={"WWW-Authenticate": 'Bearer realm="acp"'},
            )
        return found

    # The operations (in the worker thread of answer()).

    def _create(
        self, agent: AgentKey, _id: str | None, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert body is not None
        try:
            checkout = self.merchant.create(
                agent.name, "acp", body["currency"], wire.changes_from(body)
            )
        except CheckoutError as error:
            raise _refusal(error) from error
        warnings = wire.price_warnings(body, self.merchant.bill(checkout))
        return 201, self.render(checkout, warnings)

    def _update(
        self, agent: AgentKey, session_id: str | None, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert body is not None and session_id is not None
        try:
            checkout = self.merchant.update(
                agent.name, session_id, wire.changes_from(body), protocol="acp"
            )
        except CheckoutError as error:
            raise _refusal(error) from error
        warnings = wire.price_warnings(body, self.merchant.bill(checkout))
        return 200, self.render(checkout, warnings)

    def _get(
        self, agent: AgentKey, session_id: str | None, _body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert session_id is not None
        try:
            return 200, self.render(self.merchant.get(agent.name, session_id, protocol="acp"))
        except CheckoutError as error:
            raise _refusal(error) from error

    def _complete(
        self, agent: AgentKey, session_id: str | None, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert body is not None and session_id is not None
        try:
            token = wire.payment_token(body)
            buyer = wire.changes_from(body).buyer
            checkout = self.merchant.complete(agent.name, session_id, token, buyer, protocol="acp")
        except CheckoutError as error:
            raise _refusal(error) from error
        return 200, self.render(checkout)

    def _cancel(
        self, agent: AgentKey, session_id: str | None, _body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert session_id is not None
        try:
            return 200, self.render(self.merchant.cancel(agent.name, session_id, protocol="acp"))
        except CheckoutError as error:
            raise _refusal(error, cancel=True) from error

    # Carts (rfc.cart): item collection before checkout, estimates only, no lifecycle: a
    # canceled cart is gone (404), as is one that expired.

    def _cart(self, agent: AgentKey, cart_id: str | None) -> Checkout:
        assert cart_id is not None
        try:
            found = self.merchant.get(agent.name, cart_id, protocol=CART)
        except CheckoutError as error:
            raise _refusal(error) from error
        if found.status != "open" or found.expires_at <= self.merchant.clock():
            raise _Refusal(404, "not_found", f"no cart {cart_id}", param="$.id")
        return found

    def _render_cart(
        self, checkout: Checkout, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        bill = self.merchant.bill(checkout)
        warnings = wire.price_warnings(body, bill) if body else None
        return wire.cart(checkout, bill, warnings)

    def _cart_create(
        self, agent: AgentKey, _id: str | None, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert body is not None
        try:
            checkout = self.merchant.create(
                agent.name, CART, self.merchant.terms.currency, wire.changes_from(body),
                prefix="cart",
            )  # fmt: skip
        except CheckoutError as error:
            raise _refusal(error) from error
        return 201, self._render_cart(checkout, body)

    def _cart_get(
        self, agent: AgentKey, cart_id: str | None, _body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        return 200, self._render_cart(self._cart(agent, cart_id))

    def _cart_update(
        self, agent: AgentKey, cart_id: str | None, body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        assert body is not None
        current = self._cart(agent, cart_id)
        try:
            checkout = self.merchant.overwrite(
                agent.name, current.id, wire.changes_from(body), protocol=CART
            )
        except CheckoutError as error:
            raise _refusal(error) from error
        return 200, self._render_cart(checkout, body)

    def _cart_cancel(
        self, agent: AgentKey, cart_id: str | None, _body: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any]]:
        current = self._cart(agent, cart_id)
        try:
            self.merchant.cancel(agent.name, current.id, protocol=CART)
        except CheckoutError as error:
            raise _refusal(error) from error
        return 200, self._render_cart(current)  # the cart as it was, as the RFC asks


def _version(headers: Mapping[str, str]) -> None:
    version = headers.get("api-version")
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


def _body(call: AcpCall) -> dict[str, Any] | None:
    if call.operation.method == "GET":
        return None
    raw = call.body or b""
    if len(raw) > MAX_BODY:
        raise _Refusal(413, "request_too_large", f"the body is over {MAX_BODY} bytes")
    body: Any = {}
    if raw.strip():
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise _Refusal(400, "invalid_json", f"the body is not JSON: {error}") from None
    if call.operation.schema is not None:
        try:
            check(call.operation.schema, body)
        except CheckoutError as error:
            raise _Refusal(
                400, error.code, error.message, param=wire.acp_param(error.param)
            ) from None
    if not isinstance(body, dict):
        raise _Refusal(400, "invalid", "the body must be a JSON object", param="$")
    return body
