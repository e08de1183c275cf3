"""PayPal as the caller of a merchant's Cart API: the signing key and the JWTs it sends.

PayPal's Store Sync guide ("Set up your API") says every call PayPal makes to a merchant's
``/merchant-cart`` endpoints carries ``Authorization: Bearer <JWT>``, an RS256 token PayPal issues
with the merchant's id and its scope (the guide's example: ``merchant_id``, ``scope: ["cart"]``,
``iat``, ``exp``), and that the merchant verifies the signature with PayPal's public key and the
expiry. PayPal publishes neither where that key lives nor a way to ask for a token (only PayPal
calls merchants), so the sandbox offers both, for testing a merchant's verification locally:

- ``GET /v1/agentic-commerce/jwks`` → the public key as a JWK Set (RFC 7517): ``{"keys": [{"kty":
  "RSA", "use": "sig", "alg": "RS256", "kid", "n", "e"}]}``, no authentication (a key set is
  public). ``kid`` is the key's RFC 7638 thumbprint.
- ``POST /v1/sandbox/agentic-commerce/token`` (sandbox-only, under ``/v1/sandbox/`` like the clock;
  the merchant's OAuth2 bearer token) with an optional body ``{"expires_in": seconds}`` (60 to
  3600, default 900) → ``{"access_token": JWT, "token_type": "Bearer", "expires_in": n}``, the
  token PayPal would send that merchant. Claims: ``iss`` (the sandbox's base URL), ``aud`` and
  ``merchant_id`` (the merchant's id), ``scope: ["cart"]``, ``iat``, ``nbf``, ``exp``, ``jti``.

One 2048-bit RSA key per sandbox database, made on first use and kept in ``sandbox_meta`` beside
``token_key``, so tokens verify across restarts and server processes. Times are wall-clock, as
for OAuth2 tokens: advancing a merchant's sandbox clock must not expire what a merchant verifies
against real time.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

import orjson
import sqlalchemy as sa
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..api import parse_body, run_store_work
from ..errors import PayPalError, detail, invalid_request
from ..identity.oauth import bearer_merchant
from ..responses import json_response
from ..state import Sandbox
from ..store import Store, meta

__all__ = ["SigningKey", "issue", "router", "signing_key"]

router = APIRouter()

META_KEY = "agentic_commerce_signing_key"
DEFAULT_TTL = 900
TTL_RANGE = (60, 3600)
SCOPE = ["cart"]

_KEYS: weakref.WeakKeyDictionary[Store, SigningKey] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64_int(value: int) -> str:
    return _b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))


@dataclass(frozen=True)
class SigningKey:
    private: rsa.RSAPrivateKey
    jwk: dict[str, str]

    @property
    def kid(self) -> str:
        return self.jwk["kid"]

    @classmethod
    def from_pem(cls, pem: str) -> SigningKey:
        private = serialization.load_pem_private_key(pem.encode(), password=None)
        if not isinstance(private, rsa.RSAPrivateKey):
            raise ValueError("the stored agentic commerce key is not an RSA key")
        numbers = private.public_key().public_numbers()
        public = {"e": _b64_int(numbers.e), "kty": "RSA", "n": _b64_int(numbers.n)}
        thumbprint = hashlib.sha256(
            orjson.dumps(public, option=orjson.OPT_SORT_KEYS)  # RFC 7638: sorted, no spaces
        ).digest()
        jwk = {**public, "use": "sig", "alg": "RS256", "kid": _b64(thumbprint)}
        return cls(private, jwk)


def _load(store: Store) -> SigningKey:
    pem = store.meta_get(META_KEY)
    if pem is None:
        fresh = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        text = fresh.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        try:
            with store.engine.begin() as conn:
                conn.execute(sa.insert(meta).values(key=META_KEY, value=text))
        except sa.exc.IntegrityError:
            pass  # another process stored its key first: everyone uses that one
        pem = store.meta_get(META_KEY) or text
    return SigningKey.from_pem(pem)


def signing_key(store: Store) -> SigningKey:
    """The database's signing key (made and stored on first use, then cached per store)."""
    with _LOCK:
        found = _KEYS.get(store)
        if found is None:
            found = _KEYS[store] = _load(store)
        return found


def issue(key: SigningKey, claims: dict[str, Any], *, typ: str = "JWT") -> str:
    """``claims`` as a compact JWS signed RS256 with ``key`` (RFC 7515, 7518 §3.3)."""
    header = {"alg": "RS256", "typ": typ, "kid": key.kid}
    signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}".encode()
    signature = key.private.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input.decode()}.{_b64(signature)}"


def _ttl(body: Any) -> int:
    if body is None:
        return DEFAULT_TTL
    if not isinstance(body, dict):
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field="/", value=None)
    unknown = [key for key in body if key != "expires_in"]
    if unknown:
        raise PayPalError(400, details=[detail("UNKNOWN_FIELD", field=f"/{k}") for k in unknown])
    ttl = body.get("expires_in", DEFAULT_TTL)
    if not isinstance(ttl, int) or isinstance(ttl, bool):
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field="/expires_in", value=str(ttl))
    if not TTL_RANGE[0] <= ttl <= TTL_RANGE[1]:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            f"expires_in must be between {TTL_RANGE[0]} and {TTL_RANGE[1]} seconds.",
            field="/expires_in",
            value=str(ttl),
        )
    return ttl


@router.get("/v1/agentic-commerce/jwks")
async def jwks(request: Request) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    key = await run_store_work(sandbox, signing_key, sandbox.store)
    return json_response({"keys": [key.jwk]}, headers={"Cache-Control": "public, max-age=300"})


@router.post("/v1/sandbox/agentic-commerce/token")
async def token(request: Request) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    headers = {k.lower(): v for k, v in request.headers.items()}
    merchant_id = bearer_merchant(sandbox, headers.get("authorization"))
    ttl = _ttl(parse_body(await request.body(), headers.get("content-type", "")))
    key = await run_store_work(sandbox, signing_key, sandbox.store)
    now = int(time.time())
    claims = {
        "iss": str(request.base_url).rstrip("/"),
        "aud": merchant_id,
        "merchant_id": merchant_id,
        "scope": SCOPE,
        "iat": now,
        "nbf": now,
        "exp": now + ttl,
        "jti": sandbox.ids.token(16),
    }
    return json_response(
        {"access_token": issue(key, claims), "token_type": "Bearer", "expires_in": ttl}
    )
