"""UCP order event webhooks (order.md, "Events"): the business POSTs the full order entity to
the platform's webhook URL, signed per signatures.md's REST binding (RFC 9421).

* The URL is the ``webhook_url`` in the platform profile's ``dev.ucp.shopping.order``
  capability ``config`` ("Webhook URL Configuration", checked by
  :func:`~cartagent.protocols.ucp.profile.checked_webhook_url`). It is remembered with the
  checkout when it is created (under :data:`WEBHOOK_KEY` in the checkout's metadata, which UCP
  never renders), so the order goes to the platform that started the checkout.
* :class:`OrderEvents` is UCP's announcer: when such a checkout completes it queues one "order
  created" event in the completion's transaction ("Order Event Webhook"; Guidelines: "MUST
  send 'Order created' event with fully populated order entity"). The body is the order as
  ``GET /orders/{id}`` renders it plus ``event_id`` and ``created_time`` (order.md's example
  request).
* :class:`UcpWebhookSigner` signs it for :class:`~cartagent.commerce.webhooks.WebhookSender`
  (which retries failures, "MUST retry failed webhook deliveries"): ``UCP-Agent`` with the
  business profile URL, Standard Webhooks' ``Webhook-Id`` (a UUID, the same on every retry and
  equal to the body's ``event_id``) and ``Webhook-Timestamp`` (when the order was created),
  ``Content-Type``, ``Content-Digest``, ``Signature-Input`` and ``Signature`` ("Webhook
  Signature Verification", "Signing (Business)"). The signature covers ``@method``,
  ``@authority``, ``@path`` (``@query`` if any), ``ucp-agent``, ``content-digest``,
  ``content-type`` (signatures.md: ``ucp-agent`` is required when the header is sent, though
  order.md's example omits it) and ``webhook-id``, ``webhook-timestamp``.
* :func:`verify_order_webhook` is the platform's side ("Verification (Platform)"): the signer's
  profile from ``UCP-Agent``, its ``signing_keys``, the digest and the signature. Authorization
  (that the order was placed with that business) is the platform's own bookkeeping.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from ...protocols.ucp import v2026_01_11 as v0111
from ...protocols.ucp.agent_header import profile_url
from ...protocols.ucp.profile import ORDER, ProfileMalformed, checked_webhook_url
from ...protocols.ucp.schema import UCP_VERSION
from ...protocols.ucp.signatures import SignatureInvalid, sign_request, verify_request
from ..checkout import Bill, Checkout
from ..records import Event, PendingEvent, new_event_id
from .business_keys import BusinessKeys
from .order import order_json
from .platforms import PlatformProfiles, ProfileUnreachable
from .wire import Site

__all__ = [
    "PROTOCOL",
    "VERSION_KEY",
    "WEBHOOK_KEY",
    "OrderEvents",
    "UcpWebhookSigner",
    "VerifiedWebhook",
    "verify_order_webhook",
    "webhook_id",
]

PROTOCOL = "ucp"
WEBHOOK_KEY = "ucp.order_webhook_url"
"""The checkout metadata key holding the platform's order webhook URL (reserved: UCP does
not render metadata, and no UCP request sets it)."""
VERSION_KEY = "ucp.version"
"""The checkout metadata key holding the release its platform spoke (its events are written in
that release)."""
WELL_KNOWN = "/.well-known/ucp"
_COVERED = ("webhook-id", "webhook-timestamp")
"""Signed beyond signatures.md's required components, so that an event cannot be replayed
under another id or time (Standard Webhooks signs both too)."""


def webhook_id(event_id: str) -> str:
    """The ``Webhook-Id`` (``format: uuid``) of outbox event ``evt_<32 hex>``."""
    return str(uuid.UUID(event_id.removeprefix("evt_")))


def _timestamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class OrderEvents:
    """The announcer for UCP checkouts (see :meth:`Merchant.announce_with`)."""

    def __init__(
        self, bill: Callable[[Checkout], Bill], site: Site, *, allow_private: bool = False
    ) -> None:
        self.bill = bill
        self.site = site
        self.allow_private = allow_private

    def __call__(self, checkout: Checkout) -> list[Event]:
        return self.event(checkout, "order_placed")

    def event(self, checkout: Checkout, kind: str) -> list[Event]:
        """The webhook announcing that ``checkout``'s order had an event of ``kind``
        (``order_placed``, ``order_shipped``), if its platform gave a webhook URL."""
        url = checkout.metadata.get(WEBHOOK_KEY)
        if not isinstance(url, str) or checkout.order_id is None or checkout.address is None:
            return []
        try:
            # checked when stored; stored data is checked again
            checked_webhook_url(url, allow_private=self.allow_private)
        except ProfileMalformed:
            return []
        event_id = new_event_id()
        version = checkout.metadata.get(VERSION_KEY, UCP_VERSION)
        ucp = {
            "version": UCP_VERSION,
            "status": "success",
            "capabilities": {ORDER: [{"version": version}]},
        }
        order = order_json(checkout, self.bill(checkout), ucp=ucp, site=self.site)
        body = {
            **order,
            "event_id": webhook_id(event_id),
            "created_time": _timestamp(checkout.updated_at),
        }
        if version == v0111.VERSION:
            body = v0111.order_event(order, body, kind)
        return [Event(checkout.owner, url, orjson.dumps(body), protocol=PROTOCOL, id=event_id)]


class UcpWebhookSigner:
    """Signs UCP events with the business's current key (a
    :class:`~cartagent.commerce.webhooks.WebhookSigner`); ``profile_url`` is the business
    profile (``https://<business>/.well-known/ucp``)."""

    def __init__(self, keys: BusinessKeys, profile_url: str) -> None:
        self.keys = keys
        self.profile_url = profile_url

    def headers(self, event: PendingEvent, now: datetime) -> Mapping[str, str]:
        occurred = event.created_at or now
        headers = {
            "Content-Type": "application/json",
            "UCP-Agent": f'profile="{self.profile_url}"',
            "Webhook-Id": webhook_id(event.id),
            "Webhook-Timestamp": str(int(occurred.timestamp())),
        }
        key = self.keys.current()
        return sign_request(key, "POST", event.url, headers, event.body, now, cover=_COVERED)


@dataclass(frozen=True)
class VerifiedWebhook:
    """A verified webhook: who signed it (the business profile URL), with which key, and the
    parsed body."""

    profile_url: str
    keyid: str
    body: dict[str, Any]


def verify_order_webhook(
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    profiles: PlatformProfiles,
    *,
    method: str = "POST",
) -> VerifiedWebhook:
    """Verify an order event received at ``url`` as order.md's "Verification (Platform)"
    says: the ``UCP-Agent`` profile URL (https, pointing at ``/.well-known/ucp``), that
    profile's ``signing_keys`` (from ``profiles``, which caches), the ``Content-Digest`` and
    the RFC 9421 signature. Raises :class:`~cartagent.protocols.ucp.signatures.SignatureInvalid`
    (``profile_unreachable``/``profile_malformed`` for the profile).
    """
    lower = {name.lower(): value for name, value in headers.items()}
    try:
        signer = profile_url(lower.get("ucp-agent"))
    except ValueError as error:
        raise SignatureInvalid("invalid_profile_url", str(error)) from None
    if urlsplit(signer).path != WELL_KNOWN:
        raise SignatureInvalid("invalid_profile_url", f"the profile URL must end in {WELL_KNOWN}")
    try:
        document = profiles.document(signer)
    except ProfileUnreachable as error:
        raise SignatureInvalid("profile_unreachable", str(error)) from None
    except ProfileMalformed as error:
        raise SignatureInvalid("profile_malformed", str(error)) from None
    keys = document.get("signing_keys")
    if not isinstance(keys, list):
        raise SignatureInvalid("key_not_found", "the business profile has no signing_keys")
    keyid = verify_request(method, url, lower, body, [k for k in keys if isinstance(k, dict)])
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise SignatureInvalid("invalid_body", "the body is not JSON") from None
    if not isinstance(parsed, dict):
        raise SignatureInvalid("invalid_body", "the body is not a JSON object")
    return VerifiedWebhook(signer, keyid, parsed)
