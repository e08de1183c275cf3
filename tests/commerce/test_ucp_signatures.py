"""UCP's RFC 9421 request signatures (signatures.md, "REST Request Signing/Verification"): what
a verifier insists the signature covers, a body changed after signing, and a secret shared with
an agent as the ``hmac-sha256`` key."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from cartagent.commerce.ucp.signatures import (
    LABEL,
    SharedKey,
    SignatureInvalid,
    Signer,
    SigningKey,
    content_digest,
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
