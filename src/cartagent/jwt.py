"""Signed JWTs checked against an issuer's JWK Set, with ``cryptography`` alone.

The parts every verifier of cartagent shares (PayPal's Cart API calls, MCP's OAuth access
tokens); what a token must *say* is each verifier's own business:

- :func:`verify_signed` accepts only the algorithms its caller names (``RS256``, ``ES256``),
  never the token's own choice, so ``alg: none`` and HS256 keyed with a public key (algorithm
  confusion) are refused, as are ``crit`` headers and a key whose algorithm is not the token's;
- :class:`JwksKeys` holds the issuer's keys (RFC 7517) by ``kid``: fetched once and cached,
  fetched again for an unknown ``kid`` (the issuer rotated its keys) at most once a minute, and
  after a failed fetch, not tried again for a few seconds (a flood of requests while the issuer
  is down must not become a flood of fetches);
- :func:`check_lifetime` reads ``exp``, ``iat`` and ``nbf`` with a small leeway.

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
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

__all__ = [
    "InvalidToken",
    "JwksFetcher",
    "JwksKeys",
    "KeysUnavailable",
    "audiences",
    "check_lifetime",
    "get_json",
    "http_jwks",
    "scopes",
    "verify_signed",
]

MAX_TOKEN = 8 * 1024
MAX_JWKS = 64 * 1024
MAX_KEYS = 20
MIN_RSA_BITS = 2048
REFRESH_AFTER = 60.0
RETRY_AFTER = 5.0
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")

JwksFetcher = Callable[[], Mapping[str, Any]]
"""Returns the issuer's JWK Set (``{"keys": [...]}``); raises if it cannot."""


class InvalidToken(Exception):
    """The bearer token is missing, malformed, forged, expired or not for us."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KeysUnavailable(Exception):
    """The issuer's keys could not be fetched, so no token can be checked now."""


def http_jwks(
    url: str, *, timeout: float = 5.0, transport: httpx.BaseTransport | None = None
) -> JwksFetcher:
    """A fetcher that GETs the JWK Set at ``url`` (bounded to 64 KiB)."""

    def fetch() -> Mapping[str, Any]:
        return get_json(url, timeout=timeout, transport=transport, what="key set")

    return fetch


def get_json(
    url: str, *, timeout: float, transport: httpx.BaseTransport | None, what: str
) -> dict[str, Any]:
    """The JSON object at ``url`` (at most 64 KiB); raises on any failure."""
    with (
        httpx.Client(timeout=timeout, transport=transport) as client,
        client.stream("GET", url, headers={"Accept": "application/json"}) as response,
    ):
        response.raise_for_status()
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_JWKS:  # stop reading: a huge answer never sits in memory
                raise ValueError(f"the {what} at {url} is over {MAX_JWKS} bytes")
        loaded = orjson.loads(body)
    if not isinstance(loaded, dict):
        raise ValueError(f"the {what} at {url} is not a JSON object")
    return loaded


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


@dataclass(frozen=True)
class _Key:
    alg: str
    public: rsa.RSAPublicKey | ec.EllipticCurvePublicKey

    def verifies(self, signature: bytes, data: bytes) -> bool:
        try:
            if isinstance(self.public, rsa.RSAPublicKey):
                self.public.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
            else:
                if len(signature) != 64:  # JWS ES256 is r || s, 32 bytes each (RFC 7518 §3.4)
                    return False
                r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
                self.public.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return False
        return True


def _public_key(jwk: Mapping[str, Any]) -> _Key | None:
    kty = jwk.get("kty")
    try:
        if kty == "RSA" and jwk.get("alg", "RS256") == "RS256":
            key = rsa.RSAPublicNumbers(_b64int(jwk.get("e")), _b64int(jwk.get("n"))).public_key()
            return _Key("RS256", key) if key.key_size >= MIN_RSA_BITS else None
        if kty == "EC" and jwk.get("crv") == "P-256" and jwk.get("alg", "ES256") == "ES256":
            x, y = _b64int(jwk.get("x")), _b64int(jwk.get("y"))
            return _Key("ES256", ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key())
    except ValueError:  # a malformed number, or a point not on the curve
        return None
    return None


def _signing_key(jwk: Any) -> tuple[str | None, _Key] | None:
    """``(kid, key)`` for an RS256 or ES256 signing key; ``None`` for anything else."""
    if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
        return None
    kid = jwk.get("kid")
    if kid is not None and not isinstance(kid, str):
        return None
    key = _public_key(jwk)
    return None if key is None else (kid, key)


class JwksKeys:
    """An issuer's RS256 and ES256 keys by ``kid``, from ``fetch`` on first use and cached; an
    unknown ``kid`` fetches again, at most once every ``refresh_after`` seconds; a failed fetch
    is not retried for ``retry_after`` seconds."""

    def __init__(
        self,
        fetch: JwksFetcher,
        *,
        refresh_after: float = REFRESH_AFTER,
        retry_after: float = RETRY_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetch = fetch
        self.refresh_after = refresh_after
        self.retry_after = retry_after
        self.clock = clock
        self.fetches = 0
        self._keys: dict[str | None, _Key] = {}
        self._fetched_at: float | None = None
        self._failure: tuple[float, str] | None = None
        self._lock = threading.Lock()

    def key(self, kid: str | None) -> _Key | None:
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
        if self._failure is not None and self.clock() - self._failure[0] < self.retry_after:
            raise KeysUnavailable(f"{self._failure[1]} (not tried again yet)")
        try:
            loaded = self.fetch()
            listed = loaded.get("keys")
            if not isinstance(listed, list):
                raise ValueError("the key set has no keys list")
        except Exception as error:  # a network, HTTP or format failure: all mean "not now"
            reason = f"the issuer's keys could not be fetched: {error}"
            self._failure = (self.clock(), reason)
            raise KeysUnavailable(reason) from error
        self._failure = None
        keys: dict[str | None, _Key] = {}
        for jwk in listed[:MAX_KEYS]:
            found = _signing_key(jwk)
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


def verify_signed(
    token: str, keys: JwksKeys, *, algorithms: tuple[str, ...], signer: str = "the issuer"
) -> dict[str, Any]:
    """The claims of compact JWS ``token`` once its signature checks out with one of ``keys``
    under one of ``algorithms``; :class:`InvalidToken` otherwise (``signer`` names the issuer
    in that error)."""
    if len(token) > MAX_TOKEN:
        raise InvalidToken(f"the token is over {MAX_TOKEN} characters")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("the token is not a signed JWT (header.payload.signature)")
    header = _json_object(_b64decode(parts[0]), "header")
    if header.get("alg") not in algorithms:
        raise InvalidToken(f"the token's alg must be {' or '.join(algorithms)}")
    if "crit" in header:
        raise InvalidToken("the token has critical header parameters this verifier ignores")
    kid = header.get("kid")
    if kid is not None and (not isinstance(kid, str) or len(kid) > 256):
        raise InvalidToken("the token's kid is invalid")
    key = keys.key(kid)
    if key is None or key.alg != header["alg"]:
        raise InvalidToken(f"the token is not signed with a key {signer} publishes")
    if not key.verifies(_b64decode(parts[2]), f"{parts[0]}.{parts[1]}".encode()):
        raise InvalidToken("the token's signature is invalid")
    return _json_object(_b64decode(parts[1]), "payload")


def _time(claims: Mapping[str, Any], name: str, *, required: bool) -> float | None:
    value = claims.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidToken(f"the token's {name} is {'missing' if value is None else 'invalid'}")
    return float(value)


def check_lifetime(
    claims: Mapping[str, Any], *, now: float, leeway: float, require_iat: bool
) -> float:
    """``exp`` once the token is valid at ``now`` give or take ``leeway`` seconds: not
    expired, not issued (``iat``) or valid (``nbf``) only later; :class:`InvalidToken`
    otherwise."""
    expires = _time(claims, "exp", required=True)
    issued = _time(claims, "iat", required=require_iat)
    not_before = _time(claims, "nbf", required=False)
    if expires is None or now >= expires + leeway:
        raise InvalidToken("the token has expired")
    if any(when is not None and when > now + leeway for when in (issued, not_before)):
        raise InvalidToken("the token is not valid yet")
    return expires


def audiences(value: Any) -> list[Any]:
    """``aud`` as a list: RFC 7519 allows one string or a list of them."""
    return value if isinstance(value, list) else [value]


def scopes(value: Any) -> tuple[str, ...]:
    """A ``scope`` claim as a tuple: an OAuth space-separated string, or a list of strings."""
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return ()
