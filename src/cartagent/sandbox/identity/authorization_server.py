"""The sandbox as an OAuth 2.0 authorization server for resource servers (``cartagent mcp``).

MCP's authorization spec has a remote MCP server take access tokens from an authorization
server it names in its Protected Resource Metadata (RFC 9728). So that such a server can be run
and tested locally, the sandbox issues JWT access tokens (RFC 9068) to its merchants, signed with
the key it publishes for PayPal's Cart API (:mod:`.agentic_commerce`):

- ``GET /.well-known/oauth-authorization-server`` → its metadata (RFC 8414): ``issuer`` (the
  sandbox's base URL), ``token_endpoint``, ``jwks_uri`` (``/v1/agentic-commerce/jwks``),
  ``grant_types_supported: ["client_credentials"]``.
- ``POST /v1/sandbox/oauth2/token`` (sandbox-only), a client-credentials grant authenticated like
  ``/v1/oauth2/token`` (HTTP Basic with the merchant's client id and secret), form fields
  ``grant_type=client_credentials``, ``resource`` (required, RFC 8707: the resource server's
  http(s) URL, which becomes ``aud``) and ``scope`` (optional, space-separated, granted as asked)
  → ``{"access_token", "token_type": "Bearer", "expires_in": 900, "scope"}``. Claims: ``iss``,
  ``sub`` (the merchant id), ``client_id``, ``aud``, ``scope`` (when asked for), ``iat``,
  ``exp``, ``jti``; header ``typ: at+jwt``.

Errors are OAuth's (RFC 6749 §5.2, RFC 8707 §2: ``invalid_request``, ``invalid_client``,
``unsupported_grant_type``, ``invalid_scope``, ``invalid_target``), as PayPal's own token
endpoint answers.
"""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..agentic.cart_api import DEFAULT_TTL, issue, signing_key
from ..api import run_store_work
from ..responses import json_response
from ..state import Sandbox
from .oauth import basic_credentials, client_merchant, oauth_error

__all__ = ["router"]

router = APIRouter()

TOKEN_PATH = "/v1/sandbox/oauth2/token"
JWKS_PATH = "/v1/agentic-commerce/jwks"
MAX_BODY = 4096
MAX_RESOURCE = 2048
MAX_SCOPES = 20
# RFC 6749 §3.3 scope-token; resource: visible ASCII, as a URI is.
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,128}$")
_URI = re.compile(r"^[\x21-\x7e]+$")
FIELDS = ("grant_type", "resource", "scope")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class _Refused(Exception):
    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def _issuer(request: Request) -> str:
    return str(request.base_url).rstrip("/")


@router.get("/.well-known/oauth-authorization-server")
async def metadata(request: Request) -> Response:
    issuer = _issuer(request)
    return json_response(
        {
            "issuer": issuer,
            "token_endpoint": issuer + TOKEN_PATH,
            "jwks_uri": issuer + JWKS_PATH,
            # Required by RFC 8414; empty, as there is no authorization endpoint.
            "response_types_supported": [],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        },
        headers={"Cache-Control": "public, max-age=300"},
    )


def _form(raw: bytes) -> dict[str, str]:
    """Each known field's one value; RFC 6749 §3.2 allows no parameter twice."""
    if len(raw) > MAX_BODY:
        raise _Refused("invalid_request", f"The request body is over {MAX_BODY} bytes.")
    try:
        form = parse_qs(raw.decode(), keep_blank_values=True, max_num_fields=len(FIELDS) + 4)
    except (UnicodeDecodeError, ValueError):
        raise _Refused("invalid_request", "The request body is not a valid form.") from None
    repeated = sorted(name for name, values in form.items() if len(values) > 1)
    if repeated:
        raise _Refused("invalid_request", f"Parameters may not repeat: {', '.join(repeated)}.")
    return {name: values[0] for name, values in form.items() if name in FIELDS}


def _resource(value: str | None) -> str:
    if not value:
        raise _Refused("invalid_target", "resource is required: the URL of the resource server.")
    parts = urlsplit(value) if len(value) <= MAX_RESOURCE and _URI.match(value) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise _Refused("invalid_target", "resource must be an absolute http(s) URL.")
    if parts.fragment or "#" in value:
        raise _Refused("invalid_target", "resource must not have a fragment.")
    return value


def _scopes(value: str | None) -> list[str]:
    requested = (value or "").split(" ") if value else []
    if len(requested) > MAX_SCOPES or not all(_SCOPE_TOKEN.match(s) for s in requested):
        raise _Refused("invalid_scope", f"scope must be up to {MAX_SCOPES} scope tokens.")
    return list(dict.fromkeys(requested))


@router.post(TOKEN_PATH)
async def token(request: Request) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    credentials = basic_credentials(request.headers.get("authorization", ""))
    merchant = await client_merchant(sandbox, credentials)
    if credentials is None or merchant is None:
        return oauth_error(401, "invalid_client", "Client Authentication failed")
    try:
        form = _form(await request.body())
        if form.get("grant_type") != "client_credentials":
            raise _Refused("unsupported_grant_type", "grant_type must be client_credentials.")
        audience, granted = _resource(form.get("resource")), _scopes(form.get("scope"))
    except _Refused as refused:
        return oauth_error(400, refused.error, refused.description)
    key = await run_store_work(sandbox, signing_key, sandbox.store)
    now = int(time.time())
    scope = {"scope": " ".join(granted)} if granted else {}
    claims = {
        "iss": _issuer(request),
        "sub": merchant.id,
        "client_id": credentials[0],
        "aud": audience,
        **scope,
        "iat": now,
        "exp": now + DEFAULT_TTL,
        "jti": sandbox.ids.token(16),
    }
    access_token = issue(key, claims, typ="at+jwt")
    body = {"access_token": access_token, "token_type": "Bearer", "expires_in": DEFAULT_TTL}
    return json_response({**body, **scope}, headers=NO_STORE)
