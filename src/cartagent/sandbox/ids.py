"""Identifiers in PayPal's formats.

Random by default; a seeded generator makes every id of a test run reproducible.
"""

from __future__ import annotations

import random
import secrets
import string
import threading

_UPPER_DIGITS = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_ACCOUNT = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"


class IdFactory:
    """Makes ids shaped like the ones PayPal returns (e.g. orders ``5O190127TN364715T``)."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng: random.Random | None = random.Random(seed) if seed is not None else None
        self._lock = threading.Lock()

    def _choose(self, alphabet: str, n: int) -> str:
        if self._rng is None:
            # One syscall per id rather than one per character.
            return "".join(alphabet[b % len(alphabet)] for b in secrets.token_bytes(n))
        with self._lock:
            return "".join(self._rng.choice(alphabet) for _ in range(n))

    def token(self, nbytes: int = 32) -> str:
        alphabet = string.ascii_letters + string.digits + "-_"
        return self._choose(alphabet, nbytes)

    def debug_id(self) -> str:
        return self._choose(_HEX, 13)

    def paypal17(self) -> str:
        """Orders, captures, authorizations, refunds, webhooks: 17 upper-case alphanumerics."""
        return self._choose(_UPPER_DIGITS, 17)

    def order(self) -> str:
        return self.paypal17()

    def capture(self) -> str:
        return self.paypal17()

    def authorization(self) -> str:
        return self.paypal17()

    def refund(self) -> str:
        return self.paypal17()

    def invoice(self) -> str:
        parts = [self._choose(_UPPER_DIGITS, 4) for _ in range(4)]
        return "INV2-" + "-".join(parts)

    def product(self) -> str:
        return "PROD-" + self._choose(_UPPER_DIGITS, 17)

    def plan(self) -> str:
        return "P-" + self._choose(_UPPER_DIGITS, 24)

    def subscription(self) -> str:
        return "I-" + self._choose(_UPPER_DIGITS, 12)

    def dispute(self) -> str:
        return "PP-D-" + self._choose(string.digits, 5)

    def webhook(self) -> str:
        return self.paypal17()

    def event(self) -> str:
        return "WH-" + self._choose(_UPPER_DIGITS, 17) + "-" + self._choose(_UPPER_DIGITS, 17)

    def payer(self) -> str:
        """Payer and merchant account ids: 13 characters without 0, 1, I or O."""
        return self._choose(_ACCOUNT, 13)

    def transaction(self) -> str:
        return self.paypal17()
