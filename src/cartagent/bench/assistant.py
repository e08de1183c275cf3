"""``cartagent bench assistant``: a fixed script of shopper and merchant turns over the HTTP API.

A real ``cartagent serve`` (with its local sandbox) runs in a child process per understanding
model; the script's conversations are played once with one session at a time and once with
``concurrency`` sessions at a time. Every turn's per-stage timings come from the server's own
breakdown (route, understand, retrieve, tools, respond, total); the client adds the whole
request's latency. Reported per model and concurrency: search-turn and other-turn latency
p50/p95, each stage's p50/p95, turns per second, the server's peak RSS, and the share of the
search turns spent in the retrieval step (understand + retrieve); and, once per model, how long
the server took to start (launch to answering) and its first turn after that (HTTP latency of
the first shopper turn, models loaded at start or not).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..child_process import ServerProcess, free_port
from .report import percentile, table

__all__ = [
    "SCRIPT",
    "AssistantServer",
    "Conversation",
    "RunResult",
    "TurnRecord",
    "render",
    "run_model",
]

APPROVE = "<approve on PayPal>"
"""A step of the script that is not a turn: the shopper presses Pay Now on the buyer page."""

STAGES = ("route", "understand", "retrieve", "tools", "respond")


@dataclass(frozen=True)
class Conversation:
    """One session of the script: its turns in order, as a shopper or as the merchant."""

    name: str
    turns: tuple[str, ...]
    merchant: bool = False


def _shopper(name: str, *turns: str) -> Conversation:
    return Conversation(name, turns)


SCRIPT: tuple[Conversation, ...] = (
    _shopper(
        "t-shirt to receipt",
        "a t-shirt",
        "in blue",
        "cheaper",
        "size L",
        "show me the second one",
        "add the first one to my cart",
        "what's in my cart",
        "checkout",
        APPROVE,
        "yes",
        "where is my order",
    ),
    _shopper(
        "earbuds and headphones",
        "wireless earbuds under $200",
        "cheaper",
        "in white",
        "the first one",
        "do you ship to Canada?",
        "headphones",
        "noise cancelling ones",
        "over-ear",
        "tell me a joke",
    ),
    _shopper(
        "hiking boots",
        "hiking boots",
        "waterproof ones",
        "under 250",
        "leather",
        "size 10",
        "how long do I have to return something?",
        "add the second one to my cart",
        "remove #1",
    ),
    _shopper(
        "coffee",
        "a coffee maker",
        "espresso machine",
        "under 300",
        "stainless steel",
        "cheaper",
        "what's the warranty on appliances?",
        "electric kettle",
        "glass",
        "tea kettle",
    ),
    _shopper(
        "home office",
        "office chair",
        "desk lamp",
        "with a usb port",
        "mechanical keyboard",
        "cheaper",
        "gaming mouse",
        "wireless",
        "add it to my cart",
        "what's in my cart",
    ),
    _shopper(
        "outdoors",
        "a backpack",
        "for hiking",
        "under 100",
        "water bottle",
        "stainless steel",
        "yoga mat",
        "not blue",
        "cycling helmet",
        "bicycle",
        "do you take Visa?",
    ),
    _shopper(
        "gadgets",
        "smart watch",
        "cheaper",
        "smartphone",
        "128GB",
        "tablet",
        "e-reader",
        "portable charger",
        "the third one",
        "how much is shipping?",
    ),
    _shopper(
        "home",
        "air purifier",
        "vacuum cleaner",
        "cordless",
        "smart thermostat",
        "led light bulb",
        "wall clock",
        "bookshelf",
        "wooden",
        "pet bed",
        "large",
    ),
    _shopper(
        "style",
        "sneakers",
        "size 9",
        "running shoes",
        "cheaper",
        "sunglasses",
        "perfume",
        "fleece jacket",
        "in black",
        "wristwatch",
    ),
    _shopper(
        "buy a mug and return it",
        "a water bottle",
        "add the first one to my cart",
        "checkout",
        APPROVE,
        "yes",
        "where is my order?",
        "I want to return the water bottle",
        "yes",
    ),
    _shopper(
        "gifts",
        "jigsaw puzzle",
        "makeup kit",
        "skateboard",
        "dumbbell set",
        "patio umbrella",
        "garden hose",
        "grill",
        "luggage set",
        "notebook",
    ),
    Conversation(
        "merchant",
        (
            "sales this week",
            "show my open disputes",
            "list unpaid invoices",
            "Create an invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days",
            "list my plans",
        ),
        merchant=True,
    ),
)
"""The fixed script: 12 sessions, most turns searches, as in a real store."""


@dataclass(frozen=True)
class TurnRecord:
    conversation: str
    text: str
    domain: str | None
    timings: dict[str, float]
    client_ms: float
    search: bool
    answer: str = ""
    error: str | None = None


@dataclass
class RunResult:
    """One model at one concurrency."""

    model: str
    concurrency: int
    turns: list[TurnRecord] = field(default_factory=list)
    wall_s: float = 0.0
    peak_rss_bytes: int | None = None
    start_s: float | None = None
    """Seconds from launching the server to its answering."""
    first_turn_ms: float | None = None
    """HTTP latency of the first shopper turn after the server started."""

    @property
    def turns_per_s(self) -> float:
        return len(self.turns) / self.wall_s if self.wall_s else 0.0

    def latency(self, search: bool, stage: str = "total") -> tuple[float, float]:
        values = [
            t.timings.get(stage, 0.0) for t in self.turns if t.search is search and not t.error
        ]
        if not values:
            return float("nan"), float("nan")
        return percentile(values, 50), percentile(values, 95)

    def client_latency(self) -> tuple[float, float]:
        values = [t.client_ms for t in self.turns if not t.error]
        return percentile(values, 50), percentile(values, 95)

    def retrieval_share(self) -> float:
        """Of the search turns' total time, the share spent understanding and retrieving."""
        searches = [t for t in self.turns if t.search and not t.error]
        total = sum(t.timings.get("total", 0.0) for t in searches)
        spent = sum(
            t.timings.get("understand", 0.0) + t.timings.get("retrieve", 0.0) for t in searches
        )
        return spent / total if total else float("nan")

    def errors(self) -> list[TurnRecord]:
        return [t for t in self.turns if t.error]

    def to_json(self) -> dict[str, Any]:
        search, other = self.latency(True), self.latency(False)
        return {
            "model": self.model,
            "concurrency": self.concurrency,
            "turns": len(self.turns),
            "search_turns": sum(t.search for t in self.turns),
            "errors": [{"text": t.text, "error": t.error} for t in self.errors()],
            "wall_s": round(self.wall_s, 3),
            "turns_per_s": round(self.turns_per_s, 2),
            "peak_rss_mb": None
            if self.peak_rss_bytes is None
            else round(self.peak_rss_bytes / 2**20, 1),
            "search_p50_ms": round(search[0], 2),
            "search_p95_ms": round(search[1], 2),
            "other_p50_ms": round(other[0], 2),
            "other_p95_ms": round(other[1], 2),
            "retrieval_share": round(self.retrieval_share(), 4),
            "start_s": None if self.start_s is None else round(self.start_s, 2),
            "first_turn_ms": None if self.first_turn_ms is None else round(self.first_turn_ms, 1),
            "stages": {
                stage: dict(
                    zip(
                        ("p50", "p95"),
                        map(lambda v: round(v, 2), self.latency(True, stage)),
                        strict=True,
                    )
                )
                for stage in STAGES
            },
        }


class AssistantServer(ServerProcess):
    """``cartagent serve`` with its local sandbox, on ports, databases and keys of its own."""

    name = "cartagent serve"

    def __init__(self, model: str, folder: Path, *, catalog: str | None = None) -> None:
        super().__init__(startup_timeout=180.0)
        self.model = model
        self.folder = folder
        self.catalog = catalog
        self.sandbox_port = free_port()
        self.shopper_key = "bench-shopper-" + os.urandom(8).hex()
        self.merchant_key = "bench-merchant-" + os.urandom(8).hex()
        self.keys_file = folder / "keys.toml"
        self.keys_file.write_text(
            f'[[keys]]\nkey = "{self.shopper_key}"\nname = "bench-shopper"\nrole = "shopper"\n\n'
            f'[[keys]]\nkey = "{self.merchant_key}"\nname = "bench-merchant"\nrole = "merchant"\n'
        )

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", "cartagent", "serve", "--host", self.host,
            "--port", str(self.port), "--model", self.model,
            "--db", f"sqlite:///{self.folder / 'chat.db'}", "--keys", str(self.keys_file),
        ]  # fmt: skip
        if self.catalog:
            command += ["--catalog", self.catalog]
        return command

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARTAGENT_PAYPAL")}
        env.update(
            {
                "CARTAGENT_SANDBOX_PORT": str(self.sandbox_port),
                "CARTAGENT_SANDBOX_DB": f"sqlite:///{self.folder / 'sandbox.db'}",
                "XDG_DATA_HOME": str(self.folder / "data"),
                "HF_HUB_OFFLINE": "1",
            }
        )
        return env

    def probe(self) -> None:
        httpx.get(f"{self.base_url}/api/health", timeout=2).raise_for_status()

    def peak_rss_bytes(self) -> int | None:
        """The server's peak resident memory (Linux ``VmHWM``), or ``None`` where unknown."""
        if self.proc is None:
            return None
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return None


async def _play(
    client: httpx.AsyncClient,
    server: AssistantServer,
    conversation: Conversation,
    records: list[TurnRecord],
) -> None:
    key = server.merchant_key if conversation.merchant else server.shopper_key
    headers = {"Authorization": f"Bearer {key}"}
    created = await client.post("/api/sessions", headers=headers)
    created.raise_for_status()
    session = created.json()["id"]
    approve_url: str | None = None
    for text in conversation.turns:
        if text == APPROVE:
            if approve_url is None:
                raise RuntimeError(f"{conversation.name}: nothing to approve")
            approved = await client.post(approve_url, data={}, follow_redirects=False)
            if approved.status_code >= 400:
                raise RuntimeError(f"approving {approve_url} failed: {approved.status_code}")
            continue
        start = time.perf_counter()
        response = await client.post(
            f"/api/sessions/{session}/messages", json={"text": text}, headers=headers
        )
        client_ms = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            records.append(
                TurnRecord(
                    conversation.name, text, None, {}, client_ms, False, error=response.text[:200]
                )
            )
            continue
        reply = response.json()
        order = (reply.get("data") or {}).get("order") or {}
        approve_url = order.get("approve_url") or approve_url
        timings = {k: float(v) for k, v in reply["timings"].items()}
        search = reply["domain"] == "discovery" and timings.get("retrieve", 0.0) > 0
        answer = str(reply["text"])[:160]
        records.append(
            TurnRecord(conversation.name, text, reply["domain"], timings, client_ms, search, answer)
        )


async def _run(
    server: AssistantServer, script: Sequence[Conversation], concurrency: int, rounds: int
) -> tuple[list[TurnRecord], float]:
    queue: asyncio.Queue[Conversation] = asyncio.Queue()
    for _ in range(rounds):
        for conversation in script:
            queue.put_nowait(conversation)
    records: list[TurnRecord] = []
    limits = httpx.Limits(max_connections=concurrency + 2)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=120, limits=limits) as client:

        async def worker() -> None:
            while not queue.empty():
                await _play(client, server, queue.get_nowait(), records)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return records, time.perf_counter() - start


def run_model(
    model: str,
    concurrencies: Sequence[int],
    *,
    script: Sequence[Conversation] = SCRIPT,
    rounds: int = 1,
    catalog: str | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> list[RunResult]:
    """Start ``cartagent serve --model model`` and play the script at each concurrency."""
    results = []
    with tempfile.TemporaryDirectory(prefix="cartagent-bench-assistant-") as folder:
        server = AssistantServer(model, Path(folder), catalog=catalog)
        progress(f"{model}: starting cartagent serve")
        launched = time.perf_counter()
        with server:
            start_s = time.perf_counter() - launched
            # One pass, left out of the figures but for its first turn, warms the models, the
            # indexes and the sandbox's store.
            warm, _ = asyncio.run(_run(server, script[:1], 1, 1))
            first_turn_ms = warm[0].client_ms if warm else None
            for concurrency in concurrencies:
                progress(f"{model}: {concurrency} session(s) at a time")
                records, wall = asyncio.run(_run(server, script, concurrency, rounds))
                results.append(RunResult(model, concurrency, records, wall))
            peak = server.peak_rss_bytes()
        for result in results:
            result.peak_rss_bytes = peak
            result.start_s, result.first_turn_ms = start_s, first_turn_ms
    return results


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:,.1f}"  # NaN: nothing measured


def render(results: Sequence[RunResult]) -> str:
    """The Markdown tables: turns, then the search turns' stages."""
    rows = []
    for r in results:
        search, other, client = r.latency(True), r.latency(False), r.client_latency()
        rss = "-" if r.peak_rss_bytes is None else f"{r.peak_rss_bytes / 2**20:,.0f} MB"
        rows.append(
            [
                r.model,
                r.concurrency,
                len(r.turns),
                f"{_ms(search[0])} / {_ms(search[1])}",
                f"{_ms(other[0])} / {_ms(other[1])}",
                f"{_ms(client[0])} / {_ms(client[1])}",
                f"{r.turns_per_s:.1f}",
                f"{r.retrieval_share():.0%}",
                rss,
                len(r.errors()),
                "-" if r.start_s is None else f"{r.start_s:.1f}",
                "-" if r.first_turn_ms is None else _ms(r.first_turn_ms),
            ]
        )
    turns = table(
        [
            "model", "sessions", "turns", "search turn p50 / p95 ms", "other turn p50 / p95 ms",
            "HTTP p50 / p95 ms", "turns/s", "retrieval share", "peak RSS", "errors",
            "start s", "first turn ms",
        ],
        rows,
    )  # fmt: skip
    stage_rows = [
        [r.model, r.concurrency, *(" / ".join(map(_ms, r.latency(True, s))) for s in STAGES)]
        for r in results
    ]
    stages = table(["model", "sessions", *(f"{s} p50 / p95" for s in STAGES)], stage_rows)
    return f"{turns}\n\nSearch turns, per stage (ms):\n\n{stages}"
