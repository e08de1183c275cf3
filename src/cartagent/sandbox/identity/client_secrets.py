"""Merchants' OAuth client secrets at rest: a salted scrypt hash, never the secret itself.

A stored secret reads ``scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`` (salt and hash in unpadded
base64url), so the cost of a hash travels with it. A check costs one scrypt (tens of
milliseconds at :data:`LOG2_N`, on purpose); :class:`ClientSecrets` remembers the checks that
passed, keyed by an HMAC under a key of its own process, so a client asking for tokens again
costs a hash of SHA-256, and no secret is kept even in memory. (A test suite that makes a
merchant per test may hash at a lower cost: ``open_sandbox(url, secret_cost=...)``.)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections import OrderedDict

__all__ = ["SCHEME", "ClientSecrets", "hash_secret", "is_hashed", "secret_matches"]

SCHEME = "scrypt"
LOG2_N, R, P = 14, 8, 1  # scrypt's interactive-login cost: 16 MiB and ~50 ms a check
SALT_BYTES = 16
HASH_BYTES = 32
_MAX_LOG2_N = 20  # a stored cost above this is refused unread, not computed
_REMEMBERED = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(secret: str, salt: bytes, log2_n: int, r: int, p: int) -> bytes:
    n = 1 << log2_n
    return hashlib.scrypt(
        # "surrogatepass": a secret is whatever string was given; hashing never fails on one.
        secret.encode("utf-8", "surrogatepass"),
        salt=salt,
        n=n,
        r=r,
        p=p,
        maxmem=256 * n * r + (1 << 20),
        dklen=HASH_BYTES,
    )


def hash_secret(secret: str, log2_n: int = LOG2_N) -> str:
    """``secret`` as it is stored: a fresh random salt and its scrypt hash (N = 2**log2_n)."""
    if not 1 <= log2_n <= _MAX_LOG2_N:
        raise ValueError(f"log2_n must be between 1 and {_MAX_LOG2_N}, not {log2_n}")
    salt = os.urandom(SALT_BYTES)
    digest = _scrypt(secret, salt, log2_n, R, P)
    return f"{SCHEME}${log2_n}${R}${P}${_b64(salt)}${_b64(digest)}"


def is_hashed(stored: str) -> bool:
    """Whether ``stored`` is a hash of this module's, not a secret stored as it was given."""
    return _parsed(stored) is not None


def _parsed(stored: str) -> tuple[int, int, int, bytes, bytes] | None:
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        return None
    try:
        log2_n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, digest = _unb64(parts[4]), _unb64(parts[5])
    except ValueError:
        return None
    if not (1 <= log2_n <= _MAX_LOG2_N and 1 <= r <= 32 and 1 <= p <= 16):
        return None
    if len(digest) != HASH_BYTES or not salt:
        return None
    return log2_n, r, p, salt, digest


def secret_matches(stored: str, offered: str) -> bool:
    """Whether ``offered`` is the secret ``stored`` is the hash of (constant-time compare)."""
    parsed = _parsed(stored)
    if parsed is None:
        return False
    log2_n, r, p, salt, digest = parsed
    return hmac.compare_digest(_scrypt(offered, salt, log2_n, r, p), digest)


class ClientSecrets:
    """Hashes secrets and checks them, remembering the last checks that passed.

    What is remembered is ``HMAC(process key, stored hash + offered secret)``: it proves a
    repeat of a check that passed, and is no use outside this process.
    """

    def __init__(self, log2_n: int = LOG2_N, *, remembered: int = _REMEMBERED) -> None:
        self.log2_n = log2_n
        self._key = os.urandom(32)
        self._passed: OrderedDict[bytes, None] = OrderedDict()
        self._size = remembered
        self._lock = threading.Lock()

    def _mark(self, stored: str, offered: str) -> bytes:
        offered_bytes = offered.encode("utf-8", "surrogatepass")
        message = stored.encode("ascii", "replace") + b"\0" + offered_bytes
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def _remember(self, mark: bytes) -> None:
        with self._lock:
            self._passed[mark] = None
            self._passed.move_to_end(mark)
            while len(self._passed) > self._size:
                self._passed.popitem(last=False)

    def hash(self, secret: str) -> str:
        """A new hash of ``secret`` (and its check, already passed)."""
        stored = hash_secret(secret, self.log2_n)
        self._remember(self._mark(stored, secret))
        return stored

    def matches(self, stored: str, offered: str) -> bool:
        """Whether ``offered`` is the secret of ``stored``."""
        mark = self._mark(stored, offered)
        with self._lock:
            if mark in self._passed:
                self._passed.move_to_end(mark)
                return True
        if not secret_matches(stored, offered):
            return False
        self._remember(mark)
        return True
