"""What every protocol does with a request body before it means anything: bound it, parse it
as a JSON object, check it against the spec's JSON Schema, and name the offending field as an
RFC 9535 JSONPath. Refusals are :class:`~cartagent.errors.CheckoutError`; each protocol wraps
them in its own error envelope.

:class:`HttpMessage` is the HTTP request a call arrived in, as a message signature covers it
(over REST the call's own request; over an MCP binding the JSON-RPC POST that carried it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request

from ..errors import CheckoutError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = [
    "MAX_BODY",
    "HttpMessage",
    "first_problem",
    "http_message",
    "json_object",
    "json_path",
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


def json_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    """``("line_items", 0, "id")`` as the RFC 9535 JSONPath ``$.line_items[0].id``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


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


def first_problem(checker: Draft202012Validator, body: Any) -> CheckoutError | None:
    """The most relevant way ``body`` breaks ``checker``'s schema, as a :class:`CheckoutError`
    whose ``param`` is the path to it (a missing property's own name included)."""
    from jsonschema.exceptions import best_match  # the validators' own module: loaded

    error = best_match(checker.iter_errors(body))
    if error is None:
        return None
    path = tuple(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = next((key for key in error.validator_value if key not in error.instance), None)
        if missing is not None:
            path = (*path, missing)
    code = "missing" if error.validator == "required" else "invalid"
    return CheckoutError(f"{json_path(path)}: {_said(error)[:300]}", code=code, param=path)


_SECRET_PARTS = frozenset({"credential", "token", "number", "cvc", "password"})


def _said(error: ValidationError) -> str:
    """The schema's complaint, without echoing an object, a list or anything under a
    credential (a refusal must never repeat a card number or a token back)."""
    message = str(error.message)
    secret = not _SECRET_PARTS.isdisjoint(str(part) for part in error.absolute_path)
    if not secret and not isinstance(error.instance, dict | list):
        return message
    shown = repr(error.instance)
    if shown in message:
        return message.replace(shown, "the value")
    if isinstance(error.instance, str) and error.instance in message:
        return f"the value breaks the schema's {error.validator!r} rule"
    return message
