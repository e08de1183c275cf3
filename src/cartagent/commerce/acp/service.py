"""ACP's checkout operations with the spec's rules, whatever transport carries them (REST or
the MCP binding): one :class:`AcpService` answers a :class:`AcpCall` with an
:class:`~cartagent.commerce.idempotency.Answer`.

Every call: an authenticated agent (401 otherwise), ``API-Version`` (400
``missing_api_version`` / ``unsupported_api_version``), a valid ``Signature`` for agents that
sign. Every mutating call: ``Idempotency-Key`` (400 ``idempotency_key_required``), scoped to the
agent and the operation's path; the same key and body replays the stored answer with
``Idempotent-Replayed: true``, another body is 422 ``idempotency_conflict``, a call still
running is 409 ``idempotency_in_flight`` with ``Retry-After``; 5xx answers, and a 409
``in_progress`` (another request is paying the session; both say ``Retry-After``), are never
stored: the retry they ask for runs again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from ...errors import CheckoutError
from ...protocols.acp.schema import SUPPORTED_VERSIONS, check
from ..agents import AgentKey, Agents, signature_problem
from ..checkout import Checkout
from ..idempotency import Answer, Idempotency, KeyRules, Refusal
from ..merchant import Merchant, PaymentUnavailable
from ..records import Event
from ..requests import json_object
from . import wire

__all__ = ["OPERATIONS", "AcpCall", "AcpService", "AcpSettings", "Operation"]

log = logging.getLogger(__name__)

MAX_KEY = 255
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


def _error(
    status: int,
    code: str,
    message: str,
    *,
    param: str | None = None,
    kind: str = "invalid_request",
    headers: dict[str, str] | None = None,
) -> Refusal:
    """A refusal in ACP's flat ``Error`` shape."""
    body: dict[str, Any] = {"type": kind, "code": code, "message": message}
    if param is not None:
        body["param"] = param
    return Refusal(status, body, headers)


def _refusal(error: CheckoutError, *, cancel: bool = False) -> Refusal:
    status = error.status
    if cancel and error.code == "invalid_state":
        status = 405  # the RFC: cancelling a completed or canceled session is 405
    headers = {"Retry-After": RETRY_AFTER} if error.code == "in_progress" else None
    return _error(
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
        self._keys = Idempotency(
            merchant.records,
            merchant.clock,
            KeyRules(
                conflict=lambda: _error(
                    422,
                    "idempotency_conflict",
                    "Idempotency-Key has already been used with a different request body",
                ),
                in_flight=lambda: _error(
                    409,
                    "idempotency_in_flight",
                    "A request with this Idempotency-Key is currently being processed",
                    headers={"Retry-After": RETRY_AFTER},
                ),
                unavailable=lambda: _error(
                    503,
                    "unavailable",
                    "the request could not be recorded; retry",
                    kind="service_unavailable",
                    headers={"Retry-After": RETRY_AFTER},
                ),
                failure=self._failure,
                replay_headers={"Idempotent-Replayed": "true"},
            ),
        )

    def _failure(self, error: Exception) -> Refusal:
        if isinstance(error, PaymentUnavailable):
            return _error(
                503,
                "payment_unavailable",
                f"PayPal could not be reached; retry: {error}",
                kind="service_unavailable",
                headers={"Retry-After": "5"},
            )
        log.error("ACP call failed", exc_info=error)
        return _error(
            500,
            "internal_error",
            "the merchant failed to process the request",
            kind="processing_error",
        )

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

    async def answer(self, call: AcpCall) -> Answer:
        """Answer ``call`` in a worker thread: its database and PayPal calls block, and one
        hop per request (not one per step) keeps the event loop's overhead down."""
        return await run_in_threadpool(self.answer_sync, call)

    def answer_sync(self, call: AcpCall) -> Answer:
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
                raise _error(
                    400,
                    "idempotency_key_required",
                    "Idempotency-Key header is required on all POST requests",
                )
            if key is not None and len(key) > MAX_KEY:
                raise _error(400, "invalid", f"Idempotency-Key is longer than {MAX_KEY}")
            body = _body(call)
            problem = signature_problem(
                agent,
                call.headers.get("signature"),
                call.headers.get("timestamp"),
                body,
                self.merchant.clock(),
            )
            if problem is not None:
                raise _error(401, "invalid_signature", problem)
            handler = self._handlers[call.operation.name]
            work = partial(handler, agent, call.session_id, body)
            if not posting or key is None:
                status, payload = work()
                return Answer(status, orjson.dumps(payload), headers)
            scope = f"acp {agent.name} {call.path}"
            answer = self._keys.run(scope, key, body, work)
            return replace(answer, headers=headers | answer.headers)
        except Refusal as refusal:
            return Answer(refusal.status, orjson.dumps(refusal.body), headers | refusal.headers)

    def authenticates(self, headers: Mapping[str, str]) -> bool:
        """Whether ``headers`` carry a valid agent token: transports check it before they
        read a body, and pass none for a caller that fails it (the call then gets its 401)."""
        try:
            self._agent(headers)
        except Refusal:
            return False
        return True

    def _agent(self, headers: Mapping[str, str]) -> AgentKey:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        found = None
        if scheme.lower() == "bearer" and token.strip():
            found = self.agents.by_token(token.strip())
        if found is None:
            raise _error(
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
            raise _error(404, "not_found", f"no cart {cart_id}", param="$.id")
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
        raise _error(
            400, "missing_api_version", f"API-Version header is required; supported: {supported}"
        )
    if version not in SUPPORTED_VERSIONS:
        raise _error(
            400,
            "unsupported_api_version",
            f"API-Version {version[:40]!r} is not supported; supported: {supported}",
        )


def _body(call: AcpCall) -> dict[str, Any] | None:
    if call.operation.method == "GET":
        return None
    try:
        body = json_object(call.body)
        if call.operation.schema is not None:
            check(call.operation.schema, body)
    except CheckoutError as error:
        param = wire.acp_param(error.param) if error.code != "invalid_json" else None
        raise _error(error.status, error.code, error.message, param=param) from None
    return body
