"""ASGI middleware of the API: a request body limit and an access log without personal data."""

from __future__ import annotations

import logging
import time

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AccessLog", "BodyLimit"]


class BodyLimit:
    """Answers 413 to a request whose body is over ``max_bytes``.

    The body is read (at most ``max_bytes`` of it) before the app runs, so a chunked upload
    with no ``Content-Length`` is held to the same limit.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # from here on: the disconnect, when it comes
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        detail = f"the request body is larger than {self.max_bytes:,} bytes"
        payload = orjson.dumps({"detail": detail})
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


class AccessLog:
    """Logs one line per request: method, route, status, milliseconds, the caller's role.

    The route is the template (``/api/sessions/{session_id}/messages``), never a query
    string, a header or a body, so no message text and no key reaches the log.
    """

    def __init__(self, app: ASGIApp, *, logger: logging.Logger) -> None:
        self.app = app
        self.log = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "(no route)"
            principal = scope.get("state", {}).get("principal")
            role = getattr(principal, "role", "-")
            elapsed = (time.perf_counter() - start) * 1000
            self.log.info("%s %s %d %.1fms %s", scope["method"], path, status, elapsed, role)
