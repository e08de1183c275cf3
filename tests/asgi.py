"""One HTTP request straight to an ASGI app, with a body sent in chunks and the bytes the app
pulled counted: what a test of "refused before the body is read" measures."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.types import ASGIApp, Message


@dataclass
class Sent:
    """The answer, and how many body bytes the app took from the client."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    pulled: int = 0

    def json(self) -> Any:
        return orjson.loads(self.body)


def megabytes(count: int) -> Iterator[bytes]:
    """``count`` chunks of 1 MiB, made as they are pulled (no test holds them all)."""
    for _ in range(count):
        yield b" " * (1 << 20)


async def request(
    app: ASGIApp,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    chunks: Iterable[bytes] = (),
    declare: bool = False,
    query: str = "",
) -> Sent:
    """Send ``chunks`` as the body (with ``Content-Length`` when ``declare``, as the sum of
    their sizes, which needs them all; else ``Transfer-Encoding: chunked``)."""
    pieces: Iterable[bytes] = list(chunks) if declare else chunks
    fields = [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
    ]
    if declare:
        fields.append((b"content-length", str(sum(map(len, pieces))).encode()))
    else:
        fields.append((b"transfer-encoding", b"chunked"))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 50000),
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver"), *fields],
        "state": {},
    }
    sent = Sent()
    source = iter(pieces)
    pending = next(source, None)
    done = False

    async def receive() -> Message:
        nonlocal pending, done
        if done:
            return {"type": "http.disconnect"}
        chunk = pending if pending is not None else b""
        pending = next(source, None)
        done = pending is None
        sent.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": not done}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            sent.status = message["status"]
            sent.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            sent.body += message.get("body", b"")

    await app(scope, receive, send)
    return sent
