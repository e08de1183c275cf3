"""The JWT checks verifiers share: which published keys count, and how often the key set is
fetched. (Tokens themselves: tests/mcp_transport/test_oauth.py,
tests/commerce/test_paypal_cart_jwt.py.)"""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

import httpx
import orjson
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from cartagent.jwt import (
    MAX_JWKS,
    MAX_TOKEN,
    InvalidToken,
    JwksKeys,
    KeysUnavailable,
    _b64int,
    audiences,
    check_lifetime,
    http_jwks,
    scopes,
    verify_signed,
)
from tests.mcp.tokens import Fetches, b64, ec_key, flip_signature, jwk, rsa_key, sign

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


# --- every refusal, and its reason --------------------------------------------------------


def _signed(header: dict[str, Any], payload: bytes, key: Any = None) -> str:
    """A compact JWS over any raw ``payload`` (not only JSON claims), ES256 by default."""
    key = key or ec_key()
    signing_input = f"{b64(orjson.dumps(header))}.{b64(payload)}".encode()
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    return f"{signing_input.decode()}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def _reason(token: str, published: JwksKeys | None = None, **options: Any) -> str:
    with pytest.raises(InvalidToken) as raised:
        verify_signed(
            token, published or keys(jwk(ec_key(), "e")), algorithms=("ES256", "RS256"), **options
        )
    assert raised.value.reason == str(raised.value)
    return raised.value.reason


def test_a_token_is_refused_for_its_shape_with_the_reason() -> None:
    good = sign(CLAIMS, ec_key(), kid="e")
    head, body, signature = good.split(".")
    assert _reason("a.b") == "the token is not a signed JWT (header.payload.signature)"
    assert _reason(f"{head}.{body}.{signature}.x").startswith("the token is not a signed JWT")
    assert _reason(f"a+b.{body}.{signature}") == "the token is not base64url"
    assert _reason(f"abcde.{body}.{signature}") == "the token is not base64url"  # 5 characters
    assert _reason(f"{b64(b'not json')}.{body}.{signature}") == "the token's header is not JSON"
    assert _reason(f"{b64(b'[1]')}.{body}.{signature}") == "the token's header is not a JSON object"
    assert _reason(_signed({"alg": "ES256", "kid": "e"}, b"nope")) == (
        "the token's payload is not JSON"
    )
    assert _reason(_signed({"alg": "ES256", "kid": "e"}, b'"claims"')) == (
        "the token's payload is not a JSON object"
    )


def test_the_header_decides_nothing_the_verifier_did_not_allow() -> None:
    assert _reason(sign(CLAIMS, ec_key(), kid="e", alg="HS256")) == (
        "the token's alg must be ES256 or RS256"
    )
    assert _reason(sign(CLAIMS, ec_key(), kid="e", crit=["exp"])) == (
        "the token has critical header parameters this verifier ignores"
    )
    assert (
        _reason(_signed({"alg": "ES256", "kid": 5}, orjson.dumps(CLAIMS)))
        == "the token's kid is invalid"
    )
    assert _reason(sign(CLAIMS, ec_key(), kid="k" * 257)) == "the token's kid is invalid"
    longest = "k" * 256
    assert verify_signed(
        sign(CLAIMS, ec_key(), kid=longest), keys(jwk(ec_key(), longest)), algorithms=("ES256",)
    )


def test_a_token_signed_by_another_key_or_tampered_with_is_refused() -> None:
    assert _reason(sign(CLAIMS, ec_key(), kid="x")) == (
        "the token is not signed with a key the issuer publishes"
    )
    assert _reason(sign(CLAIMS, ec_key(), kid="x"), signer="PayPal") == (
        "the token is not signed with a key PayPal publishes"
    )
    for key, kid in ((ec_key(), "e"), (rsa_key(), "r")):
        published = keys(jwk(ec_key(), "e"), jwk(rsa_key(), "r"))
        flipped = flip_signature(sign(CLAIMS, key, kid=kid))
        assert _reason(flipped, published) == "the token's signature is invalid"
    head, body, signature = sign(CLAIMS, ec_key(), kid="e").split(".")
    short = b64(base64.urlsafe_b64decode(signature + "==")[:63])
    assert _reason(f"{head}.{body}.{short}") == "the token's signature is invalid"
    # An RS256 key under the ES256 key's kid: the key's algorithm must be the token's.
    assert _reason(sign(CLAIMS, ec_key(), kid="r"), keys(jwk(rsa_key(), "r"))) == (
        "the token is not signed with a key the issuer publishes"
    )


def test_a_token_may_be_as_long_as_the_bound_and_not_a_character_longer() -> None:
    for kid_length in range(1, 5):
        for pad in range(MAX_TOKEN):
            token = sign({**CLAIMS, "pad": "p" * pad}, ec_key(), kid="k" * kid_length)
            if len(token) >= MAX_TOKEN:
                break
        if len(token) == MAX_TOKEN:
            break
    assert len(token) == MAX_TOKEN
    published = keys(jwk(ec_key(), "k" * kid_length))
    assert verify_signed(token, published, algorithms=("ES256",))["pad"]
    assert _reason(token + "A", published) == f"the token is over {MAX_TOKEN} characters"


def test_rsa_keys_that_are_short_or_for_another_alg_are_not_trusted() -> None:
    token = sign(CLAIMS, rsa_key(), kid="r")
    for unusable in (jwk(rsa_key(), "r", alg="RS512"), jwk(_rsa_1024(), "r")):
        assert _reason(sign(CLAIMS, _rsa_1024(), kid="r"), keys(unusable)) == (
            "the token is not signed with a key the issuer publishes"
        )
    # The modulus in standard base64 (+ and /) is not base64url: the key is not read.
    standard = {
        **jwk(rsa_key(), "r"),
        "n": jwk(rsa_key(), "r")["n"].replace("-", "+").replace("_", "/"),
    }
    assert standard["n"] != jwk(rsa_key(), "r")["n"]
    assert _reason(token, keys(standard)).startswith("the token is not signed with a key")


@cache
def _rsa_1024() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=1024)


def test_a_key_number_is_base64url_of_bounded_length() -> None:
    assert _b64int("AQAB") == 65537
    assert _b64int(b64(bytes(range(1, 8)))) == int.from_bytes(bytes(range(1, 8)), "big")
    assert _b64int("A" * 2048) == 0
    for bad in ("", "A" * 2049, "a+b", "a/b", 7, None):
        with pytest.raises(ValueError, match=r"^not a base64url integer$"):
            _b64int(bad)


def test_without_kid_only_a_set_of_one_usable_key_serves_the_token() -> None:
    anonymous = {k: v for k, v in jwk(ec_key(), "e").items() if k != "kid"}
    token = sign(CLAIMS, ec_key(), kid=None)
    with_unusable = keys(anonymous, {**_p384(), "kid": "x"})  # P-384: no key to keep
    assert verify_signed(token, with_unusable, algorithms=("ES256",)) == CLAIMS
    assert _reason(token, keys(anonymous, jwk(rsa_key(), "r"))).startswith(
        "the token is not signed with a key"
    )


def test_a_known_kid_is_never_refetched_an_unknown_one_at_most_once_a_minute() -> None:
    now = [100.0]
    fetch = Fetches(jwk(ec_key(), "e"))
    published = JwksKeys(fetch, clock=lambda: now[0])
    assert published.key("e") is not None and published.key("e") is not None
    assert (fetch.count, published.fetches) == (1, 1)
    now[0] = 159.0
    assert published.key("other") is None
    assert (fetch.count, published.fetches) == (1, 1)
    now[0] = 160.0  # a minute after the fetch: the issuer may have rotated its keys
    assert published.key("other") is None
    assert (fetch.count, published.fetches) == (2, 2)
    now[0] = 1000.0
    assert published.key("e") is not None
    assert fetch.count == 2


def test_a_failed_fetch_says_why_and_is_retried_only_after_a_pause() -> None:
    now = [100.0]
    answers: list[Any] = [OSError("issuer down"), {"keys": "none"}, {"keys": [jwk(ec_key(), "e")]}]

    def fetch() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    published = JwksKeys(fetch, clock=lambda: now[0])
    with pytest.raises(
        KeysUnavailable, match=r"^the issuer's keys could not be fetched: issuer down$"
    ):
        published.key("e")
    now[0] = 104.9
    with pytest.raises(KeysUnavailable) as raised:
        published.key("e")
    assert (
        str(raised.value)
        == "the issuer's keys could not be fetched: issuer down (not tried again yet)"
    )
    now[0] = 105.0
    with pytest.raises(KeysUnavailable) as raised:
        published.key("e")
    assert (
        str(raised.value) == "the issuer's keys could not be fetched: the key set has no keys list"
    )
    now[0] = 110.0
    assert published.key("e") is not None
    now[0] = 200.0  # after a success, an unknown kid fetches again normally
    answers.append({"keys": []})
    assert published.key("other") is None
    assert published.fetches == 2


def test_the_key_set_is_asked_for_as_json_with_the_timeout() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"keys": []})

    http_jwks("https://as.example/jwks", transport=httpx.MockTransport(handler))()
    http_jwks("https://as.example/jwks", timeout=2.5, transport=httpx.MockTransport(handler))()
    assert [r.method for r in seen] == ["GET", "GET"]
    assert [r.headers["accept"] for r in seen] == ["application/json"] * 2
    assert [r.extensions["timeout"]["read"] for r in seen] == [5.0, 2.5]


def test_a_key_set_of_exactly_the_bound_is_read_and_one_not_an_object_is_refused() -> None:
    exact = b'{"keys": [], "pad": "' + b"x" * (MAX_JWKS - 23) + b'"}'
    assert len(exact) == MAX_JWKS

    def fetch(body: bytes) -> Any:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
        return http_jwks("https://as.example/jwks", transport=transport)()

    assert fetch(exact)["keys"] == []
    with pytest.raises(ValueError) as raised:
        fetch(b"[]")
    assert str(raised.value) == "the key set at https://as.example/jwks is not a JSON object"
    with pytest.raises(ValueError) as raised:
        fetch(exact + b" ")
    assert str(raised.value) == f"the key set at https://as.example/jwks is over {MAX_JWKS} bytes"


NOW = 1_700_000_000.0


def _lifetime_refusal(claims: dict[str, Any], *, require_iat: bool = False) -> str:
    with pytest.raises(InvalidToken) as raised:
        check_lifetime(claims, now=NOW, leeway=30, require_iat=require_iat)
    return raised.value.reason


def test_a_token_lives_until_exp_give_or_take_the_leeway() -> None:
    assert check_lifetime({"exp": NOW - 29}, now=NOW, leeway=30, require_iat=False) == NOW - 29
    assert _lifetime_refusal({"exp": NOW - 30}) == "the token has expired"
    assert _lifetime_refusal({}) == "the token's exp is missing"
    for bad in (True, "2000000000", float("nan"), float("inf"), [NOW]):
        assert _lifetime_refusal({"exp": bad}) == "the token's exp is invalid"


def test_a_token_issued_or_valid_only_later_is_not_valid_yet() -> None:
    later = {"exp": NOW + 600}
    for name in ("iat", "nbf"):
        assert check_lifetime({**later, name: NOW + 30}, now=NOW, leeway=30, require_iat=False)
        assert _lifetime_refusal({**later, name: NOW + 31}) == "the token is not valid yet"
        assert _lifetime_refusal({**later, name: "soon"}) == f"the token's {name} is invalid"
    assert check_lifetime(later, now=NOW, leeway=30, require_iat=False) == NOW + 600
    assert _lifetime_refusal(later, require_iat=True) == "the token's iat is missing"
    assert check_lifetime({**later, "iat": NOW}, now=NOW, leeway=30, require_iat=True)


def test_aud_and_scope_claims_are_read_in_both_of_their_forms() -> None:
    assert audiences("api") == ["api"]
    assert audiences(["api", "other"]) == ["api", "other"]
    assert scopes("read  write") == ("read", "write")
    assert scopes(["read", "write"]) == ("read", "write")
    assert scopes(["read", 7]) == ()
    assert scopes(None) == ()
