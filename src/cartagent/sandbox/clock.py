"""The sandbox's notion of "now".

Sandbox time is real time plus an offset that only moves forward; advancing it is how billing
cycles, token expiry and dispute deadlines are exercised without waiting. Tests pin it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class Clock:
    """Wall-clock time shifted by a forward-only offset."""

    def __init__(self, start: datetime | None = None) -> None:
        self._pinned = start
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        base = self._pinned if self._pinned is not None else datetime.now(UTC)
        return base + self._offset

    def advance(self, delta: timedelta) -> datetime:
        if delta < timedelta(0):
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            self._offset += delta
        return self.now()

    @property
    def offset(self) -> timedelta:
        return self._offset


def iso(moment: datetime) -> str:
    """PayPal's timestamp format: UTC, seconds precision, ``Z`` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """Parse an RFC 3339 timestamp as PayPal sends them; raises ``ValueError``."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("timestamp needs a time zone")
    return moment.astimezone(UTC)
