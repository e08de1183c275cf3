"""Guest shoppers: stateless, HMAC-signed bearer tokens, so shoppers need no account.

A token is ``guest.<id>.<signature>``: a random id and the HMAC-SHA256 of ``guest.<id>``
under the server's secret. Nothing is stored per guest, so tokens cost no memory and keep
working across restarts as long as the secret does; the token stands for the shopper
principal ``guest-<id>``. Serving keeps the secret in a file of cartagent's data folder,
created (readable by its owner only) when the first token is issued or checked.

Issuing is rate-limited per client address by :class:`IssueLimit`, whose memory is bounded.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigurationError
from ..files import private_folder
from .auth import Principal, Role

__all__ = ["GUEST_PREFIX", "GuestTokens", "IssueLimit", "guest_secret"]

GUEST_PREFIX = "guest."
SECRET_BYTES = 32
_ID_BYTES = 12
# An id is token_urlsafe(12) (16 characters), a signature 43: anything else is refused unread.
_TOKEN = re.compile(r"guest\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})")


def guest_secret(path: Path) -> bytes:
    """The secret stored in ``path``, which is created (mode 0600) with a random one if absent."""
    try:
        private_folder(path.parent)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as error:
        raise ConfigurationError(f"cannot create the guest token secret {path}: {error}") from None
    else:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(secrets.token_hex(SECRET_BYTES) + "\n")
    try:
        text = path.read_text(encoding="ascii").strip()
        secret = bytes.fromhex(text)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"cannot read the guest token secret {path}: {error}") from None
    if len(secret) < SECRET_BYTES:
        raise ConfigurationError(f"the guest token secret {path} is shorter than 32 bytes")
    return secret


class GuestTokens:
    """Issues and checks guest tokens under one secret.

    ``secret`` is the key itself, or a function that returns it (called once, on first use:
    ``lambda: guest_secret(path)`` creates the file only when a guest shows up).
    """

    def __init__(self, secret: bytes | Callable[[], bytes]) -> None:
        self._source = secret
        self._secret: bytes | None = None
        self._lock = threading.Lock()
        if isinstance(secret, bytes):
            self._secret = self._checked(secret)

    @classmethod
    def random(cls) -> GuestTokens:
        """Tokens that last as long as this object (for tests and throwaway servers)."""
        return cls(secrets.token_bytes(SECRET_BYTES))

    @staticmethod
    def _checked(secret: bytes) -> bytes:
        if len(secret) < SECRET_BYTES:
            raise ConfigurationError(f"a guest token secret needs {SECRET_BYTES} bytes or more")
        return secret

    def _key(self) -> bytes:
        if self._secret is None:
            with self._lock:
                if self._secret is None:
                    source = self._source
                    loaded = source() if callable(source) else source
                    self._secret = self._checked(loaded)
        return self._secret

    def _signature(self, guest_id: str) -> str:
        digest = hmac.new(self._key(), (GUEST_PREFIX + guest_id).encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()

    def issue(self) -> tuple[str, Principal]:
        """A new token and the principal it stands for."""
        guest_id = secrets.token_urlsafe(_ID_BYTES)
        token = f"{GUEST_PREFIX}{guest_id}.{self._signature(guest_id)}"
        return token, Principal(f"guest-{guest_id}", Role.SHOPPER)

    def principal(self, token: str) -> Principal | None:
        """The guest ``token`` stands for, or ``None`` if it is not one of ours."""
        found = _TOKEN.fullmatch(token)
        if found is None:
            return None
        guest_id, signature = found.groups()
        if not hmac.compare_digest(signature, self._signature(guest_id)):
            return None
        return Principal(f"guest-{guest_id}", Role.SHOPPER)


class IssueLimit:
    """At most ``burst`` tokens at once and ``per_minute`` a minute per client address.

    A token bucket per address; only the ``max_clients`` most recently seen addresses are
    remembered, so a flood of addresses costs bounded memory (a forgotten address starts
    with a full bucket again).
    """

    def __init__(
        self,
        *,
        per_minute: float = 10.0,
        burst: int = 5,
        max_clients: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, client: str) -> bool:
        """Take one token from ``client``'s bucket; ``False`` when it is empty."""
        now = self._clock()
        with self._lock:
            tokens, seen = self._buckets.pop(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - seen) * self.rate)
            allowed = tokens >= 1.0
            self._buckets[client] = (tokens - 1.0 if allowed else tokens, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            return allowed
