"""UCP's RFC 9421 request signatures (signatures.md, "REST Request Signing/Verification"): what
a verifier insists the signature covers, a body changed after signing, and a secret shared with
an agent as the ``hmac-sha256`` key."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from cartagent.commerce.ucp.business_keys import BusinessKeys, signing_keys
from cartagent.database import create_engine
from cartagent.protocols.ucp.signatures import (
    LABEL,
    SharedKey,
    SignatureInvalid,
    Signer,
    SigningKey,
    content_digest,
    profile_keys,
    public_key,
    sign_request,
    signature_base,
    signature_params,
    verify_request,
)

URL = "https://merchant.test/checkout-sessions"
BODY = b'{"line_items":[{"item":{"id":"9612497925"},"quantity":1}]}'
HEADERS = {
    "Content-Type": "application/json",
    "UCP-Agent": 'profile="https://platform.test/.well-known/ucp"',
    "Idempotency-Key": "3f1c2a8e-5b7d-4e0a-9c1f-2d3e4f5a6b7c",
}
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
EC_KEY = SigningKey.generate()
SECRET = SharedKey.from_secret("s3cret")
FULL = ["@method", "@authority", "@path", "ucp-agent", "idempotency-key"]


def signed_over(
    key: Signer, components: Sequence[str], body: bytes = BODY, *, digest: bytes | None = None
) -> dict[str, str]:
    """``HEADERS`` signed over exactly ``components`` (a signer that leaves some out); the
    ``Content-Digest`` header is of ``digest`` (default: ``body``)."""
    headers = {**HEADERS, "Content-Digest": content_digest(body if digest is None else digest)}
    lower = {name.lower(): value for name, value in headers.items()}
    params = signature_params(components, {"created": int(NOW.timestamp()), "keyid": key.kid})
    base = signature_base(components, "POST", URL, lower, params)
    signature = base64.b64encode(key.sign(base)).decode()
    return {
        **headers,
        "Signature-Input": f"{LABEL}={params}",
        "Signature": f"{LABEL}=:{signature}:",
    }


def verify(headers: dict[str, str], body: bytes = BODY) -> str:
    return verify_request("POST", URL, headers, body, [EC_KEY.jwk()], shared=[SECRET], agent=True)


@pytest.mark.parametrize("key", [EC_KEY, SECRET], ids=["es256", "hmac-sha256"])
def test_a_request_signed_as_the_spec_says_verifies(key: Signer) -> None:
    headers = sign_request(key, "POST", URL, HEADERS, BODY, NOW)
    assert verify(headers) == key.kid
    covered = headers["Signature-Input"]
    assert '"content-digest" "content-type"' in covered and '"ucp-agent"' in covered


@pytest.mark.parametrize("key", [EC_KEY, SECRET], ids=["es256", "hmac-sha256"])
@pytest.mark.parametrize("left_out", ["content-digest", "content-type"])
def test_a_signature_that_does_not_cover_the_body_is_refused(key: Signer, left_out: str) -> None:
    components = [*FULL, *(c for c in ("content-digest", "content-type") if c != left_out)]
    with pytest.raises(SignatureInvalid, match=f"does not cover {left_out}") as caught:
        verify(signed_over(key, components))
    assert caught.value.code == "signature_invalid"


@pytest.mark.parametrize("key", [EC_KEY, SECRET], ids=["es256", "hmac-sha256"])
def test_a_body_changed_after_signing_is_refused(key: Signer) -> None:
    altered = BODY.replace(b'"quantity":1', b'"quantity":9')
    headers = sign_request(key, "POST", URL, HEADERS, BODY, NOW)
    with pytest.raises(SignatureInvalid) as kept_digest:
        verify(headers, altered)
    assert kept_digest.value.code == "digest_mismatch"
    # A digest recomputed for the new body no longer matches the signed one.
    redigested = {**headers, "Content-Digest": content_digest(altered)}
    with pytest.raises(SignatureInvalid) as recomputed:
        verify(redigested, altered)
    assert recomputed.value.code == "signature_invalid"
    # A signature over no body component cannot vouch for the body, whatever it is.
    unbound = signed_over(key, FULL, altered)
    with pytest.raises(SignatureInvalid) as unbound_body:
        verify(unbound, altered)
    assert unbound_body.value.code == "signature_invalid"


def test_the_ucp_agent_header_of_a_platforms_request_must_be_signed() -> None:
    components = ["@method", "@authority", "@path", "idempotency-key", "content-digest"]
    headers = signed_over(SECRET, [*components, "content-type"])
    with pytest.raises(SignatureInvalid, match="does not cover ucp-agent"):
        verify(headers)


def test_a_shared_secret_is_the_only_key_it_names() -> None:
    headers = sign_request(SharedKey.from_secret("guessed"), "POST", URL, HEADERS, BODY, NOW)
    with pytest.raises(SignatureInvalid) as unknown:
        verify(headers)
    assert unknown.value.code == "key_not_found"
    forged = sign_request(SharedKey(SECRET.kid, b"guessed"), "POST", URL, HEADERS, BODY, NOW)
    with pytest.raises(SignatureInvalid) as wrong:
        verify(forged)
    assert wrong.value.code == "signature_invalid"
    assert "s3cret" not in repr(SECRET) and SECRET.kid == SharedKey.from_secret("s3cret").kid


# --- every refusal, with its code and reason ------------------------------------------------


def _refusal(headers: dict[str, str], body: bytes = BODY, **options: object) -> tuple[str, str]:
    keys = options.pop("keys", [EC_KEY.jwk()])
    with pytest.raises(SignatureInvalid) as raised:
        verify_request("POST", URL, headers, body, keys, shared=[SECRET], **options)  # type: ignore[arg-type]
    return raised.value.code, str(raised.value)


GOOD = sign_request(EC_KEY, "POST", URL, HEADERS, BODY, NOW)
INVALID = "signature_invalid"
MISSING = ("signature_missing", "Signature-Input and Signature are required")
TOO_LONG = (INVALID, "the signature headers are too long")
NOT_A_LIST = (INVALID, "Signature-Input is not a component list")
NO_BYTES = (INVALID, "Signature has no byte sequence sig1")
SHORT = "sig1=:" + base64.b64encode(bytes(63)).decode() + ":"
ZEROS = "sig1=:" + base64.b64encode(bytes(64)).decode() + ":"


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        ({"Signature-Input": None}, MISSING),
        ({"Signature": ""}, MISSING),
        ({"Signature-Input": "s" * 4097}, TOO_LONG),
        ({"Signature": "s" * 4097}, TOO_LONG),
        ({"Signature-Input": " "}, (INVALID, "Signature-Input names no signature")),
        ({"Signature-Input": "sig1=1"}, NOT_A_LIST),
        ({"Signature-Input": 'sig1=("@method" tok)'}, NOT_A_LIST),
        ({"Signature-Input": 'sig1=("Bad Name")'}, NOT_A_LIST),
        ({"Signature": "x=1"}, NO_BYTES),
        ({"Signature": "sig1=1"}, NO_BYTES),
        ({"Signature": "sig1=tok"}, NO_BYTES),
        ({"Signature": 'sig1=":abc"'}, NO_BYTES),
        ({"Signature": 'sig1=":@@@@:"'}, (INVALID, "Signature is not base64")),
        ({"Signature": SHORT}, (INVALID, "an ES256 signature is 64 bytes (r||s)")),
        ({"Signature": ZEROS}, (INVALID, "the signature does not verify")),
        ({"Content-Digest": None}, ("digest_mismatch", "Content-Digest does not match the body")),
    ],
)
def test_a_malformed_or_wrong_signature_is_refused_saying_why(
    change: dict[str, str | None], refused: tuple[str, str]
) -> None:
    headers = {**GOOD, **change}
    headers = {name: value for name, value in headers.items() if value is not None}
    assert _refusal(headers) == refused


@pytest.mark.parametrize(
    ("change", "starts"),
    [({"Signature-Input": "(("}, "Signature-Input: "), ({"Signature": "(("}, "Signature: ")],
)
def test_headers_that_are_no_rfc_8941_dictionary_are_refused(
    change: dict[str, str], starts: str
) -> None:
    code, reason = _refusal({**GOOD, **change})
    assert code == INVALID and reason.startswith(starts) and len(reason) > len(starts)


def test_signature_headers_may_be_as_long_as_the_bound() -> None:
    pad = 4096 - len(sign_request(EC_KEY, "POST", URL, HEADERS, BODY, NOW)["Signature-Input"])
    params = signature_params(
        [*FULL, "content-digest", "content-type"],
        {"created": int(NOW.timestamp()), "keyid": EC_KEY.kid, "nonce": "n" * (pad - 9)},
    )
    headers = {**HEADERS, "Content-Digest": content_digest(BODY)}
    lower = {name.lower(): value for name, value in headers.items()}
    base = signature_base([*FULL, "content-digest", "content-type"], "POST", URL, lower, params)
    signature = f"{LABEL}=:{base64.b64encode(EC_KEY.sign(base)).decode()}:"
    headers["Signature-Input"] = f"{LABEL}={params}"
    headers["Signature"] = signature + ", other=:" + "A" * (4096 - len(signature) - 10) + ":"
    assert (len(headers["Signature-Input"]), len(headers["Signature"])) == (4096, 4096)
    assert verify(headers) == EC_KEY.kid


def test_every_missing_component_is_named() -> None:
    assert _refusal(signed_over(EC_KEY, FULL), agent=True) == (
        INVALID,
        "the signature does not cover content-digest, content-type",
    )


def test_a_signed_header_that_is_absent_is_refused() -> None:
    headers = sign_request(
        EC_KEY, "POST", URL, {**HEADERS, "X-Shop": "1"}, BODY, NOW, cover=["x-shop"]
    )
    del headers["X-Shop"]
    assert _refusal(headers) == (INVALID, "the signed header x-shop is absent")


def test_a_key_the_signer_does_not_publish_is_not_found() -> None:
    other = SigningKey.generate()
    headers = sign_request(other, "POST", URL, HEADERS, BODY, NOW)
    assert _refusal(headers) == ("key_not_found", f"no signing key {other.kid!r} for this signer")


def test_a_webhook_need_not_sign_the_ucp_agent_header_a_platforms_request_must() -> None:
    components = [
        "@method",
        "@authority",
        "@path",
        "idempotency-key",
        "content-digest",
        "content-type",
    ]
    headers = signed_over(EC_KEY, components)
    assert verify_request("POST", URL, headers, BODY, [EC_KEY.jwk()]) == EC_KEY.kid
    assert _refusal(headers, agent=True) == (INVALID, "the signature does not cover ucp-agent")


def test_a_request_without_the_optional_headers_need_not_sign_them() -> None:
    bare = {"Content-Type": "application/json"}
    headers = sign_request(EC_KEY, "POST", URL, bare, BODY, NOW)
    assert '"ucp-agent"' not in headers["Signature-Input"]
    assert '"idempotency-key"' not in headers["Signature-Input"]
    assert verify_request("POST", URL, headers, BODY, [EC_KEY.jwk()], agent=True) == EC_KEY.kid


def test_an_idempotency_key_sent_must_be_signed() -> None:
    components = ["@method", "@authority", "@path", "ucp-agent", "content-digest", "content-type"]
    assert _refusal(signed_over(EC_KEY, components)) == (
        INVALID,
        "the signature does not cover idempotency-key",
    )


def test_the_query_of_a_url_that_has_one_is_signed_and_must_be() -> None:
    url = URL + "?currency=USD"
    headers = sign_request(EC_KEY, "GET", url, {}, b"", NOW)
    assert '"@query"' in headers["Signature-Input"]
    assert verify_request("GET", url, headers, b"", [EC_KEY.jwk()]) == EC_KEY.kid
    without = sign_request(EC_KEY, "GET", URL, {}, b"", NOW)  # signed for the URL sans query
    with pytest.raises(SignatureInvalid, match="does not cover @query"):
        verify_request("GET", url, without, b"", [EC_KEY.jwk()])


@pytest.mark.parametrize(
    "kid",
    ['k"1,2\\3', 'key "two", with, commas', "a)b", "123", 'ends in "', "ends in \\"],
    ids=["odd", "even", "paren", "digits", "quote-last", "backslash-last"],
)
def test_the_first_signature_is_read_to_its_end_quotes_and_escapes_included(kid: str) -> None:
    key = SharedKey(kid, b"secret of " + kid.encode())
    headers = sign_request(key, "POST", URL, HEADERS, BODY, NOW)
    headers["Signature-Input"] += ', sig2=("@method");keyid="other"'
    headers["Signature"] += ", sig2=:AAAA:"
    assert verify_request("POST", URL, headers, BODY, [], shared=[key]) == kid


def test_keyid_may_come_first_or_be_a_number() -> None:
    jwk = {**EC_KEY.jwk(), "kid": "123"}
    components = [*FULL, "content-digest", "content-type"]
    for params in ({"keyid": "123", "created": 1}, {"created": 1, "keyid": 123}):
        rendered = signature_params(components, params)
        headers = {**HEADERS, "Content-Digest": content_digest(BODY)}
        lower = {name.lower(): value for name, value in headers.items()}
        base = signature_base(components, "POST", URL, lower, rendered)
        headers["Signature-Input"] = f"{LABEL}={rendered}"
        headers["Signature"] = f"{LABEL}=:{base64.b64encode(EC_KEY.sign(base)).decode()}:"
        assert verify_request("POST", URL, headers, BODY, [jwk]) == "123"


def test_a_key_with_an_empty_kid_signs_as_the_empty_keyid() -> None:
    jwk = {**EC_KEY.jwk(), "kid": ""}
    headers = sign_request(SharedKey("", b"x"), "POST", URL, HEADERS, BODY, NOW)  # keyid=""
    lower = {name.lower(): value for name, value in headers.items()}
    base = signature_base(
        [*FULL, "content-digest", "content-type"], "POST", URL, lower,
        headers["Signature-Input"].removeprefix(f"{LABEL}="),
    )  # fmt: skip
    headers["Signature"] = f"{LABEL}=:{base64.b64encode(EC_KEY.sign(base)).decode()}:"
    assert verify_request("POST", URL, headers, BODY, [jwk]) == ""


# --- the signature base, byte for byte ------------------------------------------------------


def test_the_signature_base_is_rfc_9421s() -> None:
    components = ["@method", "@authority", "@path", "@query", "@target-uri", "content-type"]
    url = "https://Example.COM:443/p?q=1"
    base = signature_base(
        components, "post", url, {"content-type": " application/json "}, '("@method");created=1'
    )
    assert base == (
        b'"@method": POST\n"@authority": example.com\n"@path": /p\n"@query": ?q=1\n'
        b'"@target-uri": https://Example.COM:443/p?q=1\n"content-type": application/json\n'
        b'"@signature-params": ("@method");created=1'
    )


@pytest.mark.parametrize(
    ("url", "authority"),
    [
        ("https://example.com/", "example.com"),
        ("https://example.com:443/", "example.com"),
        ("http://example.com:80/", "example.com"),
        ("https://example.com:8443/", "example.com:8443"),
        ("http://example.com:443/", "example.com:443"),
        ("https://[::1]:8443/", "[::1]:8443"),
        ("https:///nohost", ""),
    ],
)
def test_the_authority_is_the_host_and_a_port_only_if_not_the_schemes(
    url: str, authority: str
) -> None:
    assert signature_base(["@authority"], "GET", url, {}, "()") == (
        f'"@authority": {authority}\n"@signature-params": ()'.encode()
    )


def test_an_empty_path_is_slash_and_an_unknown_derived_component_is_refused() -> None:
    assert signature_base(["@path"], "GET", "https://example.com", {}, "()").startswith(
        b'"@path": /\n'
    )
    with pytest.raises(SignatureInvalid) as raised:
        signature_base(["@status"], "GET", URL, {}, "()")
    assert (raised.value.code, str(raised.value)) == (
        INVALID,
        "unsupported derived component @status",
    )


def test_names_and_parameters_are_quoted_with_their_escapes() -> None:
    assert signature_params(['a"b\\c'], {"keyid": 'k"1', "created": 7}) == (
        '("a\\"b\\\\c");keyid="k\\"1";created=7'
    )


def test_the_content_digest_is_rfc_9530s() -> None:
    assert content_digest(b"hello") == "sha-256=:LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=:"


# --- keys -------------------------------------------------------------------------------------


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_a_keys_jwk_reads_back_as_the_key_and_its_kid_is_the_rfc_7638_thumbprint() -> None:
    key = SigningKey.generate()
    numbers = key.private.public_key().public_numbers()
    x = _b64url(numbers.x.to_bytes(32, "big"))
    y = _b64url(numbers.y.to_bytes(32, "big"))
    canonical = f'{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}'.encode()
    assert key.kid == _b64url(hashlib.sha256(canonical).digest())
    assert key.jwk() == {
        "kid": key.kid, "kty": "EC", "crv": "P-256", "x": x, "y": y, "use": "sig",
        "alg": "ES256",
    }  # fmt: skip
    assert public_key(key.jwk()).public_numbers() == numbers
    assert SigningKey.generate().kid != key.kid


P256 = {"kty": "EC", "crv": "P-256"}
NO_XY = "the key has no x and y coordinates"
NOT_B64 = "the key's coordinates are not base64url"
NOT_32 = "a P-256 coordinate has 32 bytes"


@pytest.mark.parametrize(
    ("jwk", "reason"),
    [
        ({"kty": "RSA", "crv": "P-256"}, "only EC P-256 keys (ES256) are supported"),
        ({"kty": "EC", "crv": "P-384"}, "only EC P-256 keys (ES256) are supported"),
        ({**P256, "y": "AAAA"}, NO_XY),
        ({**P256, "x": "AAAA", "y": 7}, NO_XY),
        ({**P256, "x": "A", "y": "A"}, NOT_B64),
        ({**P256, "x": "\u00e9", "y": "A"}, NOT_B64),
        ({**P256, "x": "A" * 10, "y": "A" * 10}, NOT_32),
        ({**P256, "x": "A" * 43, "y": "A" * 42}, NOT_32),
    ],
)
def test_a_jwk_that_is_no_p256_public_key_is_refused_saying_why(
    jwk: dict[str, object], reason: str
) -> None:
    with pytest.raises(ValueError) as raised:
        public_key(jwk)
    assert str(raised.value) == reason


def test_only_a_profiles_signing_key_objects_are_read() -> None:
    assert profile_keys({"signing_keys": [{"kid": "a"}, "junk", {"kid": "b"}]}) == [
        {"kid": "a"},
        {"kid": "b"},
    ]
    assert profile_keys([{"signing_keys": []}]) == []
    assert profile_keys({"signing_keys": {"kid": "a"}}) == []


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    made = create_engine(f"sqlite:///{tmp_path / 'keys.db'}")
    yield made
    made.dispose()


def _store(engine: sa.Engine, slot: str, private: object, created_at: datetime) -> str:
    pem = private.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    BusinessKeys(engine)  # the table
    kid = f"kid-{slot}"
    with engine.begin() as conn:
        conn.execute(
            signing_keys.insert().values(slot=slot, kid=kid, private_key=pem, created_at=created_at)
        )
    return kid


def test_the_current_key_is_the_current_slots_and_every_stored_key_is_published(
    engine: sa.Engine,
) -> None:
    newer = _store(engine, "2026-06", ec.generate_private_key(ec.SECP256R1()), NOW)
    older = _store(
        engine, "2026-01", ec.generate_private_key(ec.SECP256R1()), NOW - timedelta(days=150)
    )
    keys = BusinessKeys(engine)
    current = keys.current()
    assert current.kid not in (newer, older)  # no current slot yet: one is made
    assert [jwk["kid"] for jwk in keys.jwks()] == [current.kid, older, newer]
    assert BusinessKeys(engine).current().kid == current.kid


def test_a_stored_key_that_is_not_ec_is_refused(engine: sa.Engine) -> None:
    _store(engine, "current", rsa.generate_private_key(65537, 2048), NOW)
    with pytest.raises(ValueError, match=r"^signing key kid-current is not an EC key$"):
        BusinessKeys(engine).current()
