"""``cartagent bench search``: index build cost and query latency over synthetic catalogs."""

from __future__ import annotations

from pathlib import Path

import click
import orjson


def _sizes(raw: str) -> list[int]:
    try:
        sizes = [int(s.replace("_", "")) for s in raw.split(",") if s.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"not a comma-separated list of integers: {raw!r}") from exc
    if not sizes or any(s <= 0 for s in sizes):
        raise click.BadParameter("give one or more positive catalog sizes")
    return sizes


@click.command("search")
@click.option(
    "--sizes",
    default="10000,100000",
    show_default=True,
    help="Comma-separated catalog sizes (1000000 is opt-in: it takes minutes).",
)
@click.option("--queries", default=200, show_default=True, help="Measured queries per size.")
@click.option("--k", "k", default=10, show_default=True, help="Hits asked for per query.")
@click.option("--warmup", default=20, show_default=True, help="Unmeasured queries first.")
@click.option("--seed", default=0, show_default=True, help="Catalog and query-set seed.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the temporary indexes go (default: the system temp folder).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the figures to this JSON file.",
)
def search_bench(
    sizes: str,
    queries: int,
    k: int,
    warmup: int,
    seed: int,
    workdir: Path | None,
    json_path: Path | None,
) -> None:
    """Synthetic catalog → lexical index build, then lexical search and rule parsing latency."""
    from ..bench.search import render, run

    chosen = _sizes(sizes)
    if queries <= 0:
        raise click.BadParameter("must be positive", param_hint="--queries")
    report = run(
        chosen,
        queries=queries,
        k=k,
        seed=seed,
        warmup=warmup,
        workdir=workdir,
        progress=lambda line: click.echo(line, err=True),
    )
    click.echo(render(report))
    if json_path is not None:
        json_path.write_bytes(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2))
        click.echo(f"figures written to {json_path}", err=True)
