"""ASGI middleware of the API: the request body limit (:mod:`cartagent.body_limit`, which every
server shares) and an access log without personal data."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..body_limit import BodyLimit

__all__ = ["AccessLog", "BodyLimit"]


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
