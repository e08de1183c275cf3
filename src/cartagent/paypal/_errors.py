"""Map PayPal's error answers and transport failures onto ``cartagent.errors``."""

from __future__ import annotations

from typing import Any

import httpx

from cartagent.errors import (
    PayPalAuthError,
    PayPalClientError,
    PayPalError,
    PayPalErrorDetail,
    PayPalServerError,
)

__all__ = ["api_error", "debug_id_of", "oauth_error", "transport_failure"]


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def debug_id_of(response: httpx.Response, body: Any = None) -> str | None:
    if isinstance(body, dict) and body.get("debug_id"):
        return str(body["debug_id"])
    header: str | None = response.headers.get("paypal-debug-id")
    return header


def _class_for(status: int) -> type[PayPalError]:
    if status in (401, 403):
        return PayPalAuthError
    return PayPalClientError if status < 500 else PayPalServerError


def _fallback_message(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    return f"HTTP {response.status_code} {response.reason_phrase} ({kind} body)"


def api_error(response: httpx.Response, request_id: str | None) -> PayPalError:
    """The typed exception for a 4xx/5xx answer from a REST API call."""
    body = _json_or_text(response)
    envelope = body if isinstance(body, dict) else {}
    raw_details = envelope.get("details")
    details = tuple(
        PayPalErrorDetail.from_json(item)
        for item in (raw_details if isinstance(raw_details, list) else [])
        if isinstance(item, dict)
    )
    # Some endpoints (identity, a few legacy ones) answer in the OAuth shape.
    name = envelope.get("name") or envelope.get("error") or response.reason_phrase
    message = envelope.get("message") or envelope.get("error_description")
    return _class_for(response.status_code)(
        str(message or _fallback_message(response)),
        http_status=response.status_code,
        name=str(name),
        debug_id=debug_id_of(response, body),
        details=details,
        request_id=request_id,
        body=body,
    )


def oauth_error(response: httpx.Response) -> PayPalError:
    """The token endpoint refused: credentials (4xx) or an outage (5xx)."""
    if response.status_code >= 500:
        return api_error(response, None)
    body = _json_or_text(response)
    envelope = body if isinstance(body, dict) else {}
    return PayPalAuthError(
        str(envelope.get("error_description") or _fallback_message(response)),
        http_status=response.status_code,
        name=str(envelope.get("error") or "invalid_client"),
        debug_id=debug_id_of(response, body),
        body=body,
    )


def transport_failure(exc: httpx.TransportError, request_id: str | None) -> PayPalServerError:
    return PayPalServerError(
        f"could not reach PayPal: {type(exc).__name__}: {exc}",
        name="TRANSPORT_ERROR",
        request_id=request_id,
    )
