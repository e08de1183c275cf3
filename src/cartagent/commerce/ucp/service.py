"""UCP's shopping operations with the spec's rules, whatever transport carries them: one
:class:`UcpService` answers a :class:`UcpCall` with an
:class:`~cartagent.commerce.idempotency.Answer`.

Every call, in this order (the REST codes are overview.md's):

* an agent authenticated by ``Authorization: Bearer`` or ``X-API-Key`` (401);
* the platform profile its ``UCP-Agent`` header names: 400 ``invalid_profile_url``, 424
  ``profile_unreachable``, 422 ``profile_malformed`` or ``version_unsupported``; 403 when the
  agent is bound to other profiles (the spec's identity binding for API keys);
* for an agent that must sign (:attr:`~cartagent.commerce.agents.AgentKey.must_sign`), the
  RFC 9421 signature of the HTTP request that carried the call (REST: the request; MCP: the
  JSON-RPC POST), with the agent's secret as its ``hmac-sha256`` key: 401 ``signature_missing``,
  ``signature_invalid`` or ``key_not_found``, 400 ``digest_mismatch`` (signatures.md's codes and
  statuses);
* the operation's capability negotiated, else 200 with ``ucp.status: "error"`` and
  ``capabilities_incompatible`` (overview.md's 200 example uses ``version_unsupported`` for this
  case, contradicting its own table; the table's code is used);
* a body valid against the release's schema for the operation (400, with the JSONPath).

State-changing checkout calls need an ``Idempotency-Key`` (400 ``idempotency_key_required``):
the OpenAPI file marks it required, checkout-rest.md only says "when provided" and the MCP
binding requires it for complete and cancel only; the machine-readable contract is followed.
Any 1-255 visible ASCII characters are accepted (the OpenAPI ``format: uuid`` is not enforced;
signatures.md allows "22+ char alphanumeric" keys). Keys are scoped to the agent and the
operation's method and path. The same key and body answers the stored result again, as it
was (UCP defines no replay header); another body is 409 ``idempotency_conflict``; a call still
running is 409 ``idempotency_in_flight`` with ``Retry-After``; 5xx answers and a 409
``in_progress`` (another request is paying the session; both say ``Retry-After``) are not stored,
so the retry they ask for runs again; a key store failure is 503 (signatures.md: "fail
closed"). ``Request-Id`` is echoed when sent (the OpenAPI marks it required; it is not enforced).

Business outcomes are 200 (201 for a created session) with UCP's envelope: see
:mod:`~cartagent.commerce.ucp.wire` for when an error is a message on the session and when it
is an ``error_response``. Transport errors carry ``{"code", "content"}`` (plus ``path`` for a
body that breaks the schema).

Order events (order.md, "Events"): the business's signing key lives in the merchant database
(:class:`~.business_keys.BusinessKeys`) and is published in the profile's ``signing_keys``; a
checkout created by a platform whose profile gives an order ``webhook_url`` remembers it, and
its completion queues the signed "order created" event (:mod:`.events`); :meth:`UcpService.
webhook_signer` is what the webhook sender signs UCP events with.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from ...errors import CheckoutError
from ...protocols.ucp import payment
from ...protocols.ucp import v2026_01_11 as v0111
from ...protocols.ucp import v2026_08_25 as v0825
from ...protocols.ucp.agent_header import profile_url
from ...protocols.ucp.profile import (
    BUYER_CONSENT,
    CHECKOUT,
    DISCOUNT,
    FULFILLMENT,
    LOOKUP,
    ORDER,
    SEARCH,
    Negotiated,
    ProfileMalformed,
    business_profile,
    negotiate,
    platform_profile,
    profile_version,
)
from ...protocols.ucp.schema import BASE, UCP_VERSION, RequestShape, json_path, request_problem
from ...protocols.ucp.signatures import (
    SharedKey,
    SignatureInvalid,
    profile_keys,
    verify_request,
)
from ..agents import AgentKey, Agents
from ..checkout import Checkout
from ..idempotency import Answer, Idempotency, KeyRules, Refusal
from ..merchant import Changes, Merchant, PaymentUnavailable
from ..requests import HttpMessage, json_object
from . import testing, wire
from .address_book import AddressBook
from .business_keys import BusinessKeys
from .catalog import UcpCatalog
from .events import VERSION_KEY, WEBHOOK_KEY, OrderEvents, UcpWebhookSigner
from .order import ADJUSTMENTS_KEY, EVENTS_KEY, find_order, order_json
from .platforms import PlatformProfiles, ProfileUnreachable

__all__ = ["OPERATIONS", "Operation", "UcpCall", "UcpService", "UcpSettings"]

PROTOCOL = "ucp"
"""What UCP checkouts are stored as (the merchant scopes reads and writes by it)."""

log = logging.getLogger(__name__)

MAX_TOKEN = 1024
MAX_RESOURCE_ID = 128
MAX_ORDER_RECORDS = 100  # fulfillment events and adjustments kept per order
RETRY_AFTER = "1"
_KEY = re.compile(r"[\x21-\x7e]{1,255}")
_CHECKOUT = BASE + "shopping/checkout.json"
_EXTENSIONS = (
    (FULFILLMENT, "fulfillment"),
    (DISCOUNT, "discount"),
    (BUYER_CONSENT, "buyer_consent"),
)
"""The checkout extensions whose request shapes a body must also meet, by their schema file."""


@dataclass(frozen=True)
class UcpPolicy:
    """How the business meets platforms.

    ``version``: the release whose profile ``/.well-known/ucp`` serves (the others are served
    at ``/.well-known/ucp/<version>`` and, from v2026-04-08 on, listed in its
    ``supported_versions``); a platform at any release in :data:`SERVED` is answered
    in its own. ``allow_private_urls`` (local development and testing): platform profiles over
    plain http and at loopback or private hosts, and order webhook URLs there.
    ``open_access``: platforms need no token (they are known by their profile, and by their
    signatures where they sign); calls without one act as the agent ``anonymous``.
    ``intersect``: capabilities are the intersection of both profiles, as the spec says;
    without it every capability of the business is active for every platform (v2026-01-11's
    conformance suite presents a profile that lists only the order capability).
    ``simulation_secret``: the testing surface is on (:mod:`.testing`), its simulation calls
    guarded by this secret.
    """

    version: str = UCP_VERSION
    allow_private_urls: bool = False
    open_access: bool = False
    intersect: bool = True
    simulation_secret: str | None = None


SERVED = (v0825.VERSION, UCP_VERSION, v0111.VERSION)
"""The releases a platform may speak, newest first; the business is built on UCP_VERSION."""

ANONYMOUS = AgentKey("anonymous", secrets.token_urlsafe(32))
"""Who calls without a token under ``UcpPolicy.open_access`` (its token is known to no one)."""


@dataclass(frozen=True)
class UcpSettings:
    """Where the business is reached and what it shows.

    ``base_url`` is the origin serving ``/.well-known/ucp``; the REST operations are served
    under ``api_prefix`` there (the profile's ``endpoint``). ``storefront_url`` is the
    buyer-facing site behind ``continue_url`` and order permalinks (if unset, the merchant's own
    pages under ``/shop``, :mod:`~cartagent.commerce.storefront`).
    ``mcp_url`` is where the MCP binding is served, if it is (listed in the profile).
    ``agent_profiles`` binds agents to the profile URLs they may present (unlisted agents may
    present any). ``policy``: how platforms are met (:class:`UcpPolicy`).
    """

    base_url: str
    api_prefix: str = ""
    storefront_url: str | None = None
    mcp_url: str | None = None
    environment: str = "sandbox"
    links: tuple[tuple[str, str], ...] = ()
    agent_profiles: Mapping[str, frozenset[str]] = field(default_factory=dict)
    policy: UcpPolicy = UcpPolicy()

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + self.api_prefix.rstrip("/")


@dataclass(frozen=True)
class Operation:
    name: str  # the OpenAPI operationId
    method: str
    path: str  # with {id} for the resource id
    capability: str
    shape: RequestShape | None = None  # a checkout body, in this request shape
    request: str | None = None  # another body: its schema
    mutating: bool = False
    invalid: int = 400  # the status of a body its schema refuses


_CHECKOUTS = "/checkout-sessions"
_CATALOG = BASE + "shopping/catalog_"
OPERATIONS = {
    op.name: op
    for op in (
        Operation("create_checkout", "POST", _CHECKOUTS, CHECKOUT, "create", mutating=True),
        Operation("get_checkout", "GET", _CHECKOUTS + "/{id}", CHECKOUT),
        Operation(
            "update_checkout", "PUT", _CHECKOUTS + "/{id}", CHECKOUT, "update", mutating=True
        ),
        Operation(
            "complete_checkout",
            "POST",
            _CHECKOUTS + "/{id}/complete",
            CHECKOUT,
            "complete",
            mutating=True,
        ),
        Operation("cancel_checkout", "POST", _CHECKOUTS + "/{id}/cancel", CHECKOUT, mutating=True),
        Operation(
            "search_catalog",
            "POST",
            "/catalog/search",
            SEARCH,
            request=_CATALOG + "search.json#/$defs/search_request",
        ),
        Operation(
            "lookup_catalog",
            "POST",
            "/catalog/lookup",
            LOOKUP,
            request=_CATALOG + "lookup.json#/$defs/lookup_request",
        ),
        Operation(
            "get_product",
            "POST",
            "/catalog/product",
            LOOKUP,
            request=_CATALOG + "lookup.json#/$defs/get_product_request",
        ),
        Operation("get_order", "GET", "/orders/{id}", ORDER),
        Operation(
            "update_order",
            "PUT",
            "/orders/{id}",
            ORDER,
            request=BASE + "shopping/order.json",
            mutating=True,
            invalid=422,
        ),
    )
}
"""The operations; ``update_order`` is the testing surface's (:mod:`.testing`)."""


@dataclass(frozen=True)
class UcpCall:
    """One request: the operation, its resource id, headers (lower-case names) and raw body;
    ``message`` is the HTTP request that carried it (REST: the call's own; MCP: the JSON-RPC
    POST; ``None`` over a transport without one), which a message signature covers."""

    operation: Operation
    headers: Mapping[str, str]
    body: bytes | None = None
    resource_id: str | None = None
    message: HttpMessage | None = None

    @property
    def path(self) -> str:
        return self.operation.path.replace("{id}", self.resource_id or "")


@dataclass(frozen=True)
class _Context:
    agent: AgentKey
    negotiated: Negotiated
    resource_id: str
    body: dict[str, Any] | None


Outcome = tuple[int, dict[str, Any]]


def _asks_for_shipping(body: Mapping[str, Any]) -> bool:
    """Whether a request asks for shipping without naming a destination."""
    fulfillment = body.get("fulfillment")
    methods = fulfillment.get("methods") if isinstance(fulfillment, dict) else None
    if not methods or not isinstance(methods[0], dict):
        return False
    method = methods[0]
    return (
        method.get("type", "shipping") == "shipping"
        and not method.get("destinations")
        and not method.get("selected_destination_id")
    )


def _refusal(
    status: int, code: str, content: str, headers: Mapping[str, str] | None = None, **extra: str
) -> Refusal:
    return Refusal(status, {"code": code, "content": content, **extra}, headers)


def _bad_request(error: CheckoutError) -> Refusal:
    if not error.param:
        return _refusal(400, error.code, error.message)
    return _refusal(400, error.code, error.message, path=wire.ucp_path(error.param))


class UcpService:
    def __init__(
        self,
        merchant: Merchant,
        agents: Agents,
        settings: UcpSettings,
        profiles: PlatformProfiles,
    ) -> None:
        self.merchant = merchant
        self.agents = agents
        self.settings = settings
        self.profiles = profiles
        self.handlers = payment.handlers(settings.environment)
        self.book: AddressBook | None = None
        if settings.policy.simulation_secret is not None:
            self.handlers |= testing.handlers(UCP_VERSION)
            self.book = AddressBook(merchant.records.engine)
        self._handlers_0111 = v0111.handler_declarations(self.handlers)
        self.catalog = UcpCatalog(merchant.catalog, merchant.terms.currency)
        storefront = settings.storefront_url or settings.base_url.rstrip("/") + wire.STOREFRONT
        self.site = wire.Site(settings.endpoint, storefront, settings.links)
        self.keys = BusinessKeys(merchant.records.engine)
        self.keys.current()  # made (once, durably) now rather than on the first request
        self.events = OrderEvents(
            merchant.bill, self.site, allow_private=settings.policy.allow_private_urls
        )
        merchant.announce_with(PROTOCOL, self.events)
        self._keys = Idempotency(
            merchant.records,
            merchant.clock,
            KeyRules(
                conflict=lambda: _refusal(
                    409,
                    "idempotency_conflict",
                    "the Idempotency-Key was already used with a different request",
                ),
                in_flight=lambda: _refusal(
                    409,
                    "idempotency_in_flight",
                    "a request with this Idempotency-Key is still being processed",
                    {"Retry-After": RETRY_AFTER},
                ),
                unavailable=lambda: _refusal(
                    503,
                    "service_unavailable",
                    "the request could not be recorded; retry",
                    {"Retry-After": RETRY_AFTER},
                ),
                failure=self._failure,
            ),
        )
        self._operations: dict[str, Callable[[_Context], Outcome]] = {
            "create_checkout": self._create,
            "get_checkout": self._get,
            "update_checkout": self._update,
            "complete_checkout": self._complete,
            "cancel_checkout": self._cancel,
            "search_catalog": self._search,
            "lookup_catalog": self._lookup,
            "get_product": self._product,
            "get_order": self._order,
            "update_order": self._update_order,
        }

    def profile(self, version: str | None = None) -> dict[str, Any]:
        """The business profile at release ``version`` (default: the one ``/.well-known/ucp``
        serves); :class:`KeyError` for a release not served."""
        root = self.settings.policy.version
        version = version or root
        if version == v0111.VERSION:
            return v0111.business_profile(self.settings.endpoint, self.handlers, self.keys.jwks())
        if version not in SERVED:
            raise KeyError(version)
        # The root lists the releases older than its own (the spec's rule); the others are
        # leaf documents.
        older = {v: f"{self.profile_url}/{v}" for v in SERVED if v < version}
        profile = business_profile(
            self.settings.endpoint,
            self.handlers,
            self.keys.jwks(),
            mcp_endpoint=self.settings.mcp_url,
        )
        if version == v0825.VERSION:
            return v0825.business_profile(profile, older if version == root else {})
        if version == root:
            profile["ucp"]["supported_versions"] = older
        return profile

    @property
    def profile_url(self) -> str:
        return self.settings.base_url.rstrip("/") + "/.well-known/ucp"

    def webhook_signer(self) -> UcpWebhookSigner:
        """What signs this business's order events (for the webhook sender)."""
        return UcpWebhookSigner(self.keys, self.profile_url)

    async def answer(self, call: UcpCall) -> Answer:
        headers: dict[str, str] = {}
        request_id = call.headers.get("request-id")
        if request_id:
            headers["Request-Id"] = request_id[:255]
        try:
            agent = self._agent(call.headers)
            negotiated = await self._negotiate(agent, call.headers)
            await self._verify_signature(agent, call)
            capability = call.operation.capability
            if not negotiated.active(capability):
                status, payload = self._incompatible(negotiated, capability)
                return Answer(status, orjson.dumps(payload), headers)
            key = self._key(call.headers) if call.operation.mutating else None
            body = self._body(call, negotiated)
            resource_id = call.resource_id or ""
            work = partial(
                self._operations[call.operation.name],
                _Context(agent, negotiated, resource_id, body),
            )
            if key is None:
                status, payload = await self._run(work)
                return Answer(status, orjson.dumps(payload), headers)
            scope = f"ucp {agent.name} {call.operation.method} {call.path}"
            answer = await run_in_threadpool(self._keys.run, scope, key, body, work)
            return replace(answer, headers=headers | answer.headers)
        except Refusal as refusal:
            return Answer(refusal.status, orjson.dumps(refusal.body), headers | refusal.headers)

    async def _run(self, work: Callable[[], Outcome]) -> Outcome:
        try:
            return await run_in_threadpool(work)
        except Refusal:
            raise
        except Exception as error:
            raise self._failure(error) from None

    def _failure(self, error: Exception) -> Refusal:
        if isinstance(error, PaymentUnavailable):
            return _refusal(
                503,
                "payment_unavailable",
                f"PayPal could not be reached; retry: {error}",
                {"Retry-After": "5"},
            )
        log.error("UCP call failed", exc_info=error)
        return _refusal(500, "internal_error", "the business failed to process the request")

    # ------------------------------------------------------------ the request's frame

    async def _verify_signature(self, agent: AgentKey, call: UcpCall) -> None:
        """Refuse the call of an agent that must sign unless the HTTP request that carried it
        has a valid RFC 9421 signature (signatures.md, "REST Request Verification"; over MCP
        the same on the JSON-RPC POST, "MCP Transport") that covers what signatures.md
        requires, ``ucp-agent`` and ``content-digest``/``content-type`` for a body included.

        The key is the agent's secret (``hmac-sha256``); an agent bound to the profiles it may
        present (``agent_profiles``) may sign with one of its profile's ``signing_keys``
        instead. A key from a profile the caller names freely is not accepted: whoever holds
        the bearer token could name a profile of their own, so it would prove nothing more.
        """
        if agent.signing_secret is None:
            return
        message = call.message
        if message is None:
            raise _refusal(
                401,
                "signature_missing",
                "this agent must sign its requests, and this transport carries no HTTP "
                "message signature",
            )
        keys: list[dict[str, Any]] = []
        if agent.name in self.settings.agent_profiles:
            try:
                url = profile_url(call.headers.get("ucp-agent"))
                keys = profile_keys(await run_in_threadpool(self.profiles.document, url))
            except (ValueError, ProfileUnreachable, ProfileMalformed):
                keys = []  # negotiation read it a moment ago; without it only the secret counts
        try:
            verify_request(
                message.method,
                message.url,
                message.headers,
                message.body,
                keys,
                shared=[SharedKey.from_secret(agent.signing_secret)],
                agent=True,
            )
        except SignatureInvalid as error:
            status = 400 if error.code == "digest_mismatch" else 401
            raise _refusal(status, error.code, str(error)) from None

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
        token = token.strip() if scheme.lower() == "bearer" else ""
        token = token or headers.get("x-api-key", "").strip()
        if not token and "authorization" not in headers and self.settings.policy.open_access:
            return ANONYMOUS
        found = self.agents.by_token(token) if 0 < len(token) <= MAX_TOKEN else None
        if found is None:
            raise _refusal(
                401,
                "unauthorized",
                "a valid bearer token or X-API-Key is required",
                {"WWW-Authenticate": 'Bearer realm="ucp"'},
            )
        return found

    async def _negotiate(self, agent: AgentKey, headers: Mapping[str, str]) -> Negotiated:
        home = self.site.storefront
        policy = self.settings.policy
        try:
            url = profile_url(headers.get("ucp-agent"), allow_http=policy.allow_private_urls)
        except ValueError as error:
            raise _refusal(400, "invalid_profile_url", str(error), continue_url=home) from None
        allowed = self.settings.agent_profiles.get(agent.name)
        if allowed is not None and url not in allowed:
            raise _refusal(
                403, "profile_not_allowed", "these credentials may not act for that profile"
            )
        try:
            document = await run_in_threadpool(self.profiles.document, url)
            version = profile_version(document)
            if version == v0111.VERSION:
                platform = v0111.platform_profile(
                    url, document, allow_private=policy.allow_private_urls
                )
                negotiated = negotiate(
                    platform, {}, capabilities=v0111.CAPABILITIES, intersect=policy.intersect
                )
                # v2026-01-11 negotiates no handlers: the business's are all on offer.
                handlers = {name: tuple(entries) for name, entries in self.handlers.items()}
                return replace(negotiated, payment_handlers=handlers)
            if version not in (UCP_VERSION, v0825.VERSION):
                raise _refusal(
                    422,
                    "version_unsupported",
                    f"protocol version {version} is not supported; this business implements "
                    f"versions {', '.join(SERVED)}",
                    continue_url=home,
                )
            platform = platform_profile(url, document, allow_private=policy.allow_private_urls)
        except ProfileUnreachable as error:
            raise _refusal(
                424, "profile_unreachable", f"the platform profile: {error}", continue_url=home
            ) from None
        except ProfileMalformed as error:
            raise _refusal(422, "profile_malformed", str(error), continue_url=home) from None
        return negotiate(platform, self.handlers, intersect=policy.intersect)

    def _incompatible(self, negotiated: Negotiated, capability: str) -> Outcome:
        message = {
            "type": "error",
            "code": "capabilities_incompatible",
            "content": f"{capability} was not negotiated: the platform profile lists no "
            f"version of it this business supports ({negotiated.version})",
            "severity": "unrecoverable",
        }
        if negotiated.version == v0111.VERSION:
            return 400, v0111.error_body([message], self.site.storefront)
        ucp = {"version": negotiated.version, "capabilities": {}}
        return 200, wire.error_response(ucp, [message], self.site.storefront)

    @staticmethod
    def _key(headers: Mapping[str, str]) -> str:
        key = headers.get("idempotency-key")
        if not key:
            raise _refusal(
                400,
                "idempotency_key_required",
                "an Idempotency-Key header is required on state-changing requests",
            )
        if not _KEY.fullmatch(key):
            raise _refusal(
                400, "invalid", "Idempotency-Key must be 1 to 255 visible ASCII characters"
            )
        return key

    def _body(self, call: UcpCall, negotiated: Negotiated) -> dict[str, Any] | None:
        operation = call.operation
        if operation.shape is None and operation.request is None:
            return None
        try:
            body = json_object(call.body)
        except CheckoutError as error:
            if error.code == "invalid":
                raise _refusal(error.status, error.code, error.message, path="$") from None
            raise _refusal(error.status, error.code, error.message) from None
        version = negotiated.version
        if version == v0111.VERSION and operation.shape in ("create", "update"):
            body = v0111.lenient_body(body)
        if version == v0825.VERSION:  # checked against the release it is bridged to
            body = v0825.request_body(body) if operation.shape in ("create", "update") else body
            version = UCP_VERSION
        for ref, shape in self._schemas(operation, negotiated):
            problem = request_problem(ref, shape, body, version)
            if problem is not None:
                path = json_path(problem.param)
                raise _refusal(operation.invalid, problem.code, problem.message, path=path)
        return body

    @staticmethod
    def _schemas(
        operation: Operation, negotiated: Negotiated
    ) -> list[tuple[str, RequestShape | None]]:
        """What a request body must be valid against, in the release negotiated."""
        if operation.request is not None:
            return [(operation.request, None)]
        old = negotiated.version == v0111.VERSION
        if old and operation.shape == "complete":
            return [(BASE + "shopping/payment_data.json", None)]
        definition = "checkout" if old else CHECKOUT
        extensions = [
            BASE + f"shopping/{name}.json#/$defs/{definition}"
            for capability, name in _EXTENSIONS
            if negotiated.active(capability)
        ]
        return [(ref, operation.shape) for ref in extensions or [_CHECKOUT]]

    # ------------------------------------------------------------ rendering

    def _checkout(
        self,
        ctx: _Context,
        checkout: Checkout,
        extra: list[dict[str, Any]] | None = None,
        *,
        instrument_id: str | None = None,
    ) -> dict[str, Any]:
        body = wire.checkout_json(
            checkout,
            self.merchant.bill(checkout),
            ucp=ctx.negotiated.envelope(CHECKOUT, handlers=True),
            site=self.site,
            fulfillment=ctx.negotiated.active(FULFILLMENT),
            extra=extra or (),
            discounts=ctx.negotiated.active(DISCOUNT),
            consent=ctx.negotiated.active(BUYER_CONSENT),
        )
        if ctx.negotiated.version == v0111.VERSION:
            return v0111.checkout_json(body, self._handlers_0111, instrument_id)
        if ctx.negotiated.version == v0825.VERSION:
            return v0825.checkout_json(body)
        return body

    def _refused(self, ctx: _Context, error: CheckoutError, *, resource: bool = False) -> Outcome:
        """The answer to a call that has no session to show: v2026-04-08's ``error_response``
        (200), v2026-01-11's error shape with an HTTP error status. ``resource``: the session
        itself is what is missing (an unrecoverable error)."""
        severity = "unrecoverable" if resource else "recoverable"
        message = wire.error_message(error, severity=severity)
        if ctx.negotiated.version == v0111.VERSION:
            return v0111.status_of(error), v0111.error_body([message], self.site.storefront)
        return 200, wire.error_response(
            ctx.negotiated.envelope(CHECKOUT), [message], self.site.storefront
        )

    def _session(self, ctx: _Context) -> Checkout:
        """The call's session; a missing one ends the call with an ``error_response``."""
        try:
            if len(ctx.resource_id) > MAX_RESOURCE_ID:
                raise CheckoutError("no such checkout", code="not_found", param=("id",), status=404)
            return self.merchant.get(ctx.agent.name, ctx.resource_id, protocol=PROTOCOL)
        except CheckoutError as error:
            raise Refusal(*self._refused(ctx, error, resource=True)) from None

    def _rejected(self, ctx: _Context, error: CheckoutError) -> Outcome:
        """The answer to a call the merchant refused: a race is a 409; otherwise the session as
        it now stands (a decline changed it) with the reason as an error message (v2026-01-11:
        the reason, with the status of the refusal)."""
        if error.code == "conflict":
            raise _refusal(409, "conflict", error.message)
        if error.code == "in_progress":
            raise _refusal(409, "in_progress", error.message, {"Retry-After": RETRY_AFTER})
        if error.status == 404:
            return self._refused(ctx, error, resource=True)
        if ctx.negotiated.version == v0111.VERSION:
            return self._refused(ctx, error)
        checkout = self._session(ctx)
        severity = "unrecoverable" if error.code == "invalid_state" else "recoverable"
        return 200, self._checkout(ctx, checkout, [wire.error_message(error, severity=severity)])

    @staticmethod
    def _changes(ctx: _Context, current: Checkout | None) -> Changes:
        assert ctx.body is not None
        active = ctx.negotiated.active
        return wire.changes_from(
            ctx.body,
            fulfillment=active(FULFILLMENT),
            current=current,
            discounts=active(DISCOUNT),
            consent=active(BUYER_CONSENT),
        )

    def _saved_addresses(
        self, ctx: _Context, changes: Changes, current: Checkout | None
    ) -> Changes:
        """The testing surface's address book (:mod:`.address_book`): a destination given
        without an id is saved under the buyer's email; a request for shipping that names no
        destination is offered the addresses saved there."""
        if self.book is None or ctx.body is None:
            return changes
        buyer = changes.buyer if changes.buyer is not None else (current.buyer if current else {})
        email = buyer.get("email", "")
        if not email:
            return changes
        address = changes.address
        if address is not None and not address.id:
            address = self.book.remember(email, address)
            changes = replace(changes, address=address)
        chosen = address is not None or (current is not None and current.address is not None)
        if chosen or not _asks_for_shipping(ctx.body):
            return changes
        offered = self.book.saved(email)
        if not offered:
            return changes
        known = changes.metadata
        if known is None:
            known = current.metadata if current is not None else {}
        metadata = {**known, wire.OFFERED_KEY: [vars(saved) for saved in offered]}
        return replace(changes, metadata=metadata)

    def _v0111_checks(self, ctx: _Context, changes: Changes) -> None:
        """What v2026-01-11 refuses on create and update: another currency than the store's,
        an item out of stock (its conformance suite expects a refusal where v2026-04-08 keeps
        the session with the problem on it)."""
        if ctx.negotiated.version != v0111.VERSION:
            return
        assert ctx.body is not None
        v0111.check_currency(ctx.body, self.merchant.terms.currency)
        for index, (item_id, _) in enumerate(changes.items or ()):
            offer = self.merchant.catalog.offer(item_id)
            if offer is not None and not offer.available:
                raise CheckoutError(
                    f"Insufficient stock: {offer.name} is out of stock",
                    code="out_of_stock",
                    param=("items", index, "quantity"),
                )

    # ------------------------------------------------------------ operations (worker threads)

    def _create(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        try:
            changes = self._changes(ctx, current=None)
            self._v0111_checks(ctx, changes)
            metadata = {VERSION_KEY: ctx.negotiated.version}
            if ctx.negotiated.webhook_url is not None:
                metadata[WEBHOOK_KEY] = ctx.negotiated.webhook_url
            changes = self._saved_addresses(ctx, replace(changes, metadata=metadata), None)
            currency = self.merchant.terms.currency
            checkout = self.merchant.create(ctx.agent.name, PROTOCOL, currency, changes)
        except CheckoutError as error:
            return self._refused(ctx, error, resource=True)
        notes = []
        if ctx.negotiated.webhook_problem is not None:
            notes.append(
                {
                    "type": "warning",
                    "code": "webhook_unusable",
                    "content": "no order events will be sent for this checkout: "
                    + ctx.negotiated.webhook_problem,
                }
            )
        return 201, self._checkout(ctx, checkout, notes)

    def _get(self, ctx: _Context) -> Outcome:
        return 200, self._checkout(ctx, self._session(ctx))

    def _update(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        current = self._session(ctx)
        try:
            changes = self._changes(ctx, current=current)
            self._v0111_checks(ctx, changes)
            changes = self._saved_addresses(ctx, changes, current)
            checkout = self.merchant.update(ctx.agent.name, current.id, changes, protocol=PROTOCOL)
        except CheckoutError as error:
            return self._rejected(ctx, error)
        return 200, self._checkout(ctx, checkout)

    def _complete(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        if ctx.negotiated.version == v0111.VERSION:
            return self._complete_0111(ctx)
        current = self._session(ctx)
        try:
            buyer = wire.buyer_from(ctx.body["buyer"]) if "buyer" in ctx.body else None
            handlers = ctx.negotiated.handler_ids()
            _, instrument = payment.selected_instrument(ctx.body)
            if instrument["handler_id"] == testing.HANDLER_ID and testing.HANDLER_ID in handlers:
                credential = instrument.get("credential") or {}
                checkout = self._pay(ctx, current.id, testing.HANDLER_ID, credential, buyer)
            else:
                token = {"token": payment.payment_token(ctx.body, handlers)}
                checkout = self._pay(ctx, current.id, payment.HANDLER_ID, token, buyer)
        except CheckoutError as error:
            if error.param == ("payment",):  # the merchant's decline: of the token it was given
                error = CheckoutError(
                    error.message,
                    code=error.code,
                    param=payment.token_path(ctx.body),
                    status=error.status,
                )
            return self._rejected(ctx, error)
        return 200, self._checkout(ctx, checkout)

    def _pay(
        self,
        ctx: _Context,
        checkout_id: str,
        handler: str,
        credential: Mapping[str, Any],
        buyer: dict[str, str] | None = None,
    ) -> Checkout:
        """Complete the checkout with ``credential``: the test handler's charge, or PayPal's
        token (a checked one)."""
        if handler == testing.HANDLER_ID:
            charge = testing.mock_charge(credential)
            return self.merchant.complete(
                ctx.agent.name, checkout_id, "", buyer, protocol=PROTOCOL, charge=charge
            )
        token = str(credential["token"])
        return self.merchant.complete(ctx.agent.name, checkout_id, token, buyer, protocol=PROTOCOL)

    def _complete_0111(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        current = self._session(ctx)
        try:
            handler, credential = v0111.complete_credential(ctx.body, ctx.negotiated.handler_ids())
            checkout = self._pay(ctx, current.id, handler, credential)
        except CheckoutError as error:
            if error.param == ("payment",):
                error = CheckoutError(
                    error.message,
                    code=error.code,
                    param=("payment_data", "credential", "token"),
                    status=error.status,
                )
            return self._rejected(ctx, v0111.completion_refusal(error))
        instrument = ctx.body["payment_data"].get("id")
        return 200, self._checkout(ctx, checkout, instrument_id=instrument)

    def _cancel(self, ctx: _Context) -> Outcome:
        current = self._session(ctx)
        try:
            checkout = self.merchant.cancel(ctx.agent.name, current.id, protocol=PROTOCOL)
        except CheckoutError as error:
            return self._rejected(ctx, error)
        return 200, self._checkout(ctx, checkout)

    def _search(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        try:
            found = self.catalog.search(ctx.body)
        except CheckoutError as error:
            raise _bad_request(error) from None
        body: dict[str, Any] = {
            "ucp": ctx.negotiated.envelope(SEARCH),
            "products": found.products,
            "pagination": found.pagination,
        }
        if found.messages:
            body["messages"] = found.messages
        return 200, body

    def _lookup(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        try:
            found = self.catalog.lookup(ctx.body)
        except CheckoutError as error:
            raise _bad_request(error) from None
        body: dict[str, Any] = {"ucp": ctx.negotiated.envelope(LOOKUP), "products": found.products}
        if found.messages:
            body["messages"] = found.messages
        return 200, body

    def _product(self, ctx: _Context) -> Outcome:
        assert ctx.body is not None
        try:
            found = self.catalog.product(ctx.body)
        except CheckoutError as error:
            raise _bad_request(error) from None
        ucp = ctx.negotiated.envelope(LOOKUP)
        if not found.products:
            return 200, wire.error_response(ucp, found.messages, self.site.storefront)
        body: dict[str, Any] = {"ucp": ucp, "product": found.products[0]}
        if found.messages:
            body["messages"] = found.messages
        return 200, body

    def _order(self, ctx: _Context) -> Outcome:
        checkout = find_order(self.merchant.records, ctx.agent.name, ctx.resource_id)
        if checkout is None or checkout.address is None:
            return self._no_order(ctx)
        return 200, self._order_json(ctx, checkout)

    def _no_order(self, ctx: _Context) -> Outcome:
        message = {
            "type": "error",
            "code": "not_found",
            "content": "order not found",
            "severity": "unrecoverable",
        }
        if ctx.negotiated.version == v0111.VERSION:
            return 404, v0111.error_body([message], None)
        return 200, wire.error_response(ctx.negotiated.envelope(ORDER), [message])

    def _order_json(self, ctx: _Context, checkout: Checkout) -> dict[str, Any]:
        ucp = ctx.negotiated.envelope(ORDER)
        body = order_json(checkout, self.merchant.bill(checkout), ucp=ucp, site=self.site)
        if ctx.negotiated.version == v0111.VERSION:
            return v0111.order_json(body)
        return body

    def _update_order(self, ctx: _Context) -> Outcome:
        """The testing surface's order update: the order's fulfillment events and adjustments
        become the body's (the rest of an order is the business's to say)."""
        assert ctx.body is not None
        if self.settings.policy.simulation_secret is None:
            raise _refusal(405, "method_not_allowed", "orders are not updated through the API")
        checkout = find_order(self.merchant.records, ctx.agent.name, ctx.resource_id)
        if checkout is None or checkout.address is None:
            return self._no_order(ctx)
        fulfillment = ctx.body.get("fulfillment") or {}
        metadata = {
            **checkout.metadata,
            EVENTS_KEY: list(fulfillment.get("events") or [])[:MAX_ORDER_RECORDS],
            ADJUSTMENTS_KEY: list(ctx.body.get("adjustments") or [])[:MAX_ORDER_RECORDS],
        }
        saved = self.merchant.records.save(replace(checkout, metadata=metadata))
        return 200, self._order_json(ctx, saved)

    def simulate_shipping(self, order_id: str, secret: str | None) -> Answer:
        """The testing surface's ``POST /testing/simulate-shipping/{order_id}``: every line of
        the order ships (a ``shipped`` event with a tracking number), and the platform hears
        of it (``order_shipped``)."""
        expected = self.settings.policy.simulation_secret
        if expected is None or not testing.secret_matches(secret, expected):
            body = {"code": "forbidden", "content": "a valid Simulation-Secret header is needed"}
            return Answer(403, orjson.dumps(body))
        checkout = find_order(self.merchant.records, None, order_id[:MAX_RESOURCE_ID])
        if checkout is None or checkout.address is None:
            return Answer(404, orjson.dumps({"code": "not_found", "content": "order not found"}))
        now = self.merchant.clock()
        bill = self.merchant.bill(checkout)
        event = {
            "id": f"evt_ship_{secrets.token_hex(6)}",
            "occurred_at": now.isoformat().replace("+00:00", "Z"),
            "type": "shipped",
            "line_items": [
                {"id": cost.line.id, "quantity": cost.line.quantity} for cost in bill.lines
            ],
            "tracking_number": f"TEST{secrets.randbelow(10**10):010d}",
            "description": "Shipped (simulated)",
        }
        events = [*checkout.metadata.get(EVENTS_KEY, []), event][-MAX_ORDER_RECORDS:]
        shipped = replace(checkout, metadata={**checkout.metadata, EVENTS_KEY: events})
        self.merchant.records.save(shipped, self.events.event(shipped, "order_shipped"))
        return Answer(200, orjson.dumps({"status": "shipped", "event": event}))
