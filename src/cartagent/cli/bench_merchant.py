"""``cartagent bench merchant``: ACP checkouts per second against a real `cartagent merchant`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click
import orjson

from .bench_database import announce_recreated

BACKENDS = ("sqlite", "postgresql")


def _counts(clients: str) -> list[int]:
    try:
        counts = [int(c) for c in clients.split(",") if c.strip()]
    except ValueError:
        raise click.BadParameter("give whole numbers, e.g. 1,8", param_hint="--clients") from None
    if not counts or any(c < 1 or c > 256 for c in counts):
        raise click.BadParameter("each must be from 1 to 256", param_hint="--clients")
    return counts


def _backends(backend: str) -> list[str]:
    chosen = list(dict.fromkeys(b.strip() for b in backend.split(",") if b.strip()))
    unknown = [b for b in chosen if b not in BACKENDS]
    if unknown or not chosen:
        raise click.BadParameter(
            f"unknown: {', '.join(unknown) or '(none)'}; choose from {', '.join(BACKENDS)}",
            param_hint="--backend",
        )
    return chosen


@click.command("merchant")
@click.option(
    "--backend",
    default="sqlite",
    show_default=True,
    help="Comma-separated databases to measure: sqlite (a fresh file), postgresql (--postgres).",
)
@click.option(
    "--postgres",
    "postgres_url",
    default="postgresql://postgres@127.0.0.1:5432/cartagent_bench_merchant",
    show_default=True,
    help="PostgreSQL database for --backend postgresql: dropped and created afresh, so its name "
    "must start with cartagent_bench.",
)
@click.option(
    "--clients",
    default="1,8",
    show_default=True,
    help="Comma-separated concurrent client counts.",
)
@click.option("--duration", default=10.0, show_default=True, help="Seconds of each run.")
@click.option("--warmup", default=2.0, show_default=True, help="Unmeasured seconds first.")
@click.option("--max-flows", default=20_000, show_default=True, help="Cap of flows per run.")
@click.option("--catalog", "catalog_path", default=None, help="The store; default: tau-bench.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 16),
    help="cartagent merchant --workers (server processes).",
)
@click.option(
    "--sandbox/--no-sandbox",
    "compare",
    default=True,
    show_default=True,
    help="Also measure `bench sandbox`'s PayPal flow (one worker) on the same backends.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every figure to this JSON file.",
)
def merchant_bench(
    backend: str,
    postgres_url: str,
    clients: str,
    duration: float,
    warmup: float,
    max_flows: int,
    catalog_path: str | None,
    workers: int,
    compare: bool,
    json_path: Path | None,
) -> None:
    """create → update → complete ACP checkouts over HTTP on 127.0.0.1, paid on the sandbox.

    With --backend postgresql the runs start by dropping and creating the --postgres database
    (said on stderr first); it must be one the bench names, cartagent_bench or cartagent_bench_*.
    """
    from ..bench import merchant as bench
    from ..bench import sandbox as paypal
    from .search import locate_catalog

    counts = _counts(clients)
    backends = _backends(backend)
    if not 0 < duration <= 600:
        raise click.BadParameter("from 0 to 600 seconds", param_hint="--duration")
    if not 0 < warmup <= 60:
        raise click.BadParameter("from 0 to 60 seconds", param_hint="--warmup")
    if max_flows < 1:
        raise click.BadParameter("at least 1", param_hint="--max-flows")
    catalog = locate_catalog(catalog_path)
    if "postgresql" in backends:
        announce_recreated(postgres_url, skip="leave postgresql out of --backend")

    def progress(line: str) -> None:
        click.echo(line, err=True)

    results: list[bench.Result] = []
    compared: list[paypal.Result] = []
    with tempfile.TemporaryDirectory(prefix="cartagent-bench-merchant-") as tmp:
        for name in backends:
            folder = Path(tmp) / name
            folder.mkdir()
            if name == "sqlite":
                url = f"sqlite:///{folder / 'merchant.db'}"
            else:
                url = postgres_url
                paypal.fresh_postgres_database(url)
            click.echo(f"{name}: {len(counts)} runs of {duration:g}s ...", err=True)
            try:
                results += bench.run_backend(
                    name,
                    url,
                    folder,
                    counts,
                    duration,
                    catalog=catalog,
                    max_flows=max_flows,
                    warmup=warmup,
                    workers=workers,
                    progress=progress,
                )
            except RuntimeError as error:
                raise click.ClickException(f"{name}: {error}") from None
            if compare:
                click.echo(f"{name}: sandbox PayPal flow, {len(counts)} runs ...", err=True)
                if name == "sqlite":
                    url = f"sqlite:///{folder / 'paypal.db'}"
                else:
                    paypal.fresh_postgres_database(url)
                compared += paypal.run_backend(
                    name, url, counts, duration, max_flows, workers=1, warmup=warmup
                )

    click.echo(bench.render(results))
    for line in bench.error_lines(results):
        click.echo(line)
    for line in bench.ceiling_lines(results, os.cpu_count() or 1):
        click.echo(line)
    click.echo(bench.target_line(results))
    if compared:
        click.echo(
            "\nFor comparison, `bench sandbox`'s PayPal flow (create order → approve → capture) "
            "on one sandbox worker:"
        )
        click.echo(paypal.render(compared))
    if json_path is not None:
        payload: dict[str, Any] = {
            "target": {
                "backend": bench.TARGET.backend,
                "clients": bench.TARGET.clients,
                "flows_per_s": bench.TARGET.flows_per_s,
                "p99_ms": bench.TARGET.p99_ms,
            },
            "duration_s": duration,
            "runs": [r.to_json() for r in results],
            "sandbox_paypal_flow": [r.to_json() for r in compared],
        }
        json_path.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
        click.echo(f"figures written to {json_path}", err=True)
