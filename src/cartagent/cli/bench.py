"""``cartagent bench``: benchmarks that print their figures."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from .bench_mcp import mcp_bench


@click.group()
def bench() -> None:
    """Measure cartagent's components on this machine."""


@bench.command("sandbox")
@click.option(
    "--sqlite/--no-sqlite",
    default=True,
    show_default=True,
    help="Measure a fresh SQLite file database.",
)
@click.option(
    "--postgres",
    "postgres_url",
    default="postgresql://postgres@127.0.0.1:5432/test",
    show_default=True,
    help="PostgreSQL URL to measure; '' to skip.",
)
@click.option(
    "--clients",
    default="1,8,32",
    show_default=True,
    help="Comma-separated concurrent client counts.",
)
@click.option("--seconds", default=5.0, show_default=True, help="Duration of each run.")
@click.option("--max-flows", default=20_000, show_default=True, help="Cap per run.")
@click.option("--workers", default=1, show_default=True, help="Server worker processes.")
def sandbox_bench(
    sqlite: bool, postgres_url: str, clients: str, seconds: float, max_flows: int, workers: int
) -> None:
    """create-order → approve → capture flows over HTTP on 127.0.0.1."""
    from ..bench.sandbox import render, run_backend

    counts = [int(c) for c in clients.split(",") if c.strip()]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if sqlite:
            click.echo(f"sqlite: {len(counts)} runs of {seconds:g}s ...", err=True)
            url = f"sqlite:///{Path(tmp) / 'bench.db'}"
            results += run_backend("sqlite", url, counts, seconds, max_flows, workers)
        if postgres_url:
            click.echo(f"postgresql: {len(counts)} runs of {seconds:g}s ...", err=True)
            results += run_backend("postgresql", postgres_url, counts, seconds, max_flows, workers)
    click.echo(render(results))


bench.add_command(mcp_bench)
