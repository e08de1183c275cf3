"""Discovery and negotiation (overview.md, "Discovery, Governance, and Negotiation").

The business profile served at ``/.well-known/ucp`` declares the one protocol version this
store implements (no ``supported_versions``: there are no older profiles), the
``dev.ucp.shopping`` REST service, the capabilities below, the PayPal payment handler and the
business's ``signing_keys`` (the public JWKs its order webhooks are signed with, see
:mod:`.signatures`).

Each request's platform profile is negotiated against it, as the spec's request-time rules say:
the platform's ``ucp.version`` must be this version (there is no negotiating the protocol
version down without ``supported_versions``; anything else is ``version_unsupported``);
capabilities are intersected by name at the highest version both list, extensions whose parents
all dropped out are pruned until nothing changes; payment handlers are kept where both sides
name them, with ``available_instruments`` narrowed to the types both accept.

The platform's order capability ``config`` (order.md, "Webhook URL Configuration";
``order.json#/$defs/platform_schema``) gives the ``webhook_url`` order events go to. It is
untrusted input the business will POST to, so only an absolute ``https`` URL of at most
:data:`MAX_WEBHOOK_URL` characters, without credentials or fragment, to a host not spelled as a
non-public address (:func:`~cartagent.outbound.host_refusal`: ``localhost.``, ``127.1``,
``[::ffff:10.0.0.1]``, ...), is taken; anything else is ``profile_malformed``. What the host
resolves to is checked when the event is sent (the sender's transport is guarded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...outbound import host_refusal
from .schema import BASE, UCP_VERSION, first_problem, validator

__all__ = [
    "BUYER_CONSENT",
    "CAPABILITIES",
    "CHECKOUT",
    "DISCOUNT",
    "FULFILLMENT",
    "LOOKUP",
    "ORDER",
    "SEARCH",
    "SHOPPING",
    "Capability",
    "Negotiated",
    "PlatformProfile",
    "ProfileMalformed",
    "business_profile",
    "checked_webhook_url",
    "negotiate",
    "platform_profile",
    "profile_version",
]

SHOPPING = "dev.ucp.shopping"
CHECKOUT = "dev.ucp.shopping.checkout"
FULFILLMENT = "dev.ucp.shopping.fulfillment"
SEARCH = "dev.ucp.shopping.catalog.search"
LOOKUP = "dev.ucp.shopping.catalog.lookup"
ORDER = "dev.ucp.shopping.order"
DISCOUNT = "dev.ucp.shopping.discount"
BUYER_CONSENT = "dev.ucp.shopping.buyer_consent"

_SITE = f"https://ucp.dev/{UCP_VERSION}"
_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_ENTRIES = 64  # capability, handler and instrument entries read from a platform profile
MAX_WEBHOOK_URL = 2048


class ProfileMalformed(Exception):
    """The platform's profile is not a UCP platform profile."""


@dataclass(frozen=True)
class Capability:
    name: str
    spec: str  # under https://ucp.dev/<version>/specification/
    schema: str  # under https://ucp.dev/<version>/schemas/
    extends: str | None = None
    config: Mapping[str, Any] | None = None

    def declaration(self, version: str = UCP_VERSION, site: str = _SITE) -> dict[str, Any]:
        """Its entry in a business profile of release ``version``, its documents at ``site``."""
        entry: dict[str, Any] = {
            "version": version,
            "spec": f"{site}/specification/{self.spec}",
            "schema": f"{site}/schemas/{self.schema}",
        }
        if self.extends is not None:
            entry["extends"] = self.extends
        if self.config is not None:
            entry["config"] = dict(self.config)
        return entry


CAPABILITIES = (
    Capability(CHECKOUT, "checkout", "shopping/checkout.json"),
    Capability(
        FULFILLMENT,
        "fulfillment",
        "shopping/fulfillment.json",
        extends=CHECKOUT,
        config={"allows_multi_destination": {"shipping": False, "pickup": False}},
    ),
    Capability(DISCOUNT, "discount", "shopping/discount.json", extends=CHECKOUT),
    Capability(BUYER_CONSENT, "buyer-consent", "shopping/buyer_consent.json", extends=CHECKOUT),
    Capability(SEARCH, "catalog/search", "shopping/catalog_search.json"),
    Capability(LOOKUP, "catalog/lookup", "shopping/catalog_lookup.json"),
    Capability(ORDER, "order", "shopping/order.json"),
)
_EXTENDS_0408 = {cap.name: cap.extends for cap in CAPABILITIES if cap.extends is not None}


def business_profile(
    endpoint: str,
    handlers: Mapping[str, Sequence[dict[str, Any]]],
    signing_keys: Sequence[Mapping[str, str]] = (),
    *,
    mcp_endpoint: str | None = None,
) -> dict[str, Any]:
    """The document served at ``/.well-known/ucp``; ``endpoint`` is the REST base URL,
    ``mcp_endpoint`` the MCP binding's, if served, ``signing_keys`` the public JWKs of the
    business's signing keys."""
    profile: dict[str, Any] = {
        "ucp": {
            "version": UCP_VERSION,
            "services": {
                SHOPPING: [
                    {
                        "version": UCP_VERSION,
                        "spec": f"{_SITE}/specification/overview",
                        "transport": "rest",
                        "schema": f"{_SITE}/services/shopping/rest.openapi.json",
                        "endpoint": endpoint.rstrip("/"),
                    }
                ]
                + (
                    [
                        {
                            "version": UCP_VERSION,
                            "spec": f"{_SITE}/specification/overview",
                            "transport": "mcp",
                            "schema": f"{_SITE}/services/shopping/mcp.openrpc.json",
                            "endpoint": mcp_endpoint,
                        }
                    ]
                    if mcp_endpoint
                    else []
                )
            },
            "capabilities": {cap.name: [cap.declaration()] for cap in CAPABILITIES},
            "payment_handlers": {name: list(entries) for name, entries in handlers.items()},
        }
    }
    if signing_keys:
        profile["signing_keys"] = [dict(key) for key in signing_keys]
    return profile


@dataclass(frozen=True)
class PlatformProfile:
    """What negotiation needs from a platform's profile."""

    url: str
    version: str
    capabilities: Mapping[str, frozenset[str]]  # name -> the versions it lists
    payment_handlers: Mapping[str, tuple[Mapping[str, Any], ...]]
    webhook_url: str | None = None  # the order capability's, at this business's version
    webhook_problem: str | None = None  # why the webhook_url it gave cannot be used


def checked_webhook_url(value: Any, *, allow_private: bool = False) -> str:
    """``value`` if it is a webhook URL the business may POST to; :class:`ProfileMalformed`
    says why not otherwise. ``allow_private`` (local development and testing) also takes
    plain http and loopback or private hosts."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_WEBHOOK_URL:
        raise ProfileMalformed(
            f"the order webhook_url must be a URL of at most {MAX_WEBHOOK_URL} characters"
        )
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError:
        raise ProfileMalformed("the order webhook_url is not a URL") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        raise ProfileMalformed("the order webhook_url must be an absolute https URL")
    if parts.username is not None or parts.fragment or any(c.isspace() for c in value):
        raise ProfileMalformed(
            "the order webhook_url may carry neither credentials, a fragment nor spaces"
        )
    if not allow_private and host_refusal(parts.hostname) is not None:
        raise ProfileMalformed("the order webhook_url may not point at a local or private host")
    return value


def _webhook_url(
    entries: Sequence[Any], allow_private: bool, version: str
) -> tuple[str | None, str | None]:
    """The ``config.webhook_url`` of the order capability entry at ``version``, if any, or
    why it cannot be used (the platform then gets no order events; its profile still counts)."""
    for entry in entries[:MAX_ENTRIES]:
        if not isinstance(entry, Mapping) or entry.get("version") != version:
            continue
        config = entry.get("config")
        if isinstance(config, Mapping) and "webhook_url" in config:
            try:
                return checked_webhook_url(config["webhook_url"], allow_private=allow_private), None
            except ProfileMalformed as error:
                return None, str(error)
    return None, None


def profile_version(document: Any) -> str:
    """The protocol version a profile declares (read before the rest is checked: a profile of
    another release is answered ``version_unsupported``, not ``profile_malformed``)."""
    ucp = document.get("ucp") if isinstance(document, dict) else None
    version = ucp.get("version") if isinstance(ucp, dict) else None
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ProfileMalformed("the profile has no ucp.version in YYYY-MM-DD form")
    return version


def platform_profile(url: str, document: Any, *, allow_private: bool = False) -> PlatformProfile:
    """``document`` read as the platform profile at ``url``; :class:`ProfileMalformed` if it
    breaks the release's ``platform_profile`` schema. ``allow_private``: see
    :func:`checked_webhook_url`."""
    version = profile_version(document)
    problem = first_problem(
        validator(BASE + "discovery/profile.json#/$defs/platform_profile"), document
    )
    if problem is not None:
        raise ProfileMalformed(f"the platform profile is not valid: {problem.message}")
    ucp = document["ucp"]
    capabilities = {
        name: frozenset(entry["version"] for entry in entries[:MAX_ENTRIES])
        for name, entries in list(ucp.get("capabilities", {}).items())[:MAX_ENTRIES]
    }
    handlers = {
        name: tuple(entries[:MAX_ENTRIES])
        for name, entries in list(ucp["payment_handlers"].items())[:MAX_ENTRIES]
    }
    order = ucp.get("capabilities", {}).get(ORDER, [])
    webhook_url, unusable = _webhook_url(order, allow_private, version)
    return PlatformProfile(url, version, capabilities, handlers, webhook_url, unusable)


@dataclass(frozen=True)
class Negotiated:
    """The outcome for one request: the protocol version, the active capabilities (name ->
    version), the payment handlers in force (as ``ucp.payment_handlers`` shows them) and, with
    the order capability active, the platform's order ``webhook_url`` if it gave one (or why
    the one it gave cannot be used). ``extends``: each active extension's parent."""

    version: str
    capabilities: Mapping[str, str]
    payment_handlers: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    webhook_url: str | None = None
    webhook_problem: str | None = None
    extends: Mapping[str, str] = field(default_factory=lambda: dict(_EXTENDS_0408))

    def active(self, name: str) -> bool:
        return name in self.capabilities

    def handler_ids(self) -> frozenset[str]:
        return frozenset(
            entry["id"] for entries in self.payment_handlers.values() for entry in entries
        )

    def envelope(
        self, root: str, *, status: str = "success", handlers: bool = False
    ) -> dict[str, Any]:
        """The response's ``ucp`` object: ``root`` and the active extensions of it only."""
        relevant = {
            name: [{"version": version}]
            for name, version in self.capabilities.items()
            if name == root or self.extends.get(name) == root
        }
        ucp: dict[str, Any] = {"version": self.version, "status": status}
        if relevant:
            ucp["capabilities"] = relevant
        if handlers:
            ucp["payment_handlers"] = {
                name: [dict(entry) for entry in entries]
                for name, entries in self.payment_handlers.items()
            }
        return ucp


def _accepted_types(theirs: Sequence[Mapping[str, Any]]) -> set[str] | None:
    """The instrument types the platform's entries for a handler take; ``None``: all of them
    (an entry without ``available_instruments`` places no restriction)."""
    if any("available_instruments" not in entry for entry in theirs):
        return None
    return {
        item["type"]
        for entry in theirs
        for item in entry["available_instruments"][:MAX_ENTRIES]
        if isinstance(item, Mapping) and isinstance(item.get("type"), str)
    }


def _handlers(
    ours: Mapping[str, Sequence[Mapping[str, Any]]], platform: PlatformProfile
) -> dict[str, tuple[dict[str, Any], ...]]:
    out: dict[str, tuple[dict[str, Any], ...]] = {}
    for name, entries in ours.items():
        theirs = platform.payment_handlers.get(name)
        if not theirs:
            continue
        accepted = _accepted_types(theirs)
        kept = []
        for entry in entries:
            resolved = {key: value for key, value in entry.items() if key not in ("spec", "schema")}
            if accepted is not None and "available_instruments" in entry:
                resolved["available_instruments"] = [
                    dict(item)
                    for item in entry["available_instruments"]
                    if item["type"] in accepted
                ]
                if not resolved["available_instruments"]:
                    continue
            kept.append(resolved)
        if kept:
            out[name] = tuple(kept)
    return out


def negotiate(
    platform: PlatformProfile,
    handlers: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    capabilities: Sequence[Capability] = CAPABILITIES,
    intersect: bool = True,
) -> Negotiated:
    """The intersection of this business's ``capabilities`` (at the platform's protocol
    version) with ``platform``'s: the spec's algorithm. Without ``intersect`` every capability
    of the business is active whatever the platform lists (extensions still need their
    parent): see ``UcpPolicy.intersect``."""
    extends = {cap.name: cap.extends for cap in capabilities if cap.extends is not None}
    active: dict[str, str] = {}
    for cap in capabilities:
        listed = platform.capabilities.get(cap.name, frozenset())
        if not intersect or platform.version in listed:
            active[cap.name] = platform.version
    pruned = True
    while pruned:
        orphans = [name for name in active if name in extends and extends[name] not in active]
        for name in orphans:
            del active[name]
        pruned = bool(orphans)
    webhook_url = platform.webhook_url if ORDER in active else None
    problem = platform.webhook_problem if ORDER in active else None
    return Negotiated(
        platform.version,
        active,
        _handlers(handlers, platform),
        webhook_url,
        problem,
        extends,
    )
