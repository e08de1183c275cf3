"""``cartagent bench sandbox``: create-order → approve → capture flows over real HTTP.

Each client runs flows back to back on its own keep-alive connection; a flow is three requests
(create the order, approve it as the buyer with a form POST, capture it). Reported per backend
and client count: completed flows per second, and flow latency p50/p99.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import httpx

from ..sandbox.process import SandboxProcess
from .report import percentile, table

ORDER = {
    "intent": "CAPTURE",
    "purchase_units": [
        {
            "amount": {
                "currency_code": "USD",
                "value": "32.43",
                "breakdown": {
                    "item_total": {"currency_code": "USD", "value": "29.97"},
                    "tax_total": {"currency_code": "USD", "value": "2.46"},
                },
            },
            "items": [
                {
                    "name": "Mug",
                    "quantity": "3",
                    "unit_amount": {"currency_code": "USD", "value": "9.99"},
                    "tax": {"currency_code": "USD", "value": "0.82"},
                }
            ],
        }
    ],
}


@dataclass
class Result:
    backend: str
    clients: int
    flows: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def flows_per_second(self) -> float:
        return self.flows / self.seconds if self.seconds else 0.0

    def row(self) -> list[object]:
        return [
            self.backend,
            self.clients,
            self.flows,
            self.errors,
            f"{self.flows_per_second:.0f}",
            f"{percentile(self.latencies, 50) * 1000:.1f}",
            f"{percentile(self.latencies, 99) * 1000:.1f}",
        ]


HEADERS = ["backend", "clients", "flows", "errors", "flows/s", "p50 ms", "p99 ms"]


async def _client(
    base: str,
    token: str,
    deadline: float,
    max_flows: int,
    latencies: list[float],
    errors: list[str],
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        while time.perf_counter() < deadline and len(latencies) < max_flows:
            start = time.perf_counter()
            created = await client.post("/v2/checkout/orders", json=ORDER)
            if created.status_code != 201:
                errors.append(f"create {created.status_code}")
                continue
            order_id = created.json()["id"]
            approved = await client.post(f"/checkoutnow?token={order_id}", data={})
            captured = await client.post(f"/v2/checkout/orders/{order_id}/capture")
            if approved.status_code != 200 or captured.status_code != 201:
                errors.append(f"approve {approved.status_code} capture {captured.status_code}")
                continue
            latencies.append(time.perf_counter() - start)


async def _run(
    base: str, token: str, clients: int, seconds: float, max_flows: int
) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(
        *(_client(base, token, deadline, max_flows, latencies, errors) for _ in range(clients))
    )
    return latencies, errors, time.perf_counter() - start


def run_backend(
    backend: str,
    db_url: str,
    client_counts: list[int],
    seconds: float,
    max_flows: int,
    workers: int = 1,
    warmup: float = 1.0,
) -> list[Result]:
    """Start a sandbox on ``db_url`` and measure each client count in turn."""
    results = []
    with SandboxProcess(db_url, workers=workers) as server:
        token = server.token()
        asyncio.run(_run(server.base_url, token, 4, warmup, max_flows))
        for clients in client_counts:
            latencies, errors, elapsed = asyncio.run(
                _run(server.base_url, token, clients, seconds, max_flows)
            )
            results.append(
                Result(backend, clients, len(latencies), len(errors), elapsed, latencies)
            )
    return results


def render(results: list[Result]) -> str:
    return table(HEADERS, [r.row() for r in results])
