"""Delivering queued webhook events: signed POSTs with PayPal's headers, retried with backoff.

``events.emit`` queues one ``deliveries`` row per subscribed webhook. ``deliver_due`` sends
every row that is due; ``DeliveryWorker`` calls it in a background thread. A 2xx answer marks
the row DELIVERED; anything else retries after 1 s, 2 s, 4 s… (capped) until FAILED.

Each row is timed by its merchant's clock (the sandbox clock plus how far that merchant moved
it, see ``state.Sandbox.now``): rows are queued and rescheduled in that time, so a row is due
when the merchant's clock reaches it, and it is sent stamped with that time.

A webhook's URL came from the API's caller: unless the sandbox allows private webhooks (local
development), a delivery to a host spelled as, or resolving to, a non-public address fails at
once, without retries (``cartagent.outbound``; the worker's transport resolves and pins).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import sqlalchemy as sa

from ...errors import DestinationRefused
from ...outbound import Resolver, guarded_transport, host_refusal, system_resolver
from ..state import CLOCK_OFFSET, Sandbox
from ..store import counters, deliveries, events, loads, resources
from .signing import event_body, transmission_headers

log = logging.getLogger("cartagent.sandbox.webhooks.routes")

WEBHOOK_KIND = "webhook"
PENDING, DELIVERED, FAILED = "PENDING", "DELIVERED", "FAILED"
# A claimed row is pushed this far ahead, so a crashed sender's rows are retried later.
CLAIM_LEASE = timedelta(seconds=60)
DEFAULT_BASE_DELAY = timedelta(seconds=1)
DEFAULT_MAX_DELAY = timedelta(minutes=5)
DEFAULT_MAX_ATTEMPTS = 8
FALLBACK_BASE_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a failing delivery is retried."""

    base_delay: timedelta = DEFAULT_BASE_DELAY
    max_delay: timedelta = DEFAULT_MAX_DELAY
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    def delay(self, attempts: int) -> timedelta:
        """The wait after the ``attempts``-th failed attempt: base, 2 * base, 4 * base, ..."""
        grown: timedelta = self.base_delay * 2 ** max(attempts - 1, 0)
        return min(grown, self.max_delay)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _offsets(sandbox: Sandbox, merchant_id: str | None) -> dict[str, timedelta]:
    """How far each merchant that moved its clock moved it."""
    query = sa.select(counters.c.merchant_id, counters.c.value).where(
        counters.c.name == CLOCK_OFFSET
    )
    if merchant_id is not None:
        query = query.where(counters.c.merchant_id == merchant_id)
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(query).all()
    return {row.merchant_id: timedelta(microseconds=row.value) for row in rows}


def _due(
    sandbox: Sandbox,
    now: datetime,
    offsets: dict[str, timedelta],
    limit: int,
    merchant_id: str | None,
) -> list[Any]:
    """Rows due by their merchant's clock (an event that is gone: by ``now``, to abandon)."""
    merchant = events.c.merchant_id
    by_own_clock = [
        (merchant == moved) & (deliveries.c.next_attempt_at <= now + offset)
        for moved, offset in offsets.items()
    ]
    unmoved = merchant.is_(None) | merchant.not_in(list(offsets))
    query = (
        sa.select(deliveries.c.id, deliveries.c.event_id, deliveries.c.webhook_id, merchant)
        .select_from(deliveries.outerjoin(events, events.c.id == deliveries.c.event_id))
        .where(
            deliveries.c.status == PENDING,
            sa.or_(unmoved & (deliveries.c.next_attempt_at <= now), *by_own_clock),
        )
        .order_by(deliveries.c.next_attempt_at, deliveries.c.id)
        .limit(limit)
    )
    if merchant_id is not None:
        query = query.where(merchant == merchant_id)
    with sandbox.store.engine.connect() as conn:
        return list(conn.execute(query).all())


def _claim(sandbox: Sandbox, delivery_id: int, now: datetime) -> bool:
    """Take the row for this sender; another worker that read it too will find it gone."""
    with sandbox.store.transaction("", write=True) as tx:
        claimed = tx.conn.execute(
            deliveries.update()
            .where(
                deliveries.c.id == delivery_id,
                deliveries.c.status == PENDING,
                deliveries.c.next_attempt_at <= now,
            )
            .values(next_attempt_at=now + CLAIM_LEASE)
        )
        return claimed.rowcount == 1


def _target(sandbox: Sandbox, event_id: str, webhook_id: str) -> tuple[str, Any] | None:
    """The webhook's URL and the stored event, or None when either is gone."""
    with sandbox.store.engine.connect() as conn:
        event = conn.execute(
            sa.select(events.c.merchant_id, events.c.data).where(events.c.id == event_id)
        ).first()
        if event is None:
            return None
        hook = conn.execute(
            sa.select(resources.c.data).where(
                resources.c.kind == WEBHOOK_KIND,
                resources.c.id == webhook_id,
                resources.c.merchant_id == event.merchant_id,
            )
        ).scalar()
    if hook is None:
        return None
    return str(loads(hook)["url"]), loads(event.data)


def _base_url(event: dict[str, Any]) -> str:
    """The sandbox's address as the merchant used it, read off the event's own links."""
    for link in event.get("links") or []:
        href = str(link.get("href", ""))
        if "/v1/notifications/" in href:
            return href.split("/v1/notifications/", 1)[0]
    return FALLBACK_BASE_URL


def _finish(
    sandbox: Sandbox, delivery_id: int, now: datetime, error: str | None, policy: RetryPolicy
) -> None:
    """Record one attempt's outcome: delivered, retry later, or give up."""
    with sandbox.store.transaction("", write=True) as tx:
        attempts = 1 + int(
            tx.conn.execute(
                sa.select(deliveries.c.attempts).where(deliveries.c.id == delivery_id)
            ).scalar_one()
        )
        values: dict[str, Any] = {"attempts": attempts, "last_error": error}
        if error is None:
            values["status"] = DELIVERED
        elif attempts >= policy.max_attempts:
            values["status"] = FAILED
        else:
            values["status"] = PENDING
            values["next_attempt_at"] = now + policy.delay(attempts)
        tx.conn.execute(deliveries.update().where(deliveries.c.id == delivery_id).values(values))


def _abandon(sandbox: Sandbox, delivery_id: int, reason: str) -> None:
    with sandbox.store.transaction("", write=True) as tx:
        tx.conn.execute(
            deliveries.update()
            .where(deliveries.c.id == delivery_id)
            .values(status=FAILED, last_error=reason)
        )


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def deliver_due(
    sandbox: Sandbox,
    now: datetime,
    client: httpx.Client,
    *,
    policy: RetryPolicy | None = None,
    limit: int = 100,
    merchant_id: str | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Attempt every delivery due at ``now`` (the sandbox clock's time; each merchant's own
    clock is that plus how far the merchant moved it); return how many were attempted.

    ``merchant_id`` restricts the run to one merchant's events (tests share a database);
    ``stop`` ends the run early, between deliveries.
    """
    policy = policy or RetryPolicy()
    offsets = _offsets(sandbox, merchant_id)
    attempted = 0
    for row in _due(sandbox, now, offsets, limit, merchant_id):
        if stop is not None and stop.is_set():
            break
        merchant_now = now + offsets.get(row.merchant_id, timedelta(0))
        if not _claim(sandbox, row.id, merchant_now):
            continue
        target = _target(sandbox, row.event_id, row.webhook_id)
        if target is None:
            _abandon(sandbox, row.id, "The webhook or its event no longer exists.")
            continue
        url, event = target
        refusal = None if sandbox.allow_private_webhooks else host_refusal(_host(url))
        if refusal is not None:
            _abandon(sandbox, row.id, f"Not sent: {refusal}.")
            continue
        body = event_body(event)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "PayPal/AUHD-214.0-58842329",
            **transmission_headers(
                sandbox.store, _base_url(event), row.webhook_id, body, merchant_now
            ),
        }
        error: str | None = None
        try:
            response = client.post(url, content=body, headers=headers)
            if not 200 <= response.status_code < 300:
                error = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        except (DestinationRefused, httpx.InvalidURL) as exc:  # sending again cannot help
            _abandon(sandbox, row.id, f"Not sent: {exc}"[:500])
            continue
        attempted += 1
        _finish(sandbox, row.id, merchant_now, error, policy)
    return attempted


class DeliveryWorker:
    """A background thread that keeps calling ``deliver_due`` until stopped; ``resolver``
    resolves webhook hosts (tests pass one)."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        policy: RetryPolicy | None = None,
        poll_interval: float = 0.5,
        timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.sandbox = sandbox
        self.transport = transport
        self.resolver = resolver
        self.policy = policy or RetryPolicy()
        self.poll_interval = poll_interval
        self.timeout = timeout
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="webhook-delivery", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout + 2)
            self._thread = None

    def client(self) -> httpx.Client:
        """The client deliveries go out through: to public addresses only, unless the sandbox
        allows private webhooks."""
        transport = guarded_transport(
            self.transport,
            allow_private=self.sandbox.allow_private_webhooks,
            resolver=self.resolver,
        )
        return httpx.Client(timeout=self.timeout, transport=transport)

    def _run(self) -> None:
        with self.client() as client:
            while not self._stop.is_set():
                try:
                    # The sandbox clock's time: deliver_due adds each merchant's offset.
                    sent = deliver_due(
                        self.sandbox,
                        self.sandbox.clock.now(),
                        client,
                        policy=self.policy,
                        stop=self._stop,
                    )
                except Exception:
                    log.exception("webhook delivery pass failed")
                    sent = 0
                if not sent:
                    self._stop.wait(self.poll_interval)
