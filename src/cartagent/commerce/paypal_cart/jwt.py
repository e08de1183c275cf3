"""Verifying the JWT PayPal sends with every Cart API call (``Authorization: Bearer <JWT>``).

PayPal's Store Sync guide ("Set up your API", "Verify the token"): parse the bearer token,
verify its signature with PayPal's public key, check its expiry; its example token is RS256 with
``merchant_id``, ``scope: ["cart"]``, ``iat`` and ``exp``. :class:`JwtVerifier` does that and a
little more, with ``cryptography`` alone:

- RS256 only, fixed here and never taken from the token, so ``alg: none`` and HS256 signed with
  the public key as an HMAC secret (algorithm confusion) are refused, as is any ``crit`` header;
- the key comes from PayPal's JWK Set (RFC 7517) by ``kid``: fetched once and cached, fetched
  again for an unknown ``kid`` (PayPal rotated its keys) at most once a minute;
- ``exp`` and ``iat`` are required, ``nbf`` is honoured, each with a small leeway; ``iss`` must
  be the configured issuer (unless it is configured as ``None``: PayPal does not document its
  value); ``aud`` must name the merchant, or, in a token without ``aud`` (PayPal's example),
  ``merchant_id`` must; the scope must hold ``cart`` (a list, as in PayPal's example, or an
  OAuth-style space-separated string).

Tokens and key sets are bounded in size before anything is decoded.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

__all__ = [
    "Claims",
    "InvalidToken",
    "JwksKeys",
    "JwtVerifier",
    "KeysUnavailable",
    "http_jwks",
]

MAX_TOKEN = 8 * 1024
MAX_JWKS = 64 * 1024
MAX_KEYS = 20
MIN_RSA_BITS = 2048
REFRESH_AFTER = 60.0
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")

JwksFetcher = Callable[[], Mapping[str, Any]]
"""Returns PayPal's JWK Set (``{"keys": [...]}``); raises if it cannot."""


class InvalidToken(Exception):
    """The request's bearer token is missing, malformed, forged, expired or not for us."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KeysUnavailable(Exception):
    """PayPal's keys could not be fetched, so no token can be checked now."""


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


def http_jwks(
    url: str, *, timeout: float = 5.0, transport: httpx.BaseTransport | None = None
) -> JwksFetcher:
    """A fetcher that GETs the JWK Set at ``url`` (bounded to 64 KiB)."""

    def fetch() -> Mapping[str, Any]:
        with httpx.Client(timeout=timeout, transport=transport) as client:
            response = client.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            if len(response.content) > MAX_JWKS:
                raise ValueError(f"the key set at {url} is over {MAX_JWKS} bytes")
            loaded = orjson.loads(response.content)
        if not isinstance(loaded, dict):
            raise ValueError(f"the key set at {url} is not a JSON object")
        return loaded

    return fetch


def _b64decode(part: str) -> bytes:
    if not _B64URL.match(part):
        raise InvalidToken("the token is not base64url")
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("the token is not base64url") from None


def _b64int(value: Any) -> int:
    if not isinstance(value, str) or not value or len(value) > 2048 or not _B64URL.match(value):
        raise ValueError("not a base64url integer")
    return int.from_bytes(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), "big")


def _rsa_key(jwk: Any) -> tuple[str | None, rsa.RSAPublicKey] | None:
    """``(kid, key)`` for an RSA signing key usable with RS256; ``None`` for anything else."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
        return None
    if jwk.get("use", "sig") != "sig" or jwk.get("alg", "RS256") != "RS256":
        return None
    kid = jwk.get("kid")
    if kid is not None and not isinstance(kid, str):
        return None
    try:
        key = rsa.RSAPublicNumbers(_b64int(jwk.get("e")), _b64int(jwk.get("n"))).public_key()
    except ValueError:
        return None
    if key.key_size < MIN_RSA_BITS:
        return None
    return kid, key


class JwksKeys:
    """PayPal's RS256 keys by ``kid``, from ``fetch`` on first use and cached; an unknown
    ``kid`` fetches again, at most once every ``refresh_after`` seconds."""

    def __init__(
        self,
        fetch: JwksFetcher,
        *,
        refresh_after: float = REFRESH_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetch = fetch
        self.refresh_after = refresh_after
        self.clock = clock
        self.fetches = 0
        self._keys: dict[str | None, rsa.RSAPublicKey] = {}
        self._fetched_at: float | None = None
        self._lock = threading.Lock()

    def key(self, kid: str | None) -> rsa.RSAPublicKey | None:
        with self._lock:
            stale = self._fetched_at is None or (
                kid not in self._keys and self.clock() - self._fetched_at >= self.refresh_after
            )
            if stale:
                self._refresh()
            if kid is None and len(self._keys) == 1:
                return next(iter(self._keys.values()))  # a token without kid, a set of one
            return self._keys.get(kid) if kid is not None else None

    def _refresh(self) -> None:
        try:
            loaded = self.fetch()
            listed = loaded.get("keys")
            if not isinstance(listed, list):
                raise ValueError("the key set has no keys list")
        except Exception as error:  # a network, HTTP or format failure: all mean "not now"
            raise KeysUnavailable(f"PayPal's keys could not be fetched: {error}") from error
        keys: dict[str | None, rsa.RSAPublicKey] = {}
        for jwk in listed[:MAX_KEYS]:
            found = _rsa_key(jwk)
            if found is not None:
                keys[found[0]] = found[1]
        self._keys = keys
        self._fetched_at = self.clock()
        self.fetches += 1


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        loaded = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidToken(f"the token's {what} is not JSON") from None
    if not isinstance(loaded, dict):
        raise InvalidToken(f"the token's {what} is not a JSON object")
    return loaded


def _time(claims: Mapping[str, Any], name: str, *, required: bool) -> float | None:
    value = claims.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidToken(f"the token's {name} is {'missing' if value is None else 'invalid'}")
    return float(value)


def _scopes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return ()


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
        if len(token) > MAX_TOKEN:
            raise InvalidToken(f"the token is over {MAX_TOKEN} characters")
        parts = token.split(".")
        if len(parts) != 3:
            raise InvalidToken("the token is not a signed JWT (header.payload.signature)")
        header = _json_object(_b64decode(parts[0]), "header")
        if header.get("alg") != "RS256":
            raise InvalidToken("the token's alg must be RS256")
        if "crit" in header:
            raise InvalidToken("the token has critical header parameters this merchant ignores")
        kid = header.get("kid")
        if kid is not None and (not isinstance(kid, str) or len(kid) > 256):
            raise InvalidToken("the token's kid is invalid")
        key = self.keys.key(kid)
        if key is None:
            raise InvalidToken("the token is not signed with a key PayPal publishes")
        signature = _b64decode(parts[2])
        try:
            key.verify(
                signature, f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except InvalidSignature:
            raise InvalidToken("the token's signature is invalid") from None
        return self._claims(_json_object(_b64decode(parts[1]), "payload"))

    def _claims(self, claims: dict[str, Any]) -> Claims:
        now = self.clock()
        expires = _time(claims, "exp", required=True)
        issued = _time(claims, "iat", required=True)
        not_before = _time(claims, "nbf", required=False)
        assert expires is not None and issued is not None
        if now >= expires + self.leeway:
            raise InvalidToken("the token has expired")
        if issued > now + self.leeway or (
            not_before is not None and not_before > now + self.leeway
        ):
            raise InvalidToken("the token is not valid yet")
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise InvalidToken("the token was not issued by PayPal")
        audience = claims.get("aud", claims.get("merchant_id"))
        audiences = audience if isinstance(audience, list) else [audience]
        if self.audience not in audiences:
            raise InvalidToken("the token is for another merchant")
        scopes = _scopes(claims.get("scope"))
        if self.scope is not None and self.scope not in scopes:
            raise InvalidToken(f"the token's scope does not include {self.scope}")
        return Claims(self.issuer, self.audience, scopes, expires, claims)
