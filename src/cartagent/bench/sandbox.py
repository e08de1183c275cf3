"""``cartagent bench sandbox``: create-order → approve → capture flows over real HTTP.

Each client runs flows back to back on its own keep-alive connection; a flow is three requests
(create the order, approve it as the buyer with a form POST, capture it). Clients use the
lightweight :class:`WireClient`, so the load generator leaves the CPU to the server. Reported
per backend and client count: completed flows per second, flow latency p50/p99, and the CPU
milliseconds per flow of the sandbox's processes, of the PostgreSQL server's (its connection
backends and background writers, on this machine) and of the load generator, with the flows/s
that all cores fully busy would give at that cost.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import sqlalchemy as sa

from ..child_process import SandboxProcess
from ..errors import ConfigurationError, explain_connect_failures
from .cpu import CpuMeter, ceiling_line, ms_per
from .report import LOAD_HEADERS, measured, percentile, table
from .wire import WireClient

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
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds each role used during the run (:data:`ROLES`)."""

    @property
    def flows_per_second(self) -> float:
        return self.flows / self.seconds if self.seconds else 0.0

    def cpu_ms_per_flow(self, role: str) -> float:
        """CPU milliseconds ``role`` spent per completed flow (NaN if not measured)."""
        return ms_per(self.cpu, role, self.flows)

    def to_json(self) -> dict[str, Any]:
        """Every figure of the run, JSON-ready (``None`` where nothing was measured)."""

        return {
            "backend": self.backend,
            "clients": self.clients,
            "flows": self.flows,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "flows_per_s": round(self.flows_per_second, 2),
            "p50_ms": measured(percentile(self.latencies, 50) * 1000),
            "p99_ms": measured(percentile(self.latencies, 99) * 1000),
            "cpu_ms_per_flow": {role: measured(self.cpu_ms_per_flow(role)) for role in ROLES},
        }

    def row(self) -> list[object]:
        return [
            self.backend,
            self.clients,
            self.flows,
            self.errors,
            f"{self.flows_per_second:.0f}",
            f"{percentile(self.latencies, 50) * 1000:.1f}",
            f"{percentile(self.latencies, 99) * 1000:.1f}",
            " / ".join(_ms(self.cpu_ms_per_flow(role)) for role in ROLES),
        ]


ROLES = ("sandbox", "postgres", "client")
HEADERS = [*LOAD_HEADERS, "CPU ms/flow: " + " / ".join(ROLES)]


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:.2f}"  # NaN: nothing measured


ORDER_JSON = orjson.dumps(ORDER)
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


async def _client(
    base: str,
    token: str,
    deadline: float,
    max_flows: int,
    latencies: list[float],
    errors: list[str],
) -> None:
    client = WireClient(base, {"Authorization": f"Bearer {token}"})
    try:
        while time.perf_counter() < deadline and len(latencies) < max_flows:
            start = time.perf_counter()
            status, body = await client.request("POST", "/v2/checkout/orders", ORDER_JSON, JSON)
            if status != 201:
                errors.append(f"create {status}")
                continue
            order_id = orjson.loads(body)["id"]
            approved, _ = await client.request("POST", f"/checkoutnow?token={order_id}", b"", FORM)
            captured, _ = await client.request(
                "POST", f"/v2/checkout/orders/{order_id}/capture", b"", JSON
            )
            if approved != 200 or captured != 201:
                errors.append(f"approve {approved} capture {captured}")
                continue
            latencies.append(time.perf_counter() - start)
    finally:
        await client.close()


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
    *,
    db_calls: str = "auto",
) -> list[Result]:
    """Start a sandbox on ``db_url`` and measure each client count in turn."""
    results = []
    named = {"postgres": "postgres"} if db_url.startswith("postgresql") else {}
    with SandboxProcess(db_url, workers=workers, db_calls=db_calls) as server:
        token = server.token()
        asyncio.run(_run(server.base_url, token, 4, warmup, max_flows))
        for clients in client_counts:
            assert server.proc is not None
            meter = CpuMeter(server.proc.pid, lambda _: "sandbox", named)
            meter.start()
            latencies, errors, elapsed = asyncio.run(
                _run(server.base_url, token, clients, seconds, max_flows)
            )
            cpu = dict(meter.stop())
            results.append(
                Result(backend, clients, len(latencies), len(errors), elapsed, latencies, cpu)
            )
    return results


def render(results: Sequence[Result]) -> str:
    return table(HEADERS, [r.row() for r in results])


def ceiling_lines(results: Sequence[Result], cores: int) -> list[str]:
    """Per run: the CPU a flow cost in all, and the flows/s ``cores`` could give at that cost."""
    return [
        ceiling_line(f"{r.backend}, {r.clients} client(s)", r.flows, r.cpu, cores, "flow")
        for r in results
        if r.cpu and r.flows
    ]


BENCH_DATABASE_PREFIX = "cartagent_bench"
"""The bench drops and recreates its database: only a name it chose, this or ``<this>_...``."""


def bench_database(url: str) -> sa.URL:
    """``url`` parsed, when it names a database the bench may drop (see
    :data:`BENCH_DATABASE_PREFIX`); :class:`~cartagent.errors.ConfigurationError` otherwise."""
    try:
        target = sa.engine.make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
    except sa.exc.ArgumentError:
        raise ConfigurationError(f"not a PostgreSQL URL: {url!r}") from None
    name = target.database or ""
    ours = name == BENCH_DATABASE_PREFIX or name.startswith(f"{BENCH_DATABASE_PREFIX}_")
    if not ours or not name.replace("_", "").isalnum():
        raise ConfigurationError(
            f"database {name!r} is not one the bench may drop and recreate: give a name of "
            f"letters, digits and _ starting with {BENCH_DATABASE_PREFIX} "
            f"(e.g. .../{BENCH_DATABASE_PREFIX}_mine)"
        )
    return target


def describe_database(url: str) -> str:
    """``name on host:port`` for the bench database ``url`` names (checked as by
    :func:`bench_database`)."""
    target = bench_database(url)
    where = f"{target.host}:{target.port or 5432}" if target.host else "the local socket"
    return f"{target.database} on {where}"


def fresh_postgres_database(url: str) -> None:
    """Drop and create the database ``url`` names, so every run starts from empty tables;
    refuses (:class:`~cartagent.errors.ConfigurationError`) a name the bench did not choose."""
    target = bench_database(url)
    admin = explain_connect_failures(
        sa.create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    )
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)')
        conn.exec_driver_sql(f'CREATE DATABASE "{target.database}"')
    admin.dispose()
