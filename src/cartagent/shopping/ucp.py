"""An agent's (UCP: a platform's) client: discover a business, read its catalog, run a checkout.

::

    with UcpClient.discover(
        "https://shop.example", token, profile_url="https://agent.example/.well-known/ucp"
    ) as shop:
        session = shop.create([("9612497925", 1)], address=address)
        if shop_user_says_yes(session.total):
            paid = shop.complete(session.id, payment_token)

The surface and semantics of :class:`~cartagent.shopping.acp.AcpClient`, over UCP release
2026-04-08 as shipped in ``protocols/specs/ucp``, or (``version=``, the release the platform
profile declares) 2026-08-25 (typed destinations, :mod:`cartagent.protocols.ucp.v2026_08_25`)
or 2026-01-11 (its profile's lists, ``currency`` and ``payment`` on create and update, the
instrument as ``payment_data``, refusals as HTTP errors;
:mod:`cartagent.protocols.ucp.v2026_01_11`):

* discovery (overview.md, ``discovery/profile_schema.json``, ``schemas/ucp.json``): the business
  profile at ``/.well-known/ucp`` must be valid against the release's ``business_profile``,
  declare this release (or link a profile of it in ``supported_versions``, followed once), offer
  ``dev.ucp.shopping`` over REST (its ``endpoint`` is where every call goes) and the
  ``dev.ucp.shopping.checkout`` capability; the ``com.paypal.checkout`` handler's instance id
  is kept for :meth:`UcpClient.complete`;
* the REST binding (``services/shopping/rest.openapi.json``): every call sends
  ``Authorization: Bearer``, ``UCP-Agent: profile="..."`` (RFC 8941, the platform profile this
  agent presents) and a fresh ``Request-Id``; every state-changing checkout call one
  ``Idempotency-Key`` kept across its retries (transport errors, 409
  ``idempotency_in_flight``/``in_progress``, 503, honouring ``Retry-After`` up to 5 s, at most
  ``attempts`` tries), so a retried completion is answered, never charged twice;
* checkout (``shopping/checkout.json`` with ``shopping/fulfillment.json``): update is a PUT whose
  ``line_items`` are required, so :meth:`UcpClient.update` reads the session first and sends its
  lines back when none are given; the shipping address is a fulfillment destination
  (``types/postal_address.json``), a :class:`~cartagent.addresses.Contact` the
  ``buyer``; payment is the PayPal handler's instrument (``commerce/ucp/payment.py``): type
  ``paypal`` with a ``paypal_payment_token`` token credential;
* catalog (``shopping/catalog_search.json``, ``types/pagination.json``, ``types/product.json``,
  ``types/variant.json``): :meth:`UcpClient.products` browses ``catalog/search`` with a
  ``price.min = 0`` filter (the release does not say that an empty search lists everything, and
  this store refuses one) page by page to the end, at most :data:`MAX_PRODUCTS` products;
* errors (``types/error_response.json``, ``types/message_error.json``): a 4xx/5xx answer's
  ``{"code", "content", "path"}``, and a 200 answer whose ``ucp.status`` is ``"error"``
  (``capabilities_incompatible``, an unknown session, a create that made none) raise
  :class:`~cartagent.errors.CheckoutError` with the code, the ``path`` JSONPath as ``param`` and
  the HTTP status (200 for those: UCP answers business outcomes 200).

How an answer maps onto :class:`~cartagent.shopping.acp.SessionView` (see
:class:`UcpSessionView`): ``status`` stays UCP's (``incomplete``, ``requires_escalation``,
``ready_for_complete``, ``complete_in_progress``, ``completed``, ``canceled``) and ``ready`` is
true for ``ready_for_complete``; amounts are minor units in ``currency``; lines carry
``item.id``, ``item.title``, ``item.price`` and the line's ``total``; ``totals`` are keyed by
type as in ACP (``subtotal``, ``fulfillment``, ``tax``, ``total``...); ``messages`` are UCP's
(``problems`` their error texts); ``order`` is UCP's order confirmation with ``order_number``
added from its ``label``; ``continue_url`` is where a buyer finishes what the API cannot.

UCP answers a refused change to an existing session 200 with the session as it stands and the
reason as an error message. The client raises for those as ACP does: a mutating call whose
answer has an ``unrecoverable`` error (e.g. ``invalid_state`` on a canceled session), a
completion that did not complete, and a create or update whose lines, address or shipping
option are not what was asked while an error message says why. Problems of the session itself
(a missing address, an item out of stock) are returned in :attr:`SessionView.problems`.

Everything the business answers is untrusted: bodies are read to at most
:data:`~cartagent.shopping.transport.MAX_BODY` bytes, shapes and types are checked, counts,
lengths and amounts bounded; what does not fit raises :class:`CheckoutError` with code
``invalid_response`` (status 502).

Signing (signatures.md, "REST Request Signing"): with ``signing_secret`` (the secret a cartagent
merchant's ``--signing-secret`` shares with its agents) or ``signing_key`` (a P-256 key whose
public half the platform profile publishes), every request carries an RFC 9421 signature over
``@method``, ``@authority``, ``@path``, ``ucp-agent``, ``idempotency-key`` and, with a body,
``content-digest`` and ``content-type``; each retry is signed afresh.

The business's URL, and the endpoint and ``supported_versions`` link its profile names, are
someone else's say-so: every request goes through :func:`~cartagent.outbound.guarded_transport`,
and one to a loopback, private or otherwise non-public address raises ``destination_refused``
(403) unless the client is made with ``allow_private=True`` (local development).
"""

from __future__ import annotations

import contextlib
import math
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from pydantic import ValidationError

from ..addresses import Address, Contact
from ..catalog.product import Product, Variant
from ..errors import CheckoutError, ConfigurationError, DestinationRefused
from ..money import Money
from ..outbound import Resolver, guarded_transport, system_resolver
from ..paypal import path_segment
from ..protocols.ucp import payment
from ..protocols.ucp import v2026_01_11 as v0111
from ..protocols.ucp import v2026_08_25 as v0825
from ..protocols.ucp.agent_header import profile_url as parse_agent_header
from ..protocols.ucp.profile import CHECKOUT, SHOPPING
from ..protocols.ucp.schema import BASE, UCP_VERSION, first_problem, validator
from ..protocols.ucp.shapes import postal_address
from ..protocols.ucp.signatures import SharedKey, Signer, SigningKey, sign_request
from .shop_client import SessionLine, SessionView
from .transport import (
    ClosingClient,
    ProtocolTransport,
    Reply,
    checked_merchant_url,
    malformed,
    read,
    refused_destination,
)

__all__ = [
    "MAX_PRODUCTS",
    "UcpClient",
    "UcpSessionView",
    "parse_json_path",
    "session_view",
]

MAX_PRODUCTS = 10_000
MAX_PAGES = 1_000
PAGE_SIZE = 50
MAX_LINES = 1_000
MAX_MESSAGES = 100
MAX_TOTALS = 50
MAX_VARIANTS = 1_000
MAX_OPTIONS = 50
MAX_ID = 256
MAX_TEXT = 10_000
MAX_URL = 2048
MAX_QUANTITY = 1_000_000
MAX_AMOUNT = 10**15
READY = "ready_for_complete"
DONE = ("completed", "complete_in_progress")
INSTRUMENT_ID = "instr_paypal"
CREDENTIAL_TYPE = payment.CREDENTIAL_TYPES[0]  # paypal_payment_token
_PROFILE_REF = BASE + "discovery/profile.json#/$defs/business_profile"
SPOKEN = (v0825.VERSION, UCP_VERSION, v0111.VERSION)
"""The releases this client speaks (its platform profile must declare the one it is given)."""
_ESCALATIONS = ("requires_buyer_input", "requires_buyer_review")
_PATH_PART = re.compile(
    r"\.(?P<name>[A-Za-z_][\w-]*)|\[(?P<index>\d{1,9})\]|\[(?P<q>['\"])(?P<key>[^'\"\\]*)(?P=q)\]"
)


def parse_json_path(path: Any) -> tuple[str | int, ...]:
    """A message's RFC 9535 JSONPath (``$.line_items[1].item.id``, ``$['buyer']``) as
    ``("line_items", 1, "item", "id")``; ``()`` for the root or anything not such a path."""
    if not isinstance(path, str) or not path.startswith("$") or len(path) > 1024:
        return ()
    parts: list[str | int] = []
    at = 1
    while at < len(path):
        found = _PATH_PART.match(path, at)
        if found is None:
            return ()
        index = found.group("index")
        parts.append(int(index) if index is not None else found.group("name") or found["key"])
        at = found.end()
    return tuple(parts)


# ---------------------------------------------------------------- the view of a session


@dataclass(frozen=True)
class UcpSessionView(SessionView):
    """A UCP checkout as a :class:`SessionView` (UCP's status names kept; see the module)."""

    continue_url: str | None = None

    @property
    def ready(self) -> bool:
        return self.status == READY


def _invalid(message: str) -> CheckoutError:
    return malformed(message, who="the business")


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(f"{where} is not an object")
    return value


def _list(value: Any, where: str, limit: int) -> list[Any]:
    if not isinstance(value, list):
        raise _invalid(f"{where} is not a list")
    if len(value) > limit:
        raise _invalid(f"{where} has more than {limit} entries")
    return value


def _str(value: Any, where: str, limit: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _invalid(f"{where} is not a non-empty string")
    if len(value) > limit:
        raise _invalid(f"{where} is longer than {limit} characters")
    return value


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    """Free text: a string, cut to ``limit``; anything else is no text."""
    return value[:limit] if isinstance(value, str) else ""


def _int(value: Any, where: str, low: int = -MAX_AMOUNT, high: int = MAX_AMOUNT) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise _invalid(f"{where} is not an integer from {low} to {high}")
    return value


def _currency(value: Any, where: str) -> str:
    currency = _str(value, where, 3).upper()
    try:
        Money.from_minor(0, currency)
    except ValueError:
        raise _invalid(f"{where} {currency!r} is not a supported currency") from None
    return currency


def _totals(value: Any, where: str, currency: str) -> dict[str, Money]:
    out: dict[str, Money] = {}
    for index, raw in enumerate(_list(value, where, MAX_TOTALS)):
        total = _obj(raw, f"{where}[{index}]")
        kind = _str(total.get("type"), f"{where}[{index}].type", 64)
        out[kind] = Money.from_minor(
            _int(total.get("amount"), f"{where}[{index}].amount"), currency
        )
    return out


def _message(raw: Any, where: str) -> dict[str, Any]:
    """A message with its known fields, strings bounded (``content`` always there)."""
    data = _obj(raw, where)
    message: dict[str, Any] = {"type": _str(data.get("type"), f"{where}.type", 64)}
    for key, limit in (("code", 128), ("path", 1024), ("severity", 64), ("content_type", 64)):
        if isinstance(data.get(key), str):
            message[key] = data[key][:limit]
    message["content"] = _text(data.get("content"), 2000)
    return message


def _messages(value: Any) -> tuple[dict[str, Any], ...]:
    return tuple(
        _message(raw, f"messages[{i}]")
        for i, raw in enumerate(_list(value, "messages", MAX_MESSAGES))
    )


def _order(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    data = _obj(value, "order")
    order: dict[str, Any] = {"id": _str(data.get("id"), "order.id")}
    for key in ("label", "permalink_url"):
        if isinstance(data.get(key), str):
            order[key] = data[key][:MAX_URL]
    if "label" in order:
        order["order_number"] = order["label"]
    return order


def session_view(body: Any) -> UcpSessionView:
    """A UCP checkout answer as a :class:`UcpSessionView`; ``invalid_response`` if malformed."""
    root = _obj(body, "the checkout")
    currency = _currency(root.get("currency"), "currency")
    lines = []
    for index, raw in enumerate(_list(root.get("line_items", []), "line_items", MAX_LINES)):
        where = f"line_items[{index}]"
        line = _obj(raw, where)
        item = _obj(line.get("item"), f"{where}.item")
        item_id = _str(item.get("id"), f"{where}.item.id")
        quantity = _int(line.get("quantity"), f"{where}.quantity", 0, MAX_QUANTITY)
        unit = Money.from_minor(_int(item.get("price"), f"{where}.item.price", 0), currency)
        line_totals = _totals(line.get("totals", []), f"{where}.totals", currency)
        lines.append(
            SessionLine(
                item_id=item_id,
                name=_text(item.get("title"), 1000) or item_id,
                quantity=quantity,
                unit_price=unit,
                total=line_totals.get("total", unit * quantity),
            )
        )
    continue_url = root.get("continue_url")
    return UcpSessionView(
        id=_str(root.get("id"), "id"),
        status=_str(root.get("status"), "status", 64),
        currency=currency,
        lines=tuple(lines),
        totals=_totals(root.get("totals", []), "totals", currency),
        messages=_messages(root.get("messages", [])),
        order=_order(root.get("order")),
        raw=root,
        continue_url=continue_url[:MAX_URL] if isinstance(continue_url, str) else None,
    )


# ---------------------------------------------------------------- refusals


def _refusal(messages: Sequence[dict[str, Any]], status: int, prefer: str = "") -> CheckoutError:
    """The error among ``messages`` that says why a call failed: an unrecoverable one first,
    then one whose path starts with ``prefer``, then the first error."""
    errors = [m for m in messages if m["type"] == "error"] or list(messages)
    chosen = next((m for m in errors if m.get("severity") == "unrecoverable"), None)
    if chosen is None and prefer:
        chosen = next((m for m in errors if str(m.get("path", "")).startswith(prefer)), None)
    if chosen is None and errors:
        chosen = errors[0]
    if chosen is None:
        return CheckoutError("the business refused the request", code="error", status=status)
    return CheckoutError(
        chosen["content"] or chosen.get("code") or "refused",
        code=chosen.get("code") or "error",
        param=parse_json_path(chosen.get("path")),
        status=status,
    )


def _blocking(view: SessionView) -> list[dict[str, Any]]:
    """The error messages that are not escalations to the buyer."""
    return [
        m for m in view.messages if m["type"] == "error" and m.get("severity") not in _ESCALATIONS
    ]


def _refusal_of(reply: Reply) -> CheckoutError:
    """A 4xx/5xx answer (UCP's ``{"code", "content", "path"}``, or an ``error_response`` with
    ``messages``) as a CheckoutError."""
    body = reply.object()
    if body is None:
        return CheckoutError(f"HTTP {reply.status}", code="error", status=reply.status)
    if isinstance(body.get("messages"), list):  # an error_response on a 4xx
        with contextlib.suppress(CheckoutError):
            return _refusal(_messages(body["messages"]), reply.status)
    content = _text(body.get("content") or body.get("message"), 2000)
    return CheckoutError(
        content or f"HTTP {reply.status}",
        code=_text(body.get("code"), 128) or "error",
        param=parse_json_path(body.get("path")),
        status=reply.status,
    )


# ---------------------------------------------------------------- discovery


def _check_url(value: Any, where: str) -> str:
    url = _str(value, where, MAX_URL)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _invalid(f"{where} is not an absolute http(s) URL")
    if parts.username is not None or parts.fragment or parts.query:
        raise _invalid(f"{where} may carry no credentials, query or fragment")
    return url.rstrip("/")


def _fetch_profile(http: httpx.Client, url: str) -> dict[str, Any]:
    try:
        reply = read(http, http.build_request("GET", url), who="the business")
    except DestinationRefused as error:
        raise refused_destination(error) from error
    except httpx.TransportError as error:
        raise CheckoutError(
            f"{url} cannot be reached: {error}", code="unreachable", status=503
        ) from error
    if reply.status >= 500:
        raise CheckoutError(
            f"{url} failed (HTTP {reply.status}); try again later", code="unreachable", status=503
        )
    if reply.status != 200:
        raise CheckoutError(
            f"{url} serves no UCP business profile (HTTP {reply.status})",
            code="not_found",
            status=404,
        )
    try:
        document = reply.json()
    except ValueError:
        raise _invalid(f"{url} is not JSON") from None
    profile = _obj(document, "the profile")
    _obj(profile.get("ucp"), "the profile's ucp")
    return profile


def _malformed(url: str, problem: CheckoutError) -> CheckoutError:
    return CheckoutError(
        f"{url}'s profile is not a valid UCP business profile: {problem.message}",
        code="profile_malformed",
        param=problem.param,
        status=502,
    )


@dataclass(frozen=True)
class _Business:
    """What this client takes from a business profile."""

    endpoint: str
    capabilities: frozenset[str]
    payment_handler: str | None

    @classmethod
    def read_0111(cls, url: str, document: dict[str, Any]) -> _Business:
        """A v2026-01-11 profile: one service object, capabilities and handlers as lists."""
        ref = BASE + "discovery/profile.json"
        problem = first_problem(validator(ref, version=v0111.VERSION), document)
        if problem is not None:
            raise _malformed(url, problem)
        ucp = document["ucp"]
        service = ucp["services"].get(SHOPPING)
        rest = service.get("rest") if isinstance(service, dict) else None
        if not isinstance(rest, dict) or service.get("version") != v0111.VERSION:
            raise CheckoutError(
                f"{url} offers no {SHOPPING} REST endpoint at version {v0111.VERSION}",
                code="transport_unsupported",
            )
        capabilities = frozenset(
            entry["name"]
            for entry in ucp["capabilities"][:64]
            if entry.get("version") == v0111.VERSION
        )
        if CHECKOUT not in capabilities:
            raise CheckoutError(
                f"{url} offers no {CHECKOUT} capability at version {v0111.VERSION}",
                code="capabilities_incompatible",
            )
        handlers = (document.get("payment") or {}).get("handlers") or []
        handler = next(
            (
                _str(entry["id"], "the PayPal handler's id")
                for entry in handlers[:64]
                if isinstance(entry, dict) and entry.get("name") == payment.HANDLER_NAME
            ),
            None,
        )
        return cls(_check_url(rest["endpoint"], "the REST endpoint"), capabilities, handler)

    @classmethod
    def read(cls, url: str, document: dict[str, Any], version: str = UCP_VERSION) -> _Business:
        if version == v0111.VERSION:
            return cls.read_0111(url, document)
        problem = first_problem(validator(_PROFILE_REF), document)
        if problem is not None:
            raise _malformed(url, problem)
        ucp = document["ucp"]
        rest = [
            entry
            for entry in _list(ucp["services"].get(SHOPPING, []), "services", 64)
            if entry.get("transport") == "rest"
            and entry.get("version") == version
            and "endpoint" in entry
        ]
        if not rest:
            raise CheckoutError(
                f"{url} offers no {SHOPPING} REST endpoint at version {version}",
                code="transport_unsupported",
            )
        capabilities = frozenset(
            name
            for name, entries in list(ucp.get("capabilities", {}).items())[:64]
            if any(entry.get("version") == version for entry in entries[:64])
        )
        if CHECKOUT not in capabilities:
            raise CheckoutError(
                f"{url} offers no {CHECKOUT} capability at version {version}",
                code="capabilities_incompatible",
            )
        handler = None
        for entry in ucp["payment_handlers"].get(payment.HANDLER_NAME, [])[:64]:
            types = [i.get("type") for i in entry.get("available_instruments", [])[:64]]
            if isinstance(entry.get("id"), str) and (not types or payment.INSTRUMENT_TYPE in types):
                handler = _str(entry["id"], "the PayPal handler's id")
                break
        return cls(_check_url(rest[0]["endpoint"], "the REST endpoint"), capabilities, handler)


def _agent_header(profile_url: str) -> str:
    """``UCP-Agent`` naming ``profile_url``; :class:`ConfigurationError` if the business would
    refuse it (it must be an absolute https URL without credentials or fragment)."""
    escaped = profile_url.replace("\\", "\\\\").replace('"', '\\"')
    header = f'profile="{escaped}"'
    try:
        if parse_agent_header(header) == profile_url:
            return header
    except ValueError as error:
        raise ConfigurationError(f"profile_url: {error}") from None
    raise ConfigurationError("profile_url cannot be sent in a UCP-Agent header")


# ---------------------------------------------------------------- requests


def _line_items(items: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"item": {"id": item}, "quantity": quantity} for item, quantity in items]


def _buyer(contact: Contact | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    buyer: dict[str, str] = {}
    if contact is not None:
        first, _, last = contact.name.strip().partition(" ")
        for key, value in (
            ("first_name", first),
            ("last_name", last.strip()),
            ("email", contact.email),
            ("phone_number", contact.phone),
        ):
            if value:
                buyer[key] = value
    return buyer | dict(extra or {})


def _merged(lines: Iterable[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item, quantity in lines:
        out[item] = out.get(item, 0) + quantity
    return out


def _shipping_method(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """The session's shipping method (the first), as the business answered it."""
    fulfillment = raw.get("fulfillment")
    methods = fulfillment.get("methods") if isinstance(fulfillment, dict) else None
    if not isinstance(methods, list):
        return None
    shipping = [m for m in methods[:16] if isinstance(m, dict) and m.get("type") == "shipping"]
    return shipping[0] if shipping else None


def _groups(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The groups (of fulfillment options) of the session's shipping method."""
    groups = (_shipping_method(raw) or {}).get("groups")
    if not isinstance(groups, list):
        return []
    return [g for g in groups[:16] if isinstance(g, dict)]


def _ids(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in value[:MAX_LINES] if isinstance(v, str) and len(v) <= MAX_ID]


def _destination(address: Address, version: str) -> dict[str, Any]:
    """A destination in the request shape of ``version`` (v2026-08-25's are typed)."""
    destination = postal_address(address)
    if version == v0825.VERSION:
        destination["type"] = v0825.DESTINATION_TYPE
    return destination


def _fulfillment(
    current: SessionView,
    address: Address | None,
    option: str | None,
    *,
    same_lines: bool,
    version: str = UCP_VERSION,
) -> dict[str, Any]:
    """An update's ``fulfillment``: the session's shipping method with a new destination and/or
    option (its ids echoed, as the request shape requires them)."""
    known = _shipping_method(current.raw) or {}
    method: dict[str, Any] = {"type": "shipping"}
    if isinstance(known.get("id"), str):
        method["id"] = known["id"]
    # The lines it covers: the session's, unless the update replaces them (ids not known yet).
    method["line_item_ids"] = _ids(known.get("line_item_ids")) if same_lines else []
    if address is not None:
        method["destinations"] = [_destination(address, version)]
    elif isinstance(known.get("selected_destination_id"), str):
        method["selected_destination_id"] = known["selected_destination_id"]
    if option is not None:
        groups = _groups(current.raw)
        if not groups or not isinstance(groups[0].get("id"), str):
            raise CheckoutError(
                "the checkout offers no shipping options to choose from yet",
                code="invalid",
                param=("fulfillment", "methods", 0, "groups"),
            )
        method["groups"] = [{"id": groups[0]["id"], "selected_option_id": option}]
    return {"methods": [method]}


def _same_place(destination: Mapping[str, Any], address: Address) -> bool:
    wanted = postal_address(address)
    return all(
        " ".join(str(destination.get(key, "")).split()).casefold()
        == " ".join(str(wanted[key]).split()).casefold()
        for key in ("street_address", "postal_code", "address_country")
    )


def _applied(
    view: SessionView,
    items: Sequence[tuple[str, int]] | None,
    address: Address | None,
    option: str | None,
) -> str | None:
    """The path prefix of a requested change the answer does not show, or ``None``."""
    if items is not None and _merged(items) != _merged(
        (line.item_id, line.quantity) for line in view.lines
    ):
        return "$.line_items"
    method = _shipping_method(view.raw)
    if method is None:  # no fulfillment extension: the buyer gives the address (escalation)
        return None
    if option is not None and all(g.get("selected_option_id") != option for g in _groups(view.raw)):
        return "$.fulfillment"
    if address is not None:
        destinations = [d for d in method.get("destinations") or [] if isinstance(d, dict)]
        chosen = method.get("selected_destination_id")
        selected = [d for d in destinations if d.get("id") == chosen] or destinations[:1]
        if not selected or not _same_place(selected[0], address):
            return "$.fulfillment"
    return None


# ---------------------------------------------------------------- the client


class UcpClient(ClosingClient):
    """A UCP business's checkout and catalog over REST, at ``endpoint`` (the profile's)."""

    def __init__(
        self,
        endpoint: str,
        token: str,
        *,
        profile_url: str,
        payment_handler: str | None = payment.HANDLER_ID,
        capabilities: frozenset[str] = frozenset({CHECKOUT}),
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        attempts: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
        signing_secret: str | None = None,
        signing_key: SigningKey | None = None,
        version: str = UCP_VERSION,
        currency: str = "USD",
    ) -> None:
        if signing_secret is not None and signing_key is not None:
            raise ConfigurationError("sign with a signing secret or a signing key, not both")
        if version not in SPOKEN:
            raise ConfigurationError(
                f"this client speaks UCP {' and '.join(SPOKEN)}, not {version[:32]}"
            )
        self.version = version
        self.currency = currency.upper()  # what a v2026-01-11 create names
        self._transport = ProtocolTransport(
            endpoint,
            who="the business",
            refusal=_refusal_of,
            transport=transport,
            timeout=timeout,
            attempts=attempts,
            sleep=sleep,
            allow_private=allow_private,
            resolver=resolver,
        )
        self.base_url = self._transport.base_url
        self.profile_url = profile_url
        self.payment_handler = payment_handler
        self.capabilities = capabilities
        self._agent = _agent_header(profile_url)
        self._token = token
        self._signer: Signer | None = signing_key
        if signing_secret is not None:
            self._signer = SharedKey.from_secret(signing_secret)

    @classmethod
    def discover(
        cls,
        url: str,
        token: str,
        *,
        profile_url: str,
        transport: httpx.BaseTransport | None = None,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
        version: str = UCP_VERSION,
        **kwargs: Any,
    ) -> UcpClient:
        """The client for the business at ``url``, from its ``/.well-known/ucp``;
        ``profile_url`` is the platform profile this agent presents in ``UCP-Agent``, and
        ``version`` the release it declares (one of :data:`SPOKEN`): the business's profile
        at that release is used (the root's, or the one its ``supported_versions`` names).

        Raises :class:`CheckoutError`: ``unreachable``, ``not_found``, ``invalid_response`` or
        ``profile_malformed`` for a missing or broken profile, ``version_unsupported`` for a
        business on another release, ``transport_unsupported`` without the REST shopping
        service, ``capabilities_incompatible`` without checkout, ``destination_refused`` for a
        business (or an endpoint its profile names) at a non-public address.
        """
        _agent_header(profile_url)  # a bad one fails before anything is sent
        where = checked_merchant_url(
            f"{url.rstrip('/')}/.well-known/ucp", allow_private=allow_private
        )
        guarded = guarded_transport(transport, allow_private=allow_private, resolver=resolver)
        with httpx.Client(transport=guarded, timeout=kwargs.get("timeout", 30.0)) as http:
            document = _fetch_profile(http, where)
            found = document["ucp"].get("version")
            if found != version:
                older = document["ucp"].get("supported_versions")
                link = older.get(version) if isinstance(older, dict) else None
                if isinstance(link, str):
                    where = _check_url(link, f"supported_versions[{version}]")
                    checked_merchant_url(where, allow_private=allow_private)
                    document = _fetch_profile(http, where)
                    found = document["ucp"].get("version")
            if found != version:
                shown = found[:32] if isinstance(found, str) else "(none)"
                raise CheckoutError(
                    f"{url} speaks UCP {shown}, not {version}", code="version_unsupported"
                )
        business = _Business.read(where, document, version)
        return cls(
            business.endpoint,
            token,
            profile_url=profile_url,
            payment_handler=business.payment_handler,
            capabilities=business.capabilities,
            transport=transport,
            allow_private=allow_private,
            resolver=resolver,
            version=version,
            **kwargs,
        )

    # ------------------------------------------------------------ catalog

    def products(self, *, page_size: int = PAGE_SIZE) -> list[Product]:
        """The business's catalog as catalog products (variants priced, with stock and options),
        every page of a browsing search; ``catalog_too_large`` beyond :data:`MAX_PRODUCTS`."""
        found: dict[str, Product] = {}
        cursor: str | None = None
        cursors: set[str] = set()
        for _ in range(MAX_PAGES):
            pagination: dict[str, Any] = {"limit": max(1, min(page_size, PAGE_SIZE))}
            if cursor is not None:
                pagination["cursor"] = cursor
            body = {"filters": {"price": {"min": 0}}, "pagination": pagination}
            page = self._send("POST", "/catalog/search", body, keyed=False)
            rows = _list(page.get("products", []), "products", MAX_PRODUCTS)
            for raw in rows:
                product = _product(raw, f"products[{len(found)}]")
                found.setdefault(product.id, product)
                if len(found) > MAX_PRODUCTS:
                    raise CheckoutError(
                        f"the catalog has more than {MAX_PRODUCTS} products",
                        code="catalog_too_large",
                        status=502,
                    )
            paging = _obj(page.get("pagination", {}), "pagination")
            if paging.get("has_next_page") is not True:
                return list(found.values())
            cursor = _str(paging.get("cursor"), "pagination.cursor", MAX_URL)
            if cursor in cursors or not rows:
                raise _invalid("the search's pages do not advance")
            cursors.add(cursor)
        raise CheckoutError(
            f"the catalog has more than {MAX_PAGES} pages", code="catalog_too_large", status=502
        )

    # ------------------------------------------------------------ checkout

    def create(
        self,
        items: Sequence[tuple[str, int]],
        *,
        address: Address | None = None,
        contact: Contact | None = None,
        buyer: dict[str, str] | None = None,
    ) -> UcpSessionView:
        body: dict[str, Any] = {"line_items": _line_items(items), **self._required(None)}
        people = _buyer(contact, buyer)
        if people:
            body["buyer"] = people
        if address is not None:
            destination = _destination(address, self.version)
            body["fulfillment"] = {"methods": [{"type": "shipping", "destinations": [destination]}]}
        view = self._session("POST", "/checkout-sessions", body)
        self._check(view, items, address, None)
        return view

    def update(
        self,
        session_id: str,
        *,
        items: Sequence[tuple[str, int]] | None = None,
        address: Address | None = None,
        contact: Contact | None = None,
        shipping_option: str | None = None,
    ) -> UcpSessionView:
        """Change the session; what is not given stays as it is (its lines are read and sent
        back, as the PUT requires them). A shipping option chosen with a first address is
        chosen in a second PUT when the first did not select it: the options (and the id of
        their group, which the request must name) only exist once there is a destination; if
        that second PUT is refused, the raised error says so and the address stays set."""
        current = self.get(session_id)
        option = shipping_option
        if option is not None and address is not None and not _groups(current.raw):
            option = None
        view = self._put(current, items, address, contact, option)
        chosen = [g.get("selected_option_id") for g in _groups(view.raw)]
        if shipping_option is not None and option is None and shipping_option not in chosen:
            view = self._put(view, None, None, None, shipping_option)
        return view

    def _put(
        self,
        current: UcpSessionView,
        items: Sequence[tuple[str, int]] | None,
        address: Address | None,
        contact: Contact | None,
        option: str | None,
    ) -> UcpSessionView:
        lines = items if items is not None else [(li.item_id, li.quantity) for li in current.lines]
        body: dict[str, Any] = {"line_items": _line_items(lines), **self._required(current)}
        if contact is not None:
            known = current.raw.get("buyer")
            body["buyer"] = _buyer(contact, None)
            if isinstance(known, dict):
                kept = {k: v for k, v in list(known.items())[:20] if isinstance(v, str)}
                body["buyer"] = kept | body["buyer"]
        if address is not None or option is not None:
            body["fulfillment"] = _fulfillment(
                current, address, option, same_lines=items is None, version=self.version
            )
        view = self._session("PUT", f"/checkout-sessions/{_segment(current.id)}", body)
        self._check(view, items, address, option)
        return view

    def _required(self, current: UcpSessionView | None) -> dict[str, Any]:
        """What v2026-01-11 requires of a create or update besides the changes: the session's
        id (update), its currency and a payment object (nothing of it is the platform's to
        set before completion)."""
        if self.version != v0111.VERSION:
            return {}
        if current is None:
            return {"currency": self.currency, "payment": {}}
        return {"id": current.id, "currency": current.currency, "payment": {}}

    def get(self, session_id: str) -> UcpSessionView:
        return self._session("GET", f"/checkout-sessions/{_segment(session_id)}", None)

    def complete(
        self, session_id: str, payment_token: str, *, buyer: dict[str, str] | None = None
    ) -> UcpSessionView:
        """Pay with a PayPal payment token through the business's PayPal handler. Only call
        this after the buyer said yes to :attr:`SessionView.total`: it moves money."""
        if self.payment_handler is None:
            raise CheckoutError(
                "the business offers no PayPal payment handler",
                code="payment_handler_unavailable",
                param=("payment", "instruments"),
            )
        credential = {"type": CREDENTIAL_TYPE, "token": payment_token}
        body: dict[str, Any]
        if self.version == v0111.VERSION:
            # The release's one instrument shape is a card's: the PayPal token is its credential.
            card: dict[str, Any] = {"type": "card", "brand": "paypal", "last_digits": ""}
            instrument = {"id": INSTRUMENT_ID, "handler_id": self.payment_handler, **card}
            instrument["credential"] = credential
            body = {"payment_data": instrument, "risk_signals": {}}
        else:
            selected: dict[str, Any] = {
                "id": INSTRUMENT_ID,
                "handler_id": self.payment_handler,
                "type": payment.INSTRUMENT_TYPE,
                "selected": True,
                "credential": credential,
            }
            body = {"payment": {"instruments": [selected]}}
        if buyer and self.version != v0111.VERSION:
            body["buyer"] = dict(buyer)
        path = f"/checkout-sessions/{_segment(session_id)}/complete"
        view = self._session("POST", path, body)
        errors = _blocking(view)
        if view.status not in DONE or any(m.get("severity") == "unrecoverable" for m in errors):
            raise _refusal(errors or list(view.messages), 200, "$.payment")
        return view

    def cancel(self, session_id: str) -> UcpSessionView:
        view = self._session("POST", f"/checkout-sessions/{_segment(session_id)}/cancel", None)
        errors = _blocking(view)
        if any(m.get("severity") == "unrecoverable" for m in errors):
            raise _refusal(errors, 200)
        return view

    def _check(
        self,
        view: UcpSessionView,
        items: Sequence[tuple[str, int]] | None,
        address: Address | None,
        option: str | None,
    ) -> None:
        """Raise if the business refused the change it answers the session for."""
        errors = _blocking(view)
        if not errors:
            return
        if any(m.get("severity") == "unrecoverable" for m in errors):
            raise _refusal(errors, 200)
        missing = _applied(view, items, address, option)
        if missing is not None:
            raise _refusal(errors, 200, missing)

    def _session(self, method: str, path: str, body: dict[str, Any] | None) -> UcpSessionView:
        return session_view(self._send(method, path, body, keyed=method != "GET"))

    # ------------------------------------------------------------ transport

    def _send(
        self, method: str, path: str, body: dict[str, Any] | None, *, keyed: bool
    ) -> dict[str, Any]:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "UCP-Agent": self._agent,
            "Accept": "application/json",
        }
        if keyed:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        content = None if body is None else orjson.dumps(body)
        if content is not None:
            headers["Content-Type"] = "application/json"

        def prepared(request: httpx.Request) -> None:
            request.headers["Request-Id"] = str(uuid.uuid4())
            if self._signer is not None:
                _sign(request, self._signer, content or b"")

        reply = self._transport.send(
            method, path, content=content, headers=headers, prepare=prepared
        )
        try:
            answer = _obj(reply.json(), "the answer")
        except ValueError:
            raise _invalid("the answer is not JSON") from None
        ucp = _obj(answer.get("ucp"), "ucp")
        if ucp.get("status") == "error":  # v2026-01-11 refuses with an HTTP error instead
            raise _refusal(_messages(answer.get("messages", [])), reply.status)
        return answer


def _sign(request: httpx.Request, signer: Signer, body: bytes) -> None:
    """Add ``Content-Digest`` (with a body), ``Signature-Input`` and ``Signature`` to
    ``request``, signed now."""
    url = str(request.url)
    signed = sign_request(signer, request.method, url, request.headers, body, datetime.now(UTC))
    for name in ("Content-Digest", "Signature-Input", "Signature"):
        if name in signed:
            request.headers[name] = signed[name]


def _segment(session_id: str) -> str:
    try:
        return path_segment(session_id)
    except ValueError as error:
        raise CheckoutError(str(error), code="invalid", param=("id",)) from None


# ---------------------------------------------------------------- catalog products


def _variant(raw: Any, where: str) -> Variant:
    data = _obj(raw, where)
    price = _obj(data.get("price"), f"{where}.price")
    currency = _currency(price.get("currency"), f"{where}.price.currency")
    amount = Money.from_minor(_int(price.get("amount"), f"{where}.price.amount", 0), currency)
    availability = data.get("availability")
    available = availability.get("available") if isinstance(availability, dict) else None
    options: dict[str, str] = {}
    for index, option in enumerate(_list(data.get("options", []), f"{where}.options", MAX_OPTIONS)):
        entry = _obj(option, f"{where}.options[{index}]")
        name = _str(entry.get("name"), f"{where}.options[{index}].name")
        options[name] = _str(entry.get("label"), f"{where}.options[{index}].label")
    return Variant(
        id=_str(data.get("id"), f"{where}.id"),
        options=options,
        price=Decimal(amount.amount),
        currency=currency,
        available=available if isinstance(available, bool) else True,
    )


def _description(value: Any) -> str:
    """Plain text, else markdown; never HTML (the release: untrusted, to be sanitised)."""
    if not isinstance(value, dict):
        return ""
    return _text(value.get("plain")) or _text(value.get("markdown"))


def _category(value: Any) -> tuple[str, ...]:
    """The category path (``"A > B"`` as levels), the ``merchant`` taxonomy's first."""
    if not isinstance(value, list):
        return ()
    entries = [
        c for c in value[:MAX_OPTIONS] if isinstance(c, dict) and isinstance(c.get("value"), str)
    ]
    chosen = next((c for c in entries if c.get("taxonomy") == "merchant"), None)
    chosen = chosen or (entries[0] if entries else None)
    if chosen is None:
        return ()
    return tuple(level.strip() for level in chosen["value"][:1000].split(">") if level.strip())


def _rating(value: Any) -> float | None:
    """A rating on a 0-5 scale (the business's scale ``0..scale_max`` rescaled)."""
    if not isinstance(value, dict):
        return None
    score, top = value.get("value"), value.get("scale_max", 5)
    if not isinstance(score, int | float) or not isinstance(top, int | float):
        return None
    if isinstance(score, bool) or isinstance(top, bool) or not math.isfinite(score * top):
        return None
    return min(5.0, max(0.0, score * 5 / top)) if top > 0 else None


def _metadata(value: Any) -> tuple[str | None, dict[str, tuple[str, ...]]]:
    """The brand and attributes a business may put in ``metadata`` (this store does)."""
    if not isinstance(value, dict):
        return None, {}
    brand = _text(value.get("brand"), 200) or None
    attributes: dict[str, tuple[str, ...]] = {}
    raw = value.get("attributes")
    if isinstance(raw, dict):
        for key, items in list(raw.items())[:MAX_OPTIONS]:
            if isinstance(key, str) and isinstance(items, list) and len(key) <= 200:
                attributes[key] = tuple(i[:200] for i in items[:MAX_OPTIONS] if isinstance(i, str))
    return brand, attributes


def _product(raw: Any, where: str) -> Product:
    data = _obj(raw, where)
    variants = [
        _variant(v, f"{where}.variants[{i}]")
        for i, v in enumerate(_list(data.get("variants"), f"{where}.variants", MAX_VARIANTS))
    ]
    brand, attributes = _metadata(data.get("metadata"))
    rating = data.get("rating")
    count = rating.get("count") if isinstance(rating, dict) else None
    try:
        return Product(
            id=_str(data.get("id"), f"{where}.id"),
            title=_str(data.get("title"), f"{where}.title", 1000),
            description=_description(data.get("description")),
            brand=brand,
            category=_category(data.get("categories")),
            attributes=attributes,
            variants=tuple(variants),
            rating=_rating(rating),
            rating_count=count if type(count) is int and 0 <= count < MAX_AMOUNT else 0,
        )
    except ValidationError as error:
        raise _invalid(f"{where}: {error.errors()[0]['msg']}") from None
