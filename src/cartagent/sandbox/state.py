"""What a running sandbox holds: its store, clock, id factory and signing keys."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .clock import Clock
from .ids import IdFactory
from .store import Merchant, Store, Tx

# The per-merchant counter holding how far that merchant moved the sandbox clock, in µs.
CLOCK_OFFSET = "clock_offset_us"


@dataclass
class Sandbox:
    store: Store
    clock: Clock = field(default_factory=Clock)
    ids: IdFactory = field(default_factory=IdFactory)
    token_key: bytes = b""
    token_ttl_seconds: int = 32400
    buyer_email: str = "sb-buyer@personal.example.com"
    # Webhooks may go to loopback and private addresses (local development only; see
    # webhooks._check_url and cartagent.outbound).
    allow_private_webhooks: bool = False
    _merchants: dict[str, Merchant] = field(default_factory=dict, repr=False)

    def now(self, merchant_id: str) -> datetime:
        """Sandbox time for one merchant: the clock plus how far this merchant advanced it.

        The merchant's offset lives in the database, so every server process (``--workers``)
        and every restart sees the same time, and merchants' clocks never affect each other.
        """
        offset = self.store.counter(merchant_id, CLOCK_OFFSET) or 0
        return self.clock.now() + timedelta(microseconds=offset)

    def now_in(self, tx: Tx) -> datetime:
        """Sandbox time for ``tx``'s merchant, its clock read inside that transaction."""
        offset = tx.peek_number(CLOCK_OFFSET) or 0
        return self.clock.now() + timedelta(microseconds=offset)

    def merchant(self, merchant_id: str) -> Merchant | None:
        """The merchant's account details (cached: they only change on restart)."""
        found = self._merchants.get(merchant_id)
        if found is None:
            found = self.store.merchant(merchant_id)
            if found is not None:
                self._merchants[merchant_id] = found
        return found
