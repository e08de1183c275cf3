"""The agents a merchant lets in: bearer tokens, and the secrets their requests are signed with.

An agent with a secret (:attr:`AgentKey.must_sign`) must sign every request over every protocol;
each protocol verifies its own way, with that one secret. UCP uses RFC 9421 message signatures
(:mod:`cartagent.protocols.ucp.signatures`, ``hmac-sha256`` keyed by the secret). ACP asks the
merchant to publish its signature scheme out of band; cartagent's is::

    Signature: base64url(HMAC-SHA256(secret, Timestamp + "." + canonical JSON of the body))

with the body's keys sorted and no insignificant whitespace (the empty string for a request
without a body), and ``Timestamp`` (RFC 3339) within :data:`MAX_SKEW` of the merchant's clock.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..protocols.acp.signing import sign

__all__ = ["MAX_SKEW", "AgentKey", "Agents", "sign", "signature_problem"]

MAX_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class AgentKey:
    """One agent platform: its name (what its checkouts and idempotency keys are scoped to),
    its bearer token, the secret it signs requests with (if it does) and its order-events
    receiver with the secret those are signed with (if it wants them)."""

    name: str
    token: str
    signing_secret: str | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = None

    @property
    def must_sign(self) -> bool:
        """Whether every request of this agent must be signed with its secret, whatever the
        protocol (ACP: ``Signature``/``Timestamp``; UCP: an RFC 9421 message signature)."""
        return self.signing_secret is not None

    def __post_init__(self) -> None:
        if not self.name or not self.token:
            raise ValueError("an agent needs a name and a token")
        if self.webhook_url is not None and not self.webhook_secret:
            raise ValueError(f"agent {self.name}: a webhook URL needs a webhook secret")


class Agents:
    def __init__(self, keys: Iterable[AgentKey]) -> None:
        self.keys = tuple(keys)
        if not self.keys:
            raise ValueError("a merchant needs at least one agent key")
        names = [key.name for key in self.keys]
        if len(set(names)) != len(names):
            raise ValueError("agent names must be unique")

    def named(self, name: str) -> AgentKey | None:
        return next((key for key in self.keys if key.name == name), None)

    def webhook_secret(self, name: str) -> str | None:
        key = self.named(name)
        return None if key is None else key.webhook_secret

    def by_token(self, token: str) -> AgentKey | None:
        """The agent holding ``token``; every key is compared, in constant time."""
        found = None
        for key in self.keys:
            if hmac.compare_digest(key.token.encode(), token.encode()):
                found = key
        return found


def signature_problem(
    key: AgentKey, signature: str | None, timestamp: str | None, body: Any, now: datetime
) -> str | None:
    """Why the request's signature is not acceptable, or ``None`` if it is (or none is due)."""
    if key.signing_secret is None:
        return None
    if not signature or not timestamp:
        return "this agent must sign its requests (Signature and Timestamp headers)"
    try:
        sent = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "Timestamp is not an RFC 3339 date-time"
    if sent.tzinfo is None:
        return "Timestamp needs a UTC offset"
    if abs(now - sent) > MAX_SKEW:
        return f"Timestamp is more than {int(MAX_SKEW.total_seconds())} s from the server's clock"
    expected = sign(key.signing_secret, timestamp, body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return "the Signature does not match the request"
    return None
