"""The JWT checks verifiers share: which published keys count, and how often the key set is
fetched. (Tokens themselves: tests/mcp_transport/test_oauth.py,
tests/commerce/test_paypal_cart_jwt.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from cartagent.jwt import InvalidToken, JwksKeys, KeysUnavailable, verify_signed
from tests.mcp.tokens import b64, ec_key, jwk, rsa_key, sign

CLAIMS = {"iss": "https://as.example", "exp": 2_000_000_000}


def keys(*listed: dict[str, Any]) -> JwksKeys:
    return JwksKeys(lambda: {"keys": list(listed)})


def test_rs256_and_p256_es256_keys_verify_their_tokens() -> None:
    published = keys(jwk(rsa_key(), "r"), jwk(ec_key(), "e"))
    for key, kid in ((rsa_key(), "r"), (ec_key(), "e")):
        token = sign(CLAIMS, key, kid=kid)
        assert verify_signed(token, published, algorithms=("RS256", "ES256")) == CLAIMS


def test_a_single_key_without_kid_serves_tokens_without_kid() -> None:
    published = keys({k: v for k, v in jwk(ec_key(), "e").items() if k != "kid"})
    assert verify_signed(sign(CLAIMS, ec_key(), kid=None), published, algorithms=("ES256",))
    with pytest.raises(InvalidToken):  # a kid the set does not have
        verify_signed(sign(CLAIMS, ec_key(), kid="e"), published, algorithms=("ES256",))


def _p384() -> dict[str, str]:
    point = ec.generate_private_key(ec.SECP384R1()).public_key().public_numbers()
    x, y = (b64(n.to_bytes(48, "big")) for n in (point.x, point.y))
    return {"kty": "EC", "crv": "P-384", "kid": "e", "x": x, "y": y}


UNUSABLE: dict[str, dict[str, Any]] = {
    "an encryption key": jwk(ec_key(), "e", use="enc"),
    "an EC key for another alg": jwk(ec_key(), "e", alg="ES384"),
    "a P-384 key": _p384(),
    "a point not on the curve": {**jwk(ec_key(), "e"), "y": jwk(ec_key("other"), "x")["x"]},
    "a non-string kid": {**jwk(ec_key(), "e"), "kid": 7},
}


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_keys_that_cannot_sign_es256_or_rs256_are_not_trusted(case: str) -> None:
    token = sign(CLAIMS, ec_key(), kid="e")
    assert verify_signed(token, keys(jwk(ec_key(), "e")), algorithms=("ES256",))
    with pytest.raises(InvalidToken, match="not signed with a key"):
        verify_signed(token, keys(UNUSABLE[case]), algorithms=("ES256",))


def test_after_a_failed_fetch_the_key_set_is_not_fetched_again_for_a_few_seconds() -> None:
    now = [0.0]
    answers: list[Any] = [OSError("issuer down"), {"keys": [jwk(rsa_key(), "r")]}]
    calls = []

    def fetch() -> Any:
        calls.append(now[0])
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    published = JwksKeys(fetch, clock=lambda: now[0])
    for _ in range(3):
        with pytest.raises(KeysUnavailable):
            published.key("r")
    assert calls == [0.0]
    now[0] = 5.0
    assert published.key("r") is not None
    assert calls == [0.0, 5.0]


def test_a_key_set_document_is_read_only_up_to_its_bound() -> None:
    import httpx

    from cartagent.jwt import MAX_JWKS, http_jwks

    sent: list[int] = []

    def endless() -> Any:
        for _ in range(1000):  # 16 MB if read to the end
            sent.append(1)
            yield b" " * 16384

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless())

    fetch = http_jwks("https://as.example/jwks", transport=httpx.MockTransport(handler))
    with pytest.raises(ValueError, match=f"over {MAX_JWKS} bytes"):
        fetch()
    assert len(sent) <= MAX_JWKS // 16384 + 2  # it stopped reading at the bound
    small = http_jwks(
        "https://as.example/jwks",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"keys": []})),
    )
    assert small() == {"keys": []}
