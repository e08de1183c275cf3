"""``cartagent bench``: benchmarks that print their figures."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click

from .bench_assistant import assistant_bench
from .bench_database import announce_recreated
from .bench_mcp import mcp_bench
from .bench_merchant import merchant_bench
from .bench_search import search_bench
from .bench_slm import slm_bench
from .sandbox import DB_CALLS_CHOICE


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
    default="postgresql://postgres@127.0.0.1:5432/cartagent_bench",
    show_default=True,
    help="PostgreSQL database to measure: dropped and created afresh, so its name must start "
    "with cartagent_bench; '' to skip.",
)
@click.option(
    "--clients",
    default="1,8,32",
    show_default=True,
    help="Comma-separated concurrent client counts.",
)
@click.option("--seconds", default=5.0, show_default=True, help="Duration of each run.")
@click.option("--max-flows", default=20_000, show_default=True, help="Cap per run.")
@click.option(
    "--workers",
    default=min(os.cpu_count() or 1, 4),
    show_default=True,
    help="Server worker processes (default: the CPU count, at most 4).",
)
@click.option(
    "--db-calls",
    type=DB_CALLS_CHOICE,
    default="auto",
    show_default=True,
    help="cartagent sandbox --db-calls: requests' database calls on the event loop or in threads.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every figure (and the CPU per flow of each role) to this JSON file.",
)
def sandbox_bench(
    sqlite: bool,
    postgres_url: str,
    clients: str,
    seconds: float,
    max_flows: int,
    workers: int,
    db_calls: str,
    json_path: Path | None,
) -> None:
    """create-order → approve → capture flows over HTTP on 127.0.0.1.

    The PostgreSQL runs start by dropping and creating the --postgres database (said on stderr
    first); it must be one the bench names, cartagent_bench or cartagent_bench_*.
    """
    from ..bench.sandbox import ceiling_lines, fresh_postgres_database, render, run_backend

    counts = [int(c) for c in clients.split(",") if c.strip()]
    if postgres_url:
        announce_recreated(postgres_url, skip="--postgres ''")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if sqlite:
            click.echo(f"sqlite: {len(counts)} runs of {seconds:g}s ...", err=True)
            url = f"sqlite:///{Path(tmp) / 'bench.db'}"
            results += run_backend(
                "sqlite", url, counts, seconds, max_flows, workers, db_calls=db_calls
            )
        if postgres_url:
            click.echo(f"postgresql: {len(counts)} runs of {seconds:g}s ...", err=True)
            fresh_postgres_database(postgres_url)
            results += run_backend(
                "postgresql", postgres_url, counts, seconds, max_flows, workers, db_calls=db_calls
            )
    click.echo(render(results))
    for line in ceiling_lines(results, os.cpu_count() or 1):
        click.echo(line)
    if json_path is not None:
        figures = {
            "seconds": seconds,
            "workers": workers,
            "db_calls": db_calls,
            "runs": [r.to_json() for r in results],
        }
        json_path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        click.echo(f"figures written to {json_path}", err=True)


@bench.command("imports")
@click.option("--runs", default=10, show_default=True, help="Fresh interpreters per statement.")
@click.argument("statements", nargs=-1)
def imports_bench(runs: int, statements: tuple[str, ...]) -> None:
    """What importing parts of cartagent costs a fresh process (default: the toolkit, the
    PayPal client, the shopping clients, the merchant server; or the STATEMENTS given)."""
    from ..bench.imports import STATEMENTS, measure, report

    chosen = statements or STATEMENTS
    figures = []
    for done, statement in enumerate(chosen, 1):
        click.echo(f"[{done}/{len(chosen)}] {statement}", err=True)
        figures.append(measure(statement, runs))
    click.echo(report(figures))


bench.add_command(mcp_bench)
bench.add_command(assistant_bench)
bench.add_command(search_bench)
bench.add_command(slm_bench)
bench.add_command(merchant_bench)
