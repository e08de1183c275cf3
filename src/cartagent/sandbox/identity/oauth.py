"""OAuth2 client-credentials tokens, as ``POST /v1/oauth2/token`` issues them.

Tokens are self-contained and signed (HMAC-SHA256 with a key kept in the database), so
checking one costs no query. They expire by wall-clock time: advancing the sandbox clock to
bill a subscription should not log every client out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..errors import authentication_failure
from ..responses import json_response
from ..state import Sandbox
from ..store import Merchant

router = APIRouter()

SCOPES = " ".join(
    [
        "https://uri.paypal.com/services/invoicing",
        "https://uri.paypal.com/services/disputes/read-buyer",
        "https://uri.paypal.com/services/payments/realtimepayment",
        "https://uri.paypal.com/services/disputes/update-seller",
        "https://uri.paypal.com/services/payments/payment/authcapture",
        "openid",
        "https://uri.paypal.com/services/disputes/read-seller",
        "https://uri.paypal.com/services/payments/refund",
        "https://api-m.paypal.com/v1/vault/credit-card",
        "https://uri.paypal.com/services/subscriptions",
        "https://uri.paypal.com/services/reporting/search/read",
        "https://uri.paypal.com/services/shipping/trackers/readwrite",
        "https://uri.paypal.com/services/applications/webhooks",
    ]
)


def issue_token(sandbox: Sandbox, merchant_id: str) -> tuple[str, int]:
    expires = int(time.time()) + sandbox.token_ttl_seconds
    payload = f"{merchant_id}.{expires}"
    signature = hmac.new(sandbox.token_key, payload.encode(), hashlib.sha256).digest()
    token = "A21AA" + base64.urlsafe_b64encode(payload.encode() + b"." + signature).decode()
    return token.rstrip("="), sandbox.token_ttl_seconds


def merchant_for_token(sandbox: Sandbox, token: str) -> str | None:
    """The merchant id a bearer token was issued to, or ``None`` if forged or expired."""
    if not token.startswith("A21AA"):
        return None
    raw = token[5:]
    try:
        decoded = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        merchant_id, expires_text, signature = decoded.split(b".", 2)
        expires = int(expires_text)
    except ValueError:
        return None
    expected = hmac.new(
        sandbox.token_key, merchant_id + b"." + expires_text, hashlib.sha256
    ).digest()
    if not hmac.compare_digest(expected, signature) or expires <= time.time():
        return None
    return merchant_id.decode()


def bearer_merchant(sandbox: Sandbox, authorization: str | None) -> str:
    if not authorization or not authorization.lower().startswith("bearer "):
        raise authentication_failure()
    merchant_id = merchant_for_token(sandbox, authorization[7:].strip())
    if merchant_id is None:
        raise authentication_failure()
    return merchant_id


def oauth_error(status: int, error: str, description: str) -> Response:
    """An OAuth2 error (RFC 6749 §5.2), the envelope PayPal's token endpoint answers with."""
    return json_response({"error": error, "error_description": description}, status)


def basic_credentials(header: str) -> tuple[str, str] | None:
    """``(client_id, secret)`` from ``Authorization: Basic ...``, if it is one."""
    if not header.lower().startswith("basic "):
        return None
    try:
        client_id, _, secret = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return client_id, secret


async def client_merchant(sandbox: Sandbox, credentials: tuple[str, str] | None) -> Merchant | None:
    """The merchant these client credentials belong to, if any: checked before a body is
    read, in a worker thread (the stored secret is a hash that takes a scrypt to check)."""
    if credentials is None:
        return None
    return await run_in_threadpool(sandbox.store.merchant_by_credentials, *credentials)


@router.post("/v1/oauth2/token")
async def token(request: Request) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    credentials = basic_credentials(request.headers.get("authorization", ""))
    merchant = await client_merchant(sandbox, credentials)
    if merchant is None:
        return oauth_error(401, "invalid_client", "Client Authentication failed")
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    grant = form.get("grant_type", [""])[0]
    if grant != "client_credentials":
        return oauth_error(
            400, "unsupported_grant_type", f"Grant Type is NULL or not supported: {grant}"
        )
    access_token, ttl = issue_token(sandbox, merchant.id)
    return json_response(
        {
            "scope": SCOPES,
            "access_token": access_token,
            "token_type": "Bearer",
            "app_id": "APP-80W284485P519543T",
            "expires_in": ttl,
            "nonce": sandbox.ids.token(43),
        }
    )
