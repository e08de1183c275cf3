"""Answering a mutating call at most once per idempotency key, whatever the protocol.

Protocol-neutral: it knows :class:`~cartagent.commerce.records.CheckoutRecords`' key table and
nothing of any wire format. A protocol supplies its answers for the key's states in
:class:`KeyRules` (ACP: a conflict is 422 and a replay says ``Idempotent-Replayed: true``; UCP:
a conflict is 409 and a replay is the stored answer as it was) and how an unexpected failure of
the work is answered. 5xx answers are never stored (the records release the key), so a retry
after an outage runs again; nor is any answer that says when to try again (``Retry-After``, e.g.
"the checkout is being paid by another request"): it describes a moment, not this request's
outcome, and the retry it asks for must run again rather than hear the same words after the
moment has passed. A failure to reach the key table fails closed with the protocol's
"unavailable" answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa

from .records import CheckoutRecords, fingerprint

__all__ = ["Answer", "Idempotency", "KeyRules", "Refusal", "Work"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    """What a call is answered with: HTTP status, raw JSON body and extra headers."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    replayed: bool = False

    def json(self) -> Any:
        return orjson.loads(self.body)


class Refusal(Exception):
    """Ends a call early with ``status`` and ``body`` (in the protocol's error shape)."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(str(body))
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


Work = Callable[[], tuple[int, dict[str, Any]]]
"""The call itself: its status and JSON body, or a :class:`Refusal`."""


@dataclass(frozen=True)
class KeyRules:
    """A protocol's answers where the key, not the work, decides."""

    conflict: Callable[[], Refusal]
    """The key was used with another body."""
    in_flight: Callable[[], Refusal]
    """The first call with the key is still running."""
    unavailable: Callable[[], Refusal]
    """The key table could not be read or written (fail closed)."""
    failure: Callable[[Exception], Refusal]
    """The work raised something other than a :class:`Refusal`."""
    replay_headers: Mapping[str, str] = field(default_factory=dict)
    """Added to a replayed answer."""


class Idempotency:
    def __init__(
        self, records: CheckoutRecords, clock: Callable[[], datetime], rules: KeyRules
    ) -> None:
        self.records = records
        self.clock = clock
        self.rules = rules

    def run(self, scope: str, key: str, body: Any, work: Work) -> Answer:
        """Run ``work`` once for ``key`` in ``scope`` (an agent and an operation) and ``body``;
        raise :class:`Refusal` when the key's state, not the work, decides the answer.

        It blocks (the key table, and the work's database and PayPal calls): call it from a
        worker thread, once per request, not once per step."""
        try:
            claim = self.records.claim(scope, key, fingerprint(body), self.clock())
        except sa.exc.SQLAlchemyError:
            log.exception("idempotency key %r in %r could not be claimed", key, scope)
            raise self.rules.unavailable() from None
        if claim.kind == "replay":
            replayed = dict(self.rules.replay_headers)
            return Answer(claim.status_code, claim.body, replayed, replayed=True)
        if claim.kind == "conflict":
            raise self.rules.conflict()
        if claim.kind == "in_flight":
            raise self.rules.in_flight()
        headers: dict[str, str] = {}
        try:
            status, payload = work()
        except Refusal as refusal:
            status, payload, headers = refusal.status, refusal.body, refusal.headers
        except Exception as error:
            failed = self.rules.failure(error)
            status, payload, headers = failed.status, failed.body, failed.headers
        encoded = orjson.dumps(payload)
        try:
            if status >= 500 or any(name.lower() == "retry-after" for name in headers):
                self.records.release(scope, key)
            else:
                self.records.finish(scope, key, status, encoded)
        except sa.exc.SQLAlchemyError:
            # The work is done; the key stays in flight until it counts as abandoned and a
            # retry runs again, which the merchant's own exactly-once rules make safe.
            log.exception("the answer for idempotency key %r in %r was not stored", key, scope)
        return Answer(status, encoded, headers)
