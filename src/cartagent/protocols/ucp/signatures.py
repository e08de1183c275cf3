"""UCP message signatures over REST (signatures.md, "REST Binding"): RFC 9421 HTTP Message
Signatures with ES256 (ECDSA P-256, SHA-256) and an RFC 9530 ``Content-Digest``.

The signer (:func:`sign_request`) covers ``@method``, ``@authority``, ``@path``, ``@query``
when the URL has one, ``ucp-agent`` when the header is sent, ``idempotency-key`` when sent,
and ``content-digest`` / ``content-type`` for a body (signatures.md, "REST Request Signing"),
with ``created`` and ``keyid`` parameters; the signature is the raw 64-byte ``r||s``, never
DER ("Signature Encoding").

:func:`verify_request` is what a receiver does ("REST Request Verification"): parse
``Signature-Input``, find the ``keyid`` in the signer's ``signing_keys`` (JWKs from its
profile), check the ``Content-Digest`` against the raw body, rebuild the signature base and
verify. It refuses signatures that leave out a component the spec requires for the request:
a request with a body is only accepted when ``content-digest`` and ``content-type`` are signed,
so the signature binds the body.

:class:`SharedKey` is a secret shared with one agent, as RFC 9421's ``hmac-sha256`` key
(section 3.3.3): a merchant that requires its agents to sign (``--signing-secret``) verifies
their UCP requests with it, since a key from a profile the caller names itself proves nothing
that the bearer token does not. :func:`request_problem` is that check for a merchant.

:class:`BusinessKeys` is the business's own key, made once and kept in the merchant database
(table ``ucp_signing_keys``) so that restarts and every process share it. The key signing now
sits in the ``current`` slot; every stored key is published in ``signing_keys``, so rotating
("Key Rotation") is: store the old key under another slot name, let a new ``current`` be made,
and delete the old row after the grace period.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from .agent_header import MAX_HEADER, Token, structured_dictionary

__all__ = [
    "SharedKey",
    "SignatureInvalid",
    "Signer",
    "SigningKey",
    "content_digest",
    "profile_keys",
    "public_key",
    "sign_request",
    "signature_base",
    "verify_request",
]

LABEL = "sig1"
_COORDINATE = 32  # bytes per P-256 coordinate and per r / s
_BODY_COMPONENTS = ("content-digest", "content-type")
_COMPONENT = re.compile(r"@?[a-z0-9][a-z0-9\-]*")
_MAX_KEYS = 32  # JWKs read from one profile


class SignatureInvalid(Exception):
    """A message signature that does not verify; ``code`` is signatures.md's error code
    (``signature_missing``, ``key_not_found``, ``digest_mismatch``, ``signature_invalid``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class SigningKey:
    """A P-256 private key and its key id; the private half never shows in ``repr``."""

    kid: str
    private: ec.EllipticCurvePrivateKey = field(repr=False)

    @classmethod
    def generate(cls) -> SigningKey:
        private = ec.generate_private_key(ec.SECP256R1())
        return cls(_thumbprint(private.public_key()), private)

    def jwk(self) -> dict[str, str]:
        """The public key as signatures.md's "Key Format (JWK)" shows it."""
        numbers = self.private.public_key().public_numbers()
        return {
            "kid": self.kid,
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(_COORDINATE, "big")),
            "y": _b64url(numbers.y.to_bytes(_COORDINATE, "big")),
            "use": "sig",
            "alg": "ES256",
        }

    def sign(self, message: bytes) -> bytes:
        """ES256 over ``message``: ``r||s``, 32 bytes each (RFC 9421 section 3.3.4)."""
        r, s = decode_dss_signature(self.private.sign(message, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(_COORDINATE, "big") + s.to_bytes(_COORDINATE, "big")


@dataclass(frozen=True)
class SharedKey:
    """A secret shared with one agent, as an RFC 9421 ``hmac-sha256`` key. The ``kid`` is derived
    from the secret (a one-way digest), so both ends name the key without agreeing on anything
    but the secret; the secret never shows in ``repr``."""

    kid: str
    secret: bytes = field(repr=False)

    @classmethod
    def from_secret(cls, secret: str) -> SharedKey:
        raw = secret.encode()
        digest = hashlib.sha256(b"cartagent ucp request key\x00" + raw).digest()
        return cls("hmac-" + _b64url(digest)[:22], raw)

    def sign(self, message: bytes) -> bytes:
        """HMAC-SHA256 over ``message`` (RFC 9421 section 3.3.3)."""
        return hmac.new(self.secret, message, hashlib.sha256).digest()


class Signer(Protocol):
    """What signs a request: a key id and a signature function."""

    @property
    def kid(self) -> str: ...

    def sign(self, message: bytes) -> bytes: ...


def _thumbprint(public: ec.EllipticCurvePublicKey) -> str:
    """The key's RFC 7638 JWK thumbprint (SHA-256, base64url): a stable, unique ``kid``."""
    numbers = public.public_numbers()
    x = _b64url(numbers.x.to_bytes(_COORDINATE, "big"))
    y = _b64url(numbers.y.to_bytes(_COORDINATE, "big"))
    canonical = f'{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}'
    return _b64url(hashlib.sha256(canonical.encode()).digest())


def profile_keys(document: Any) -> list[dict[str, Any]]:
    """The ``signing_keys`` JWKs of a profile document (only objects; none if it lists none)."""
    keys = document.get("signing_keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        return []
    return [key for key in keys[:_MAX_KEYS] if isinstance(key, dict)]


def public_key(jwk: Mapping[str, Any]) -> ec.EllipticCurvePublicKey:
    """The P-256 public key of ``jwk``; ``ValueError`` if it is not one."""
    if jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise ValueError("only EC P-256 keys (ES256) are supported")
    x, y = jwk.get("x"), jwk.get("y")
    if not isinstance(x, str) or not isinstance(y, str):
        raise ValueError("the key has no x and y coordinates")
    try:
        raw_x, raw_y = _unb64url(x), _unb64url(y)
    except (ValueError, TypeError):
        raise ValueError("the key's coordinates are not base64url") from None
    if len(raw_x) != _COORDINATE or len(raw_y) != _COORDINATE:
        raise ValueError("a P-256 coordinate has 32 bytes")
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(raw_x, "big"), int.from_bytes(raw_y, "big"), ec.SECP256R1()
    )
    return numbers.public_key()  # ValueError for a point not on the curve


# ------------------------------------------------------------------ RFC 9421 / RFC 9530


def content_digest(body: bytes) -> str:
    """RFC 9530 ``Content-Digest`` of the raw body with ``sha-256``."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"


def _authority(url: str) -> str:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"https": 443, "http": 80}.get(parts.scheme)
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def _derived(name: str, method: str, url: str) -> str:
    parts = urlsplit(url)
    if name == "@method":
        return method.upper()
    if name == "@authority":
        return _authority(url)
    if name == "@path":
        return parts.path or "/"
    if name == "@query":
        return "?" + parts.query
    if name == "@target-uri":
        return url
    raise SignatureInvalid("signature_invalid", f"unsupported derived component {name}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def signature_params(components: Sequence[str], params: Mapping[str, str | int]) -> str:
    """The ``@signature-params`` value: the inner list and its parameters, in order."""
    inner = "(" + " ".join(_quote(name) for name in components) + ")"
    rendered = "".join(
        f";{key}={value}" if isinstance(value, int) else f";{key}={_quote(value)}"
        for key, value in params.items()
    )
    return inner + rendered


def signature_base(
    components: Sequence[str],
    method: str,
    url: str,
    headers: Mapping[str, str],
    params: str,
) -> bytes:
    """RFC 9421 section 2.5: one line per covered component, then ``@signature-params``.

    ``headers`` has lower-case names; a covered header that is absent is an error.
    """
    lines = []
    for name in components:
        if name.startswith("@"):
            value = _derived(name, method, url)
        else:
            found = headers.get(name)
            if found is None:
                raise SignatureInvalid("signature_invalid", f"the signed header {name} is absent")
            value = found.strip()
        lines.append(f"{_quote(name)}: {value}")
    lines.append(f'"@signature-params": {params}')
    return "\n".join(lines).encode()


def _required(url: str, headers: Mapping[str, str], body: bool, *, agent: bool) -> list[str]:
    """The components signatures.md requires for this request, in its order; ``ucp-agent``
    only with ``agent`` (order.md's webhook example leaves it out, so a webhook's verifier
    cannot insist on it; a swapped ``UCP-Agent`` points at a profile without the signing key
    anyway). ``content-digest`` and ``content-type`` whenever there is a ``body``: without
    them the signature would not bind it."""
    names = ["@method", "@authority", "@path"]
    if urlsplit(url).query:
        names.append("@query")
    if agent and "ucp-agent" in headers:
        names.append("ucp-agent")
    if "idempotency-key" in headers:
        names.append("idempotency-key")
    if body:
        names.extend(_BODY_COMPONENTS)
    return names


def sign_request(
    key: Signer,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime,
    *,
    cover: Sequence[str] = (),
) -> dict[str, str]:
    """``headers`` plus ``Content-Digest`` (for a body), ``Signature-Input`` and ``Signature``
    for a request to ``url`` (``Content-Type`` must be among ``headers`` for a body); the
    headers named in ``cover`` (lower-case) are signed too, after the required ones."""
    out = dict(headers)
    if body:
        out["Content-Digest"] = content_digest(body)
    lower = {name.lower(): value for name, value in out.items()}
    components = _required(url, lower, bool(body), agent=True)
    components += [name for name in cover if name not in components]
    params = signature_params(components, {"created": int(now.timestamp()), "keyid": key.kid})
    base = signature_base(components, method, url, lower, params)
    out["Signature-Input"] = f"{LABEL}={params}"
    out["Signature"] = f"{LABEL}=:{base64.b64encode(key.sign(base)).decode()}:"
    return out


def _parsed_input(header: str) -> tuple[str, list[str], str]:
    """The label, covered components and raw ``@signature-params`` of the first signature in
    ``Signature-Input`` (the parameters are re-read from the raw text, as RFC 9421 signs
    them as sent)."""
    try:
        members = structured_dictionary(header)
    except ValueError as error:
        raise SignatureInvalid("signature_invalid", f"Signature-Input: {error}") from None
    if not members:
        raise SignatureInvalid("signature_invalid", "Signature-Input names no signature")
    label, value = next(iter(members.items()))
    if not isinstance(value, list) or not all(
        isinstance(item, str) and not isinstance(item, Token) and _COMPONENT.fullmatch(item)
        for item in value
    ):
        raise SignatureInvalid("signature_invalid", "Signature-Input is not a component list")
    raw = header.strip()
    if not raw.startswith(label + "="):
        raise SignatureInvalid("signature_invalid", "Signature-Input must start with its label")
    start = len(label) + 1
    end, quoted = start, False
    while end < len(raw) and (quoted or raw[end] != ","):
        if raw[end] == "\\" and quoted:
            end += 1
        elif raw[end] == '"':
            quoted = not quoted
        end += 1
    return label, list(value), raw[start:end].strip()


def _param(params: str, name: str) -> str | None:
    """Parameter ``name`` (a string or an integer) of a parsed ``@signature-params`` value."""
    after = params[params.index(")") + 1 :]
    found = re.search(rf';\s*{name}=("(?:[^"\\]|\\.)*"|[0-9]+)', after)
    if found is None:
        return None
    value = found.group(1)
    return value[1:-1].replace('\\"', '"').replace("\\\\", "\\") if value[0] == '"' else value


def _signature(header: str, label: str) -> bytes:
    try:
        members = structured_dictionary(header)
    except ValueError as error:
        raise SignatureInvalid("signature_invalid", f"Signature: {error}") from None
    value = members.get(label)
    if not isinstance(value, str) or not (value.startswith(":") and value.endswith(":")):
        raise SignatureInvalid("signature_invalid", f"Signature has no byte sequence {label}")
    try:
        return base64.b64decode(value[1:-1], validate=True)
    except ValueError:
        raise SignatureInvalid("signature_invalid", "Signature is not base64") from None


def verify_request(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    keys: Iterable[Mapping[str, Any]],
    *,
    shared: Sequence[SharedKey] = (),
    agent: bool = False,
) -> str:
    """Check a signed request as signatures.md's "REST Request Verification" does, against
    ``keys`` (the signer's ``signing_keys``, public EC JWKs) and ``shared`` (secrets shared with
    the signer); return the ``keyid`` that signed it. With ``agent``, a ``UCP-Agent`` header
    must be signed too (a platform's request; a business's webhook need not sign it).

    ``headers`` may have any case. Raises :class:`SignatureInvalid`.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    given_input, given_signature = lower.get("signature-input"), lower.get("signature")
    if not given_input or not given_signature:
        raise SignatureInvalid("signature_missing", "Signature-Input and Signature are required")
    if len(given_input) > MAX_HEADER or len(given_signature) > MAX_HEADER:
        raise SignatureInvalid("signature_invalid", "the signature headers are too long")
    label, components, params = _parsed_input(given_input)
    required = _required(url, lower, bool(body), agent=agent)
    missing = [name for name in required if name not in components]
    if missing:
        raise SignatureInvalid(
            "signature_invalid", f"the signature does not cover {', '.join(missing)}"
        )
    keyid = _param(params, "keyid")
    verifies = _verifier(keyid, keys, shared)
    if "content-digest" in components:
        given_digest = lower.get("content-digest", "")
        if not hmac.compare_digest(given_digest.strip(), content_digest(body)):
            raise SignatureInvalid("digest_mismatch", "Content-Digest does not match the body")
    base = signature_base(components, method, url, lower, params)
    if not verifies(base, _signature(given_signature, label)):
        raise SignatureInvalid("signature_invalid", "the signature does not verify")
    return keyid or ""


def _verifier(
    keyid: str | None, keys: Iterable[Mapping[str, Any]], shared: Sequence[SharedKey]
) -> Callable[[bytes, bytes], bool]:
    """Whether a signature verifies under the key ``keyid`` names (a shared secret first, then
    the JWKs); ``key_not_found`` if it names none of them."""
    secret = next((k for k in shared if keyid is not None and k.kid == keyid), None)
    if secret is not None:
        return lambda base, raw: hmac.compare_digest(secret.sign(base), raw)
    jwk = next((k for k in keys if keyid is not None and k.get("kid") == keyid), None)
    if jwk is None:
        raise SignatureInvalid("key_not_found", f"no signing key {keyid!r} for this signer")
    return partial(_es256_verifies, jwk)


def _es256_verifies(jwk: Mapping[str, Any], base: bytes, raw: bytes) -> bool:
    if len(raw) != 2 * _COORDINATE:
        raise SignatureInvalid("signature_invalid", "an ES256 signature is 64 bytes (r||s)")
    r = int.from_bytes(raw[:_COORDINATE], "big")
    s = int.from_bytes(raw[_COORDINATE:], "big")
    try:
        public_key(jwk).verify(encode_dss_signature(r, s), base, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True
