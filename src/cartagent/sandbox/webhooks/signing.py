"""Webhook signatures exactly as PayPal makes them.

PayPal signs ``transmission_id|transmission_time|webhook_id|crc32(body)`` with SHA256withRSA and
points ``PAYPAL-CERT-URL`` at the certificate that verifies it. The sandbox keeps one RSA key
and a self-signed certificate in ``sandbox_meta``, made on first use.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
import uuid
import weakref
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from sqlalchemy.exc import IntegrityError

from ..store import Store, meta

AUTH_ALGO = "SHA256withRSA"
META_KEY = "webhook_signing"
CERT_PATH = "/v1/notifications/certs/"


@dataclass(frozen=True)
class Signer:
    """The sandbox's signing key, its certificate (PEM) and the id the cert URL names."""

    key: rsa.RSAPrivateKey
    cert_pem: str
    cert_id: str

    def sign(self, message: bytes) -> str:
        signature = self.key.sign(message, padding.PKCS1v15(), hashes.SHA256())
        return base64.b64encode(signature).decode()


_lock = threading.Lock()
_signers: weakref.WeakKeyDictionary[Store, Signer] = weakref.WeakKeyDictionary()


def signer(store: Store) -> Signer:
    """The store's signer, creating and saving the key and certificate the first time."""
    with _lock:
        found = _signers.get(store)
        if found is None:
            raw = store.meta_get(META_KEY)
            if raw is None:
                _save_once(store, orjson.dumps(_generate()).decode())
                raw = store.meta_get(META_KEY) or ""
            found = _load(orjson.loads(raw))
            _signers[store] = found
        return found


def _save_once(store: Store, value: str) -> None:
    # Insert, never overwrite: when two processes race, both end up using the first key.
    try:
        with store.engine.begin() as conn:
            conn.execute(meta.insert().values(key=META_KEY, value=value))
    except IntegrityError:
        pass


def _generate() -> dict[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "cartagent PayPal sandbox"),
            x509.NameAttribute(NameOID.COMMON_NAME, "messageverificationcerts.sandbox.local"),
        ]
    )
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=3650))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return {"key": key_pem, "cert": cert.public_bytes(serialization.Encoding.PEM).decode()}


def _load(stored: dict[str, str]) -> Signer:
    key = serialization.load_pem_private_key(stored["key"].encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    digest = hashlib.sha256(stored["cert"].encode()).hexdigest()
    cert_id = f"CERT-{digest[:8]}-{digest[8:16]}-{digest[16:24]}"
    return Signer(key=key, cert_pem=stored["cert"], cert_id=cert_id)


def event_body(event: dict[str, Any]) -> bytes:
    """How an event is serialised, both to send it and to check a signature over it again."""
    return orjson.dumps(event)


def signed_string(
    transmission_id: str, transmission_time: str, webhook_id: str, body: bytes
) -> str:
    return f"{transmission_id}|{transmission_time}|{webhook_id}|{zlib.crc32(body)}"


def transmission_headers(
    store: Store, base_url: str, webhook_id: str, body: bytes, now: datetime
) -> dict[str, str]:
    """PayPal's delivery headers for ``body`` sent to ``webhook_id`` at ``now``."""
    sig = signer(store)
    when = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    while True:
        transmission_id = str(uuid.uuid4())
        signature = sig.sign(signed_string(transmission_id, when, webhook_id, body).encode())
        # verify-webhook-signature's schema wants the signature to start with a word
        # character; base64 sometimes starts with + or /, so pick another transmission id.
        if signature[0].isalnum():
            break
    return {
        "PAYPAL-TRANSMISSION-ID": transmission_id,
        "PAYPAL-TRANSMISSION-TIME": when,
        "PAYPAL-TRANSMISSION-SIG": signature,
        "PAYPAL-CERT-URL": f"{base_url}{CERT_PATH}{sig.cert_id}",
        "PAYPAL-AUTH-ALGO": AUTH_ALGO,
    }


def verify(
    store: Store,
    *,
    auth_algo: str,
    cert_url: str,
    transmission_id: str,
    transmission_sig: str,
    transmission_time: str,
    webhook_id: str,
    body: bytes,
) -> bool:
    """Whether the sandbox's certificate verifies this transmission."""
    sig = signer(store)
    if auth_algo != AUTH_ALGO or not cert_url.split("?")[0].endswith(CERT_PATH + sig.cert_id):
        return False
    try:
        signature = base64.b64decode(transmission_sig, validate=True)
    except (binascii.Error, ValueError):
        return False
    cert = x509.load_pem_x509_certificate(sig.cert_pem.encode())
    public_key = cert.public_key()
    assert isinstance(public_key, rsa.RSAPublicKey)
    message = signed_string(transmission_id, transmission_time, webhook_id, body).encode()
    try:
        public_key.verify(signature, message, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True
