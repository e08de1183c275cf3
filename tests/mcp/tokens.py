"""JWTs for tests: RS256 and ES256 keys of our own, their JWKs, tokens with any header."""

from __future__ import annotations

import base64
import hashlib
import hmac
from functools import cache
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

Key = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


class Fetches:
    """A key-set fetcher that serves ``keys`` and counts how often it was asked."""

    def __init__(self, *keys: dict[str, str]) -> None:
        self.keys = list(keys)
        self.count = 0

    def __call__(self) -> dict[str, Any]:
        self.count += 1
        return {"keys": self.keys}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _number(value: int, size: int | None = None) -> str:
    return b64(value.to_bytes(size or (value.bit_length() + 7) // 8, "big"))


@cache
def rsa_key(name: str = "default") -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@cache
def ec_key(name: str = "default") -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def jwk(key: Key, kid: str, **extra: str) -> dict[str, str]:
    if isinstance(key, rsa.RSAPrivateKey):
        numbers = key.public_key().public_numbers()
        return {"kty": "RSA", "kid": kid, "n": _number(numbers.n), "e": _number(numbers.e), **extra}
    point = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "kid": kid,
        "x": _number(point.x, 32),
        "y": _number(point.y, 32),
        **extra,
    }


def sign(claims: dict[str, Any], key: Key, *, kid: str | None, **header: Any) -> str:
    """``claims`` signed by ``key`` (RS256 or ES256 by its type), ``header`` added."""
    alg = "RS256" if isinstance(key, rsa.RSAPrivateKey) else "ES256"
    head = {"alg": alg, "typ": "at+jwt", **({"kid": kid} if kid else {}), **header}
    signing_input = f"{b64(orjson.dumps(head))}.{b64(orjson.dumps(claims))}".encode()
    if isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return f"{signing_input.decode()}.{b64(signature)}"


def unsigned(claims: dict[str, Any], *, kid: str, alg: str = "none", secret: bytes = b"") -> str:
    """``alg: none`` (no signature), or an HMAC ``alg`` keyed with ``secret``."""
    head = b64(orjson.dumps({"alg": alg, "typ": "at+jwt", "kid": kid}))
    body = b64(orjson.dumps(claims))
    if alg == "none":
        return f"{head}.{body}."
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


def with_claims(token: str, claims: dict[str, Any]) -> str:
    """``token`` with its payload swapped for ``claims``, the signature kept (so it is wrong)."""
    head, _, signature = token.split(".")
    return f"{head}.{b64(orjson.dumps(claims))}.{signature}"


def flip_signature(token: str) -> str:
    """``token`` with the last byte of its signature changed."""
    head, body, signature = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[-1] ^= 0x01
    return f"{head}.{body}.{b64(bytes(raw))}"
