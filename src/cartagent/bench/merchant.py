"""``cartagent bench merchant``: ACP checkouts, create → update → complete, over real HTTP.

A real ``cartagent merchant`` runs in a child process on 127.0.0.1 with the local PayPal
sandbox it starts beside it, on ports and a data folder of its own. Each client runs flows back
to back on its own keep-alive connection; a flow is three ACP calls (create a checkout session
with an address, select the shipping option, complete it with a PayPal payment token, which
creates and captures a PayPal order on the sandbox). Reported per backend and client count:
complete checkouts per second, flow latency p50/p99, each step's p50, and every error: any
non-2xx answer (or a complete that did not complete) ends the flow and is counted.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from ..child_process import ServerProcess, free_port
from .cpu import CpuMeter, ceiling_line, ms_per
from .report import LOAD_HEADERS, measured, percentile, table

__all__ = [
    "HEADERS",
    "ROLES",
    "STEPS",
    "TARGET",
    "MerchantServer",
    "Result",
    "Target",
    "ceiling_lines",
    "error_lines",
    "pick_items",
    "render",
    "run_backend",
    "target_line",
]

API_VERSION = "2026-04-17"
STEPS = ("create", "update", "complete")
JSON = "application/json"
ADDRESS = {
    "name": "Ada Bench",
    "line_one": "1 Loopback Way",
    "city": "Austin",
    "state": "TX",
    "country": "US",
    "postal_code": "78701",
}
PAYMENT = orjson.dumps(
    {
        "payment_data": {
            "handler_id": "paypal",
            "instrument": {
                "type": "paypal",
                "credential": {"type": "paypal_payment_token", "token": "BA-BENCH"},
            },
        }
    }
)


@dataclass(frozen=True)
class Target:
    """The goal the issue sets: ``flows_per_s`` or more with ``p99_ms`` or less."""

    backend: str = "sqlite"
    clients: int = 8
    flows_per_s: float = 150.0
    p99_ms: float = 100.0

    def describe(self) -> str:
        return (
            f">= {self.flows_per_s:g} complete checkouts/s at {self.clients} clients "
            f"on {self.backend}, p99 <= {self.p99_ms:g} ms"
        )


TARGET = Target()


@dataclass
class Result:
    backend: str
    clients: int
    flows: int
    errors: int
    seconds: float
    latencies: list[float]
    steps: dict[str, list[float]] = field(default_factory=dict)
    error_kinds: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds each role used during the run ("merchant", "sandbox", "client")."""

    @property
    def flows_per_second(self) -> float:
        return self.flows / self.seconds if self.seconds else 0.0

    def step_p50(self, step: str) -> float:
        return percentile(self.steps.get(step, []), 50)

    def cpu_ms_per_flow(self, role: str) -> float:
        """CPU milliseconds ``role`` spent per completed checkout (NaN if not measured)."""
        return ms_per(self.cpu, role, self.flows)

    def row(self) -> list[object]:
        return [
            self.backend,
            self.clients,
            self.flows,
            self.errors,
            f"{self.flows_per_second:.0f}",
            _ms(percentile(self.latencies, 50)),
            _ms(percentile(self.latencies, 99)),
            *(_ms(self.step_p50(step)) for step in STEPS),
            " / ".join(_ms(self.cpu_ms_per_flow(role) / 1000) for role in ROLES),
        ]

    def to_json(self) -> dict[str, Any]:
        def ms(seconds: float) -> float | None:
            return measured(seconds * 1000)

        return {
            "backend": self.backend,
            "clients": self.clients,
            "flows": self.flows,
            "errors": self.errors,
            "error_kinds": dict(self.error_kinds),
            "seconds": round(self.seconds, 3),
            "flows_per_s": round(self.flows_per_second, 2),
            "p50_ms": ms(percentile(self.latencies, 50)),
            "p99_ms": ms(percentile(self.latencies, 99)),
            "steps": {
                step: {
                    "count": len(self.steps.get(step, [])),
                    "p50_ms": ms(self.step_p50(step)),
                    "p99_ms": ms(percentile(self.steps.get(step, []), 99)),
                }
                for step in STEPS
            },
            "cpu_ms_per_flow": {role: ms(self.cpu_ms_per_flow(role) / 1000) for role in ROLES},
        }


HEADERS = [
    *LOAD_HEADERS,
    *(f"{step} p50 ms" for step in STEPS),
    "CPU ms/checkout: merchant / sandbox / client",
]
ROLES = ("merchant", "sandbox", "client")


def _role(command: str) -> str:
    """A process of the merchant's tree: the PayPal sandbox it started, or the merchant."""
    words = " ".join(word for word in command.split() if word != "-m")
    return "sandbox" if "cartagent sandbox" in words else "merchant"


def _ms(value: float) -> str:
    return "-" if value != value else f"{value * 1000:.1f}"  # NaN: nothing measured


class MerchantServer(ServerProcess):
    """``cartagent merchant`` with its local sandbox, on ports, a token and databases of its own.

    ``sandbox_db`` is where the sandbox beside it keeps PayPal's state; by default a SQLite file
    in ``folder`` for a SQLite ``db_url``, else the same database as the merchant.
    """

    name = "cartagent merchant"

    def __init__(
        self,
        folder: Path,
        db_url: str,
        *,
        catalog: Path | None = None,
        sandbox_db: str | None = None,
        workers: int = 1,
        startup_timeout: float = 120.0,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        self.workers = workers
        self.folder = folder
        self.db_url = db_url
        self.catalog = catalog
        if sandbox_db is None:
            sandbox_db = (
                f"sqlite:///{folder / 'sandbox.db'}" if db_url.startswith("sqlite") else db_url
            )
        self.sandbox_db = sandbox_db
        self.sandbox_port = free_port()
        while self.sandbox_port == self.port:
            self.sandbox_port = free_port()
        self.token = "acp_bench_" + secrets.token_urlsafe(18)

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", "cartagent", "merchant", "--host", self.host,
            "--port", str(self.port), "--db", self.db_url, "--agent-token", self.token,
            "--workers", str(self.workers),
        ]  # fmt: skip
        if self.catalog is not None:
            command += ["--catalog", str(self.catalog)]
        return command

    def environment(self) -> dict[str, str]:
        # Nothing from the caller's environment may point it at real PayPal, another sandbox or
        # make agents sign: the benchmark speaks plain bearer-token ACP to the local sandbox.
        prefixes = ("CARTAGENT_PAYPAL", "CARTAGENT_MERCHANT", "CARTAGENT_SANDBOX")
        env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
        env.update(
            {
                "CARTAGENT_SANDBOX_HOST": "127.0.0.1",
                "CARTAGENT_SANDBOX_PORT": str(self.sandbox_port),
                "CARTAGENT_SANDBOX_DB": self.sandbox_db,
                "XDG_DATA_HOME": str(self.folder / "data"),
                "HF_HUB_OFFLINE": "1",
            }
        )
        return env

    def probe(self) -> None:
        httpx.get(f"{self.base_url}/.well-known/acp.json", timeout=2).raise_for_status()
        # The sandbox starts beside it (in its own process with --workers); checkouts need it.
        httpx.get(f"http://127.0.0.1:{self.sandbox_port}/", timeout=2)


def pick_items(catalog: Path, count: int = 8) -> list[str]:
    """Up to ``count`` item ids the store sells in USD and has in stock."""
    from ..catalog import read_catalog
    from ..commerce import MerchantCatalog

    offers = MerchantCatalog(read_catalog(catalog, lambda _problem: None))
    items = [o.item_id for o in offers if o.available and o.currency.upper() == "USD"]
    if not items:
        raise RuntimeError(f"{catalog} has no item in stock priced in USD to check out")
    return items[:count]


@dataclass
class _Tally:
    latencies: list[float] = field(default_factory=list)
    steps: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in STEPS})
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def attempts(self) -> int:
        return len(self.latencies) + sum(self.errors.values())


class _Failed(Exception):
    """A step answered something other than success; the flow is abandoned."""


async def _step(
    client: httpx.AsyncClient, tally: _Tally, step: str, path: str, body: bytes, expect: int
) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        response = await client.post(
            path, content=body, headers={"Idempotency-Key": uuid.uuid4().hex}
        )
    except httpx.HTTPError as error:
        tally.errors[f"{step} {type(error).__name__}"] += 1
        raise _Failed from error
    elapsed = time.perf_counter() - start
    if response.status_code != expect:
        tally.errors[f"{step} {response.status_code}"] += 1
        raise _Failed
    answer: dict[str, Any] = orjson.loads(response.content)
    tally.steps[step].append(elapsed)
    return answer


async def _client(
    base: str,
    token: str,
    items: Sequence[str],
    offset: int,
    deadline: float,
    max_flows: int,
    tally: _Tally,
) -> None:
    headers = {
        "Authorization": f"Bearer {token}",
        "API-Version": API_VERSION,
        "Content-Type": JSON,
    }
    async with httpx.AsyncClient(
        base_url=base,
        headers=headers,
        timeout=30,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    ) as client:
        n = offset
        while time.perf_counter() < deadline and tally.attempts < max_flows:
            item = items[n % len(items)]
            n += 1
            start = time.perf_counter()
            try:
                created = await _step(
                    client, tally, "create", "/checkout_sessions", _create_body(item), 201
                )
                path = f"/checkout_sessions/{created['id']}"
                line = created["line_items"][0]["id"]
                select = {
                    "selected_fulfillment_options": [
                        {"type": "shipping", "option_id": "standard", "item_ids": [line]}
                    ]
                }
                await _step(client, tally, "update", path, orjson.dumps(select), 200)
                done = await _step(client, tally, "complete", f"{path}/complete", PAYMENT, 200)
            except _Failed:
                continue
            if done.get("status") != "completed":
                tally.errors[f"complete status {done.get('status')}"] += 1
                continue
            tally.latencies.append(time.perf_counter() - start)


def _create_body(item: str) -> bytes:
    return orjson.dumps(
        {
            "line_items": [{"id": item, "quantity": 1}],
            "currency": "usd",
            "capabilities": {},
            "fulfillment_details": {"name": ADDRESS["name"], "address": ADDRESS},
        }
    )


async def _run(
    base: str, token: str, items: Sequence[str], clients: int, seconds: float, max_flows: int
) -> tuple[_Tally, float]:
    tally = _Tally()
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(
        *(_client(base, token, items, i, deadline, max_flows, tally) for i in range(clients))
    )
    return tally, time.perf_counter() - start


def run_backend(
    backend: str,
    db_url: str,
    folder: Path,
    client_counts: Sequence[int],
    seconds: float,
    *,
    catalog: Path,
    max_flows: int = 20_000,
    warmup: float = 2.0,
    sandbox_db: str | None = None,
    workers: int = 1,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Result]:
    """Start ``cartagent merchant`` on ``db_url`` and measure each client count in turn.

    Raises ``RuntimeError`` if the warm-up completes no checkout at all (with what went wrong):
    figures from a merchant that cannot sell would mean nothing.
    """
    items = pick_items(catalog)
    results = []
    progress(f"{backend}: starting cartagent merchant")
    server = MerchantServer(folder, db_url, catalog=catalog, sandbox_db=sandbox_db, workers=workers)
    with server:
        progress(f"{backend}: warming up for {warmup:g}s")
        tally, _ = asyncio.run(_run(server.base_url, server.token, items, 2, warmup, max_flows))
        if not tally.latencies:
            raise RuntimeError(f"no checkout completed while warming up: {dict(tally.errors)}")
        for clients in client_counts:
            progress(f"{backend}: {clients} client(s) for {seconds:g}s")
            assert server.proc is not None
            meter = CpuMeter(server.proc.pid, _role)
            meter.start()
            tally, elapsed = asyncio.run(
                _run(server.base_url, server.token, items, clients, seconds, max_flows)
            )
            cpu = dict(meter.stop())
            results.append(
                Result(
                    backend,
                    clients,
                    len(tally.latencies),
                    sum(tally.errors.values()),
                    elapsed,
                    tally.latencies,
                    tally.steps,
                    dict(tally.errors),
                    cpu,
                )
            )
    return results


def render(results: Sequence[Result]) -> str:
    return table(HEADERS, [r.row() for r in results])


def target_line(results: Sequence[Result], target: Target = TARGET) -> str:
    """The issue's target beside what was measured for it (or why nothing was)."""
    run = next(
        (r for r in results if (r.backend, r.clients) == (target.backend, target.clients)), None
    )
    if run is None:
        return (
            f"target: {target.describe()}; not measured "
            f"(needs backend {target.backend} and {target.clients} in --clients)"
        )
    p99 = percentile(run.latencies, 99) * 1000
    met = run.flows_per_second >= target.flows_per_s and p99 <= target.p99_ms and not run.errors
    return (
        f"target: {target.describe()}; measured: {run.flows_per_second:.0f} checkouts/s, "
        f"p99 {_ms(p99 / 1000)} ms, {run.errors} errors: {'met' if met else 'NOT met'}"
    )


def ceiling_lines(results: Sequence[Result], cores: int) -> list[str]:
    """Per run: where the CPU went, and the checkouts/s ``cores`` could give at that cost."""
    return [
        ceiling_line(f"{r.backend}, {r.clients} client(s)", r.flows, r.cpu, cores, "checkout")
        for r in results
        if r.cpu and r.flows
    ]


def error_lines(results: Sequence[Result]) -> list[str]:
    """One line per run that had errors, with how many of each kind."""
    return [
        f"{r.backend}, {r.clients} client(s): {r.errors} error(s): "
        + ", ".join(f"{kind} x{count}" for kind, count in sorted(r.error_kinds.items()))
        for r in results
        if r.errors
    ]
