"""Order events to the agent platforms' webhook receivers, signed, from a durable outbox.

An event is written in the same transaction as the checkout change it announces (see
:meth:`CheckoutRecords.save`), so a crash can neither lose it nor send one for a change that
did not happen. :class:`WebhookSender` delivers due events, each signed by the
:class:`WebhookSigner` of its protocol, retrying failures with exponential back-off up to
:data:`MAX_ATTEMPTS` times. ACP's signer (:class:`AcpSigner`, always present) uses the agent's
webhook secret::

    Merchant-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>

UCP's (RFC 9421 with the business's key) is in :mod:`cartagent.commerce.ucp.events`; a sender
only leases the events of protocols it has a signer for, leaving the others pending.

An agent's configured ``webhook_url`` is the operator's; any other receiver (a UCP platform's
profile names it) is someone else's say-so and is sent to through
:func:`~cartagent.outbound.guarded_transport`: an event whose receiver is, or resolves to, a
non-public address fails at once, without retries (``allow_private`` lifts this for local
development).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Protocol

import httpx

from ..errors import DestinationRefused
from ..outbound import Resolver, guarded_transport, system_resolver
from .agents import Agents
from .records import CheckoutRecords, PendingEvent

__all__ = [
    "MAX_ATTEMPTS",
    "AcpSigner",
    "CannotSign",
    "WebhookSender",
    "WebhookSigner",
    "merchant_signature",
    "verify_merchant_signature",
]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
TOLERANCE = timedelta(seconds=300)


def merchant_signature(secret: str, body: bytes, now: datetime) -> str:
    stamp = str(int(now.timestamp()))
    digest = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256)
    return f"t={stamp},v1={digest.hexdigest()}"


def verify_merchant_signature(header: str | None, body: bytes, secret: str, now: datetime) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` within the 300 s tolerance (for an
    agent platform's receiver)."""
    if not header:
        return False
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    stamp, given = parts.get("t", ""), parts.get("v1", "")
    if not stamp.isdigit() or len(given) != 64:
        return False
    sent = datetime.fromtimestamp(int(stamp), UTC)
    if abs(now - sent) > TOLERANCE:
        return False
    digest = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(digest, given.lower())


class CannotSign(Exception):
    """The event cannot be signed, now or later (its agent has no secret, ...): it fails."""


class WebhookSigner(Protocol):
    def headers(self, event: PendingEvent, now: datetime) -> Mapping[str, str]:
        """The headers to POST ``event``'s body with at ``now``, its signature included;
        raises :class:`CannotSign` if it can never be signed."""
        ...


class AcpSigner:
    """ACP's webhook headers: ``Merchant-Signature`` with the agent's webhook secret,
    ``Request-Id`` (the event id) and ``Timestamp``."""

    def __init__(self, agents: Agents) -> None:
        self.agents = agents

    def headers(self, event: PendingEvent, now: datetime) -> Mapping[str, str]:
        secret = self.agents.webhook_secret(event.agent)
        if secret is None:
            raise CannotSign("the agent has no webhook secret")
        return {
            "Content-Type": "application/json",
            "Merchant-Signature": merchant_signature(secret, event.body, now),
            "Request-Id": event.id,
            "Timestamp": now.isoformat().replace("+00:00", "Z"),
        }


def _now() -> datetime:
    return datetime.now(UTC)


class WebhookSender:
    """Sends the outbox's due events; :meth:`start` runs it in a background thread.

    ``signers`` sign other protocols' events than ACP's (by protocol name); :meth:`sign_with`
    adds one later. ``allow_private`` lets events go to receivers at loopback and private
    addresses that no agent was configured with (local development only); ``resolver``
    resolves their hosts (tests pass one).
    """

    def __init__(
        self,
        records: CheckoutRecords,
        agents: Agents,
        *,
        signers: Mapping[str, WebhookSigner] | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], datetime] = _now,
        interval: float = 0.5,
        timeout: float = 10.0,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.records = records
        self.agents = agents
        self.clock = clock
        self.interval = interval
        self.signers: dict[str, WebhookSigner] = {"acp": AcpSigner(agents), **(signers or {})}
        self._configured = frozenset(key.webhook_url for key in agents.keys if key.webhook_url)
        self._http = httpx.Client(transport=transport, timeout=timeout)
        self._guarded = httpx.Client(
            transport=guarded_transport(transport, allow_private=allow_private, resolver=resolver),
            timeout=timeout,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._callers: set[str] = set()

    def sign_with(self, protocol: str, signer: WebhookSigner) -> None:
        """Sign ``protocol``'s events with ``signer`` from now on."""
        self.signers[protocol] = signer

    def send_for(self, agent: str) -> None:
        """Send the events of ``agent`` too, a caller that is no configured agent (UCP's
        anonymous platforms)."""
        self._callers.add(agent)

    def deliver_due(self, limit: int = 50) -> int:
        """Send up to ``limit`` due events of this sender's agents (and of protocols it can
        sign) once each; return how many were delivered."""
        delivered = 0
        names = [key.name for key in self.agents.keys] + sorted(self._callers)
        protocols = list(self.signers)
        for pending in self.records.due_events(self.clock(), limit, names, protocols):
            now = self.clock()
            try:
                headers = dict(self.signers[pending.protocol].headers(pending, now))
            except CannotSign as error:
                self.records.event_failed(pending.id, str(error), now, 1)
                continue
            http = self._http if pending.url in self._configured else self._guarded
            try:
                response = http.post(pending.url, content=pending.body, headers=headers)
                problem = None if response.is_success else f"HTTP {response.status_code}"
            except httpx.HTTPError as error:
                problem = f"{type(error).__name__}: {error}"
            except (DestinationRefused, httpx.InvalidURL) as error:  # sending again cannot help
                log.warning("webhook %s not sent: %s", pending.id, error)
                self.records.event_failed(pending.id, f"not sent: {error}", now, 1)
                continue
            if problem is None:
                delivered += 1
                self.records.event_delivered(pending.id)
            else:
                log.warning("webhook %s to %s failed: %s", pending.id, pending.url, problem)
                retry = now + timedelta(seconds=2**pending.attempts)
                self.records.event_failed(pending.id, problem, retry, give_up=MAX_ATTEMPTS)
        return delivered

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="webhooks", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.deliver_due()
            except Exception:  # the loop must outlive a database hiccup
                log.exception("webhook delivery failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._http.close()
        self._guarded.close()
