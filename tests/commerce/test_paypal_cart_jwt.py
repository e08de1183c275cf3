"""The JWTs of PayPal Cart API calls: the sandbox as their issuer (JWKS, tokens, a key per
database) and the merchant's verifier (RS256 only, claims, key caching)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from functools import cache
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from fastapi.testclient import TestClient

from cartagent.commerce.paypal_cart import (
    InvalidToken,
    JwksKeys,
    JwtVerifier,
    KeysUnavailable,
    http_jwks,
)
from cartagent.sandbox import Sandbox, create_app, ensure_merchant, open_sandbox
from tests.conftest import Api
from tests.mcp.tokens import Fetches
from tests.paypal.conftest import TestClientTransport

ISSUER = "http://sandbox.test"
NOW = 1_800_000_000


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@cache
def own_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwk(key: rsa.RSAPrivateKey, kid: str = "k1", **extra: str) -> dict[str, str]:
    numbers = key.public_key().public_numbers()

    def number(value: int) -> str:
        return b64(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    return {"kty": "RSA", "kid": kid, "n": number(numbers.n), "e": number(numbers.e), **extra}


def sign(claims: dict[str, Any], *, key: rsa.RSAPrivateKey | None = None, **header: Any) -> str:
    head = {"alg": "RS256", "typ": "JWT", "kid": "k1", **header}
    signing_input = f"{b64(orjson.dumps(head))}.{b64(orjson.dumps(claims))}"
    signature = (key or own_key()).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64(signature)}"


def claims(**changes: Any) -> dict[str, Any]:
    base = {"iss": ISSUER, "aud": "MERCHANT1", "scope": ["cart"], "iat": NOW, "exp": NOW + 900}
    return {key: value for key, value in {**base, **changes}.items() if value is not None}


def verifier(fetch: Fetches | None = None, **options: Any) -> JwtVerifier:
    keys = JwksKeys(fetch or Fetches(jwk(own_key())), clock=lambda: 0.0)
    settings: dict[str, Any] = {"issuer": ISSUER, "clock": lambda: NOW + 10.0, **options}
    return JwtVerifier(keys, audience="MERCHANT1", **settings)


# The verifier ----------------------------------------------------------------------------------


def test_a_good_token_gives_its_claims() -> None:
    found = verifier().authorize(f"Bearer {sign(claims(merchant_id='MERCHANT1'))}")
    assert (found.issuer, found.audience, found.scopes) == (ISSUER, "MERCHANT1", ("cart",))
    assert found.merchant_id == "MERCHANT1"
    assert verifier().verify(sign(claims(scope="openid cart"))).scopes == ("openid", "cart")
    assert verifier().verify(sign(claims(aud=["other", "MERCHANT1"])))
    assert verifier().verify(sign(claims(aud=None, merchant_id="MERCHANT1")))  # PayPal's example
    assert verifier(issuer=None).verify(sign(claims(iss=None))).issuer is None


@pytest.mark.parametrize(
    ("token_claims", "reason"),
    [
        (claims(exp=NOW - 60), "expired"),
        (claims(exp=None), "exp is missing"),
        (claims(exp="soon"), "exp is invalid"),
        (claims(exp=True), "exp is invalid"),
        (claims(iat=None), "iat is missing"),
        (claims(iat=NOW + 3600), "not valid yet"),
        (claims(nbf=NOW + 3600), "not valid yet"),
        (claims(iss="https://evil.example"), "not issued by PayPal"),
        (claims(aud="MERCHANT2"), "another merchant"),
        (claims(aud=None), "another merchant"),
        (claims(aud="MERCHANT2", merchant_id="MERCHANT1"), "another merchant"),
        (claims(scope=["orders"]), "scope"),
        (claims(scope=None), "scope"),
    ],
)
def test_claims_are_checked(token_claims: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidToken, match=reason):
        verifier().verify(sign(token_claims))


def test_leeway_covers_small_clock_skew() -> None:
    assert verifier().verify(sign(claims(exp=NOW - 5, iat=NOW + 20, nbf=NOW + 20)))
    with pytest.raises(InvalidToken):
        verifier(leeway=0).verify(sign(claims(exp=NOW - 5)))


def _unsigned(alg: str, secret: bytes | None) -> str:
    head = b64(orjson.dumps({"alg": alg, "typ": "JWT", "kid": "k1"}))
    body = b64(orjson.dumps(claims()))
    if secret is None:
        return f"{head}.{body}."
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


def _public_pem() -> bytes:
    return (
        own_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def _forged() -> str:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return sign(claims(), key=other)


HEADER_ONLY = b64(orjson.dumps({"alg": "RS256", "kid": "k1"}))
REFUSED = {
    "alg none": lambda: _unsigned("none", None),
    "HS256 keyed with the public key": lambda: _unsigned("HS256", _public_pem()),
    "another key with the same kid": _forged,
    "an unknown kid": lambda: sign(claims(), kid="k2"),
    "a crit header": lambda: sign(claims(), crit=["exp"]),
    "two parts": lambda: "a.b",
    "not base64url": lambda: "a.b!.c",
    "a payload that is not JSON": lambda: f"{HEADER_ONLY}.{b64(b'[')}.AA",
    "too long": lambda: "a" * 9000,
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_only_rs256_tokens_signed_by_a_published_key_pass(case: str) -> None:
    with pytest.raises(InvalidToken):
        verifier().verify(REFUSED[case]())


@pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer "])
def test_a_bearer_token_is_required(header: str | None) -> None:
    with pytest.raises(InvalidToken, match="bearer token is required"):
        verifier().authorize(header)


def test_weak_or_unusable_keys_are_not_trusted() -> None:
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    for listed in (jwk(small), jwk(own_key(), use="enc"), jwk(own_key(), alg="RS512")):
        with pytest.raises(InvalidToken, match="key PayPal publishes"):
            verifier(Fetches(listed)).verify(sign(claims(), key=small))


def test_keys_are_fetched_once_and_again_only_for_a_new_kid_at_most_once_a_minute() -> None:
    fetch = Fetches(jwk(own_key()))
    now = [0.0]
    keys = JwksKeys(fetch, clock=lambda: now[0])
    check = JwtVerifier(keys, issuer=ISSUER, audience="MERCHANT1", clock=lambda: NOW)
    for _ in range(3):
        check.verify(sign(claims()))
    assert fetch.count == 1
    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fetch.keys.append(jwk(rotated, kid="k2"))
    with pytest.raises(InvalidToken):  # within the minute: not fetched again
        check.verify(sign(claims(), key=rotated, kid="k2"))
    assert fetch.count == 1
    now[0] = 61.0
    assert check.verify(sign(claims(), key=rotated, kid="k2"))  # a minute on: fetched, found
    assert fetch.count == 2


def test_unreachable_keys_are_reported_as_such() -> None:
    def fail() -> dict[str, Any]:
        raise OSError("no route to PayPal")

    with pytest.raises(KeysUnavailable):
        JwtVerifier(JwksKeys(fail), issuer=ISSUER, audience="M").verify(sign(claims()))
    with pytest.raises(KeysUnavailable):
        JwtVerifier(JwksKeys(lambda: {"keys": "x"}), issuer=ISSUER, audience="M").verify(
            sign(claims())
        )


# The sandbox as issuer ---------------------------------------------------------------------------


@pytest.fixture
def account(sandbox: Sandbox, http: TestClient) -> tuple[Api, str]:
    merchant_id = ensure_merchant(sandbox, "jwt-issuer-test", "secret")
    return Api(http, "jwt-issuer-test", "secret"), merchant_id


def test_the_sandbox_issues_tokens_the_merchant_verifies(
    http: TestClient, account: tuple[Api, str]
) -> None:
    api, merchant_id = account
    jwks = http.get("/v1/agentic-commerce/jwks")
    assert jwks.status_code == 200
    [key] = jwks.json()["keys"]
    assert (key["kty"], key["alg"], key["use"]) == ("RSA", "RS256", "sig")
    issued = api.post("/v1/sandbox/agentic-commerce/token", json={"expires_in": 120}).json()
    assert issued["token_type"] == "Bearer" and issued["expires_in"] == 120
    keys = JwksKeys(
        http_jwks(f"{ISSUER}/v1/agentic-commerce/jwks", transport=TestClientTransport(http))
    )
    found = JwtVerifier(keys, issuer=ISSUER, audience=merchant_id).verify(issued["access_token"])
    assert found.merchant_id == merchant_id and found.scopes == ("cart",)
    assert found.expires_at - found.raw["iat"] == 120
    assert found.raw["jti"]
    with pytest.raises(InvalidToken, match="expired"):
        JwtVerifier(
            keys, issuer=ISSUER, audience=merchant_id, clock=lambda: time.time() + 200
        ).verify(issued["access_token"])


def test_tokens_need_the_merchants_bearer_token_and_a_sane_lifetime(
    http: TestClient, account: tuple[Api, str]
) -> None:
    api, _ = account
    assert http.post("/v1/sandbox/agentic-commerce/token").status_code == 401
    headers = {"Authorization": "Bearer A21AAforged"}
    assert http.post("/v1/sandbox/agentic-commerce/token", headers=headers).status_code == 401
    for body in ({"expires_in": 5}, {"expires_in": 86400}, {"expires_in": "60"}, {"aud": "x"}):
        response = api.post("/v1/sandbox/agentic-commerce/token", json=body)
        assert response.status_code == 400, body
        assert response.json()["name"] == "INVALID_REQUEST"


@pytest.mark.postgres  # inserted with each dialect's own ON CONFLICT, once for all processes
def test_the_signing_key_belongs_to_the_database(database_url: str, http: TestClient) -> None:
    first = http.get("/v1/agentic-commerce/jwks").json()
    reopened = open_sandbox(database_url)  # another process on the same database
    try:
        with TestClient(create_app(reopened), base_url=ISSUER) as other:
            assert other.get("/v1/agentic-commerce/jwks").json() == first
    finally:
        reopened.store.engine.dispose()
