"""``cartagent bench mcp``: what a tool call costs over MCP beyond the PayPal request itself.

A sandbox runs on 127.0.0.1; ``cartagent mcp`` runs as a child process over stdio, then over
streamable HTTP. Each round makes the PayPal request directly (``GET`` the order with
:class:`AsyncPayPalClient`) and then the same request through MCP (``get_order``), so both see
the same sandbox state; overhead is the MCP percentile minus the direct one.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ..child_process import SandboxProcess
from ..mcp.process import McpHttpProcess, mcp_args, mcp_command
from ..paypal import AsyncPayPalClient
from .report import percentile, table

TOOL = "get_order"
ORDER = {
    "intent": "CAPTURE",
    "purchase_units": [{"amount": {"currency_code": "USD", "value": "19.99"}}],
}
HEADERS = [
    "transport",
    "calls",
    "errors",
    "direct p50 ms",
    "direct p99 ms",
    "mcp p50 ms",
    "mcp p99 ms",
    "overhead p50 ms",
    "overhead p99 ms",
]


@dataclass
class Result:
    transport: str
    direct: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    errors: int = 0

    def overhead(self, q: float) -> float:
        return percentile(self.total, q) - percentile(self.direct, q)

    def row(self) -> list[object]:
        def ms(value: float) -> str:
            return f"{value * 1000:.2f}"

        return [
            self.transport,
            len(self.total),
            self.errors,
            ms(percentile(self.direct, 50)),
            ms(percentile(self.direct, 99)),
            ms(percentile(self.total, 50)),
            ms(percentile(self.total, 99)),
            ms(self.overhead(50)),
            ms(self.overhead(99)),
        ]


async def _measure(
    name: str,
    connect: Callable[[], AbstractAsyncContextManager[Client]],
    paypal: AsyncPayPalClient,
    order_id: str,
    calls: int,
    warmup: int,
) -> Result:
    result = Result(name)
    arguments = {"order_id": order_id}
    path = f"/v2/checkout/orders/{order_id}"
    async with connect() as client:
        await client.list_tools()
        for i in range(warmup + calls):
            start = time.perf_counter()
            await paypal.get(path)
            middle = time.perf_counter()
            answer = await client.call_tool(TOOL, arguments)
            end = time.perf_counter()
            if i < warmup:
                continue
            result.direct.append(middle - start)
            result.total.append(end - middle)
            result.errors += answer.is_error
    return result


async def _run(
    server: SandboxProcess, calls: int, warmup: int, transports: list[str]
) -> list[Result]:
    args = mcp_args(
        base_url=server.base_url, client_id=server.client_id, client_secret=server.client_secret
    )
    results = []
    async with AsyncPayPalClient(
        server.client_id, server.client_secret, base_url=server.base_url
    ) as paypal:
        order = await paypal.post("/v2/checkout/orders", ORDER)

        if "stdio" in transports:
            command = mcp_command()
            params = StdioServerParameters(
                command=command[0], args=[*command[1:], "--transport", "stdio", *args]
            )
            print("stdio ...", file=sys.stderr)
            results.append(
                await _measure("stdio", lambda: Client(params), paypal, order["id"], calls, warmup)
            )

        if "http" in transports:
            token = secrets.token_urlsafe(24)
            print("http ...", file=sys.stderr)
            with McpHttpProcess(args, token=token) as mcp_server:

                @asynccontextmanager
                async def connect() -> AsyncIterator[Client]:
                    headers = {"Authorization": f"Bearer {token}"}
                    async with (
                        httpx2.AsyncClient(headers=headers, timeout=30) as http,
                        Client(streamable_http_client(mcp_server.url, http_client=http)) as client,
                    ):
                        yield client

                results.append(await _measure("http", connect, paypal, order["id"], calls, warmup))
    return results


def run(
    db_dir: Path, *, calls: int = 200, warmup: int = 20, transports: list[str] | None = None
) -> list[Result]:
    """Start a SQLite sandbox under ``db_dir`` and measure each transport against it."""
    with SandboxProcess(f"sqlite:///{db_dir / 'bench-mcp.db'}") as server:
        return anyio.run(_run, server, calls, warmup, transports or ["stdio", "http"])


def render(results: list[Result]) -> str:
    return table(HEADERS, [r.row() for r in results])
