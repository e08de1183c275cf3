"""Verifying the JWT PayPal sends with every Cart API call (``Authorization: Bearer <JWT>``).

PayPal's Store Sync guide ("Set up your API", "Verify the token"): parse the bearer token,
verify its signature with PayPal's public key, check its expiry; its example token is RS256 with
``merchant_id``, ``scope: ["cart"]``, ``iat`` and ``exp``. :class:`JwtVerifier` does that and a
little more, on :mod:`cartagent.jwt` (signatures, key sets, lifetimes):

- RS256 only, fixed here and never taken from the token (``alg: none``, HS256 keyed with the
  public key, ``crit`` headers: all refused);
- the key comes from PayPal's JWK Set by ``kid``, cached, fetched again for an unknown ``kid``
  at most once a minute;
- ``exp`` and ``iat`` are required, ``nbf`` is honoured, each with a small leeway; ``iss`` must
  be the configured issuer (unless it is configured as ``None``: PayPal does not document its
  value); ``aud`` must name the merchant, or, in a token without ``aud`` (PayPal's example),
  ``merchant_id`` must; the scope must hold ``cart`` (a list, as in PayPal's example, or an
  OAuth-style space-separated string).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...jwt import (
    InvalidToken,
    JwksKeys,
    KeysUnavailable,
    audiences,
    check_lifetime,
    http_jwks,
    scopes,
    verify_signed,
)

__all__ = [
    "Claims",
    "InvalidToken",
    "JwksKeys",
    "JwtVerifier",
    "KeysUnavailable",
    "http_jwks",
]


@dataclass(frozen=True)
class Claims:
    """What a verified token says (``raw``: every claim)."""

    issuer: str | None
    audience: str
    scopes: tuple[str, ...]
    expires_at: float
    raw: Mapping[str, Any]

    @property
    def merchant_id(self) -> str | None:
        value = self.raw.get("merchant_id")
        return value if isinstance(value, str) else None


class JwtVerifier:
    """Checks Cart API bearer tokens: RS256 by ``keys``, issued by ``issuer`` (``None``: any)
    for ``audience`` (the merchant's PayPal id), holding ``scope`` (``None``: any), valid now
    (``clock``, in seconds since the epoch) give or take ``leeway`` seconds."""

    def __init__(
        self,
        keys: JwksKeys,
        *,
        issuer: str | None,
        audience: str,
        scope: str | None = "cart",
        leeway: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.scope = scope
        self.leeway = leeway
        self.clock = clock

    def authorize(self, authorization: str | None) -> Claims:
        """The claims of ``Authorization: Bearer <JWT>``; :class:`InvalidToken` otherwise."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise InvalidToken("a PayPal-issued bearer token is required")
        return self.verify(token.strip())

    def verify(self, token: str) -> Claims:
        claims = verify_signed(token, self.keys, algorithms=("RS256",), signer="PayPal")
        expires = check_lifetime(claims, now=self.clock(), leeway=self.leeway, require_iat=True)
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise InvalidToken("the token was not issued by PayPal")
        if self.audience not in audiences(claims.get("aud", claims.get("merchant_id"))):
            raise InvalidToken("the token is for another merchant")
        granted = scopes(claims.get("scope"))
        if self.scope is not None and self.scope not in granted:
            raise InvalidToken(f"the token's scope does not include {self.scope}")
        return Claims(self.issuer, self.audience, granted, expires, claims)
