"""A minimal HTTP/1.1 keep-alive client for load generation.

The benchmark shares two cores with the server it measures, so the load generator must be
cheap: this speaks just enough HTTP/1.1 (Content-Length bodies, keep-alive) over asyncio
streams, like ``wrk`` does in C, instead of a full-featured client.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class WireError(RuntimeError):
    """The server answered something this minimal client does not speak."""


class WireClient:
    """One keep-alive connection; requests on it are sequential."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"WireClient speaks plain http to a host, not {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        fixed = {"Host": f"{self.host}:{self.port}", **(headers or {})}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self._reader, self._writer

    async def request(
        self, method: str, path: str, body: bytes = b"", content_type: str | None = None
    ) -> tuple[int, bytes]:
        reader, writer = await self._connect()
        head = f"{method} {path} HTTP/1.1\r\n{self._fixed}Content-Length: {len(body)}\r\n"
        if content_type:
            head += f"Content-Type: {content_type}\r\n"
        writer.write(head.encode() + b"\r\n" + body)
        status_line = await reader.readline()
        if not status_line:
            raise WireError("connection closed")
        status = int(status_line.split(b" ", 2)[1])
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            key = name.strip().lower()
            if key == b"content-length":
                length = int(value)
            elif key == b"transfer-encoding":
                raise WireError("chunked bodies are not supported")
        payload = await reader.readexactly(length) if length else b""
        return status, payload

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            await self._writer.wait_closed()
        self._reader = self._writer = None
