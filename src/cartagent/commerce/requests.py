"""What every protocol does with a request body before it means anything: bound it, parse it
as a JSON object, check it against the spec's JSON Schema, and name the offending field as an
RFC 9535 JSONPath. Refusals are :class:`~cartagent.errors.CheckoutError`; each protocol wraps
them in its own error envelope.

:class:`HttpMessage` is the HTTP request a call arrived in, as a message signature covers it
(over REST the call's own request; over an MCP binding the JSON-RPC POST that carried it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request

from ..errors import CheckoutError

__all__ = [
    "MAX_BODY",
    "HttpMessage",
    "http_message",
    "json_object",
]

MAX_BODY = 256 * 1024


@dataclass(frozen=True)
class HttpMessage:
    """An HTTP request as it arrived: method, full URL, headers (lower-case names), raw body."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes = b""


def http_message(request: Request, body: bytes) -> HttpMessage:
    """``request`` with ``body`` as an :class:`HttpMessage`; the URL's path as it was sent
    (still percent-encoded, as RFC 9421's ``@path`` covers it)."""
    url = request.url
    raw = request.scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        url = url.replace(path=raw.decode("latin-1"))
    headers = {name.lower(): value for name, value in request.headers.items()}
    return HttpMessage(request.method, str(url), headers, body)


def json_object(raw: bytes | None) -> dict[str, Any]:
    """``raw`` as a JSON object (an empty body is ``{}``); :class:`CheckoutError` otherwise:
    413 ``request_too_large``, 400 ``invalid_json`` or ``invalid``."""
    raw = raw or b""
    if len(raw) > MAX_BODY:
        raise CheckoutError(
            f"the body is over {MAX_BODY} bytes", code="request_too_large", status=413
        )
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError as error:
        raise CheckoutError(f"the body is not JSON: {error}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise CheckoutError("the body must be a JSON object", code="invalid")
    return body
