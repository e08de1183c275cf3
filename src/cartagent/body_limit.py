"""The request body limit of cartagent's HTTP servers, as ASGI middleware that runs before the
body is read.

- A declared ``Content-Length`` over the limit is answered 413 at once, nothing read.
- A chunked body is counted as it streams; the app is stopped with 413 the moment the count
  passes the limit, so at most the limit plus one chunk is ever held.
- ``admits`` (optional) checks the caller's credentials from the headers alone: a request with
  a body that it refuses reaches the app with an empty body, so the app answers it as it answers
  any unauthenticated request (401) without a byte of it read, and its connection is closed.

The local PayPal sandbox uses it too: it is no part of the PayPal client the sandbox tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Admits", "BodyLimit", "Refusal", "carries_body", "header"]

Admits = Callable[[Scope], bool]
Refusal = Callable[[Scope, str], bytes | tuple[bytes, Mapping[str, str]]]
"""The JSON body of a 413 for this request (with extra headers, if any), from the message that
says why."""


def header(scope: Scope, name: bytes) -> str | None:
    """The request's header ``name`` (lower case), decoded as Latin-1, or ``None``."""
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def carries_body(scope: Scope) -> bool:
    """Whether the request declares a body: a non-zero length, or a transfer encoding."""
    declared = header(scope, b"content-length")
    if declared is not None:
        return declared.strip() not in ("", "0")
    return header(scope, b"transfer-encoding") is not None


def _detail(_scope: Scope, message: str) -> bytes:
    return orjson.dumps({"detail": message})


class _TooLarge(Exception):
    """Raised into the app by ``receive`` once the body passes the limit."""


class BodyLimit:
    """Answers 413 to a request whose body is over ``max_bytes``; with ``admits``, reads no
    body of a request whose credentials it refuses. ``refusal`` shapes the 413's JSON body
    (default ``{"detail": ...}``)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        admits: Admits | None = None,
        refusal: Refusal | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.admits = admits
        self.refusal = refusal or _detail

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, send)
            return
        if self.admits is not None and carries_body(scope) and not self.admits(scope):
            await self.app(scope, _without_body(receive), _closing(send))
            return
        received = 0
        refused = False
        started = False

        async def counted() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    refused = True
                    raise _TooLarge
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            if refused:  # whatever the app makes of the refused read, the answer is the 413
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except Exception:
            if not refused:
                raise
        if refused and not started:
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        refused = self.refusal(scope, f"the request body is larger than {self.max_bytes:,} bytes")
        payload, extra = refused if isinstance(refused, tuple) else (refused, {})
        fields = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                    *fields,
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _without_body(receive: Receive) -> Receive:
    """``receive`` for a request whose body is not to be read: an empty body, then only what
    is not body (the disconnect)."""
    given = False

    async def empty() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": b"", "more_body": False}
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message

    return empty


def _closing(send: Send) -> Send:
    """``send`` that asks the server to close the connection after the answer, rather than
    read (and drop) the body the client may still be sending."""

    async def closing(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
            message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await send(message)

    return closing
