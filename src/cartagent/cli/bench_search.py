"""``cartagent bench search``: index build cost and query latency over synthetic catalogs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from ..bench.build import render_builds
from ..bench.understanding import render_models
from ..errors import ConfigurationError
from .embedders import embedder_name, embedder_option, make_embedder

if TYPE_CHECKING:
    from ..bench.build import BuildResult
    from ..bench.understanding import ModelLatency
    from ..indexing import Engine
    from ..retrieval import Embedder


def _sizes(raw: str) -> list[int]:
    try:
        sizes = [int(s.replace("_", "")) for s in raw.split(",") if s.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"not a comma-separated list of integers: {raw!r}") from exc
    if not sizes or any(s <= 0 for s in sizes):
        raise click.BadParameter("give one or more positive catalog sizes")
    return sizes


def _embedder_pair(name: str) -> tuple[Embedder, Embedder]:
    """The embedder on every core for catalogs, and on one thread (steadier latency) for
    queries; an ONNX embedder does both (one thread a call, a call per core for a catalog)."""
    from ..retrieval import MiniLMEmbedder

    if name == "minilm":
        return MiniLMEmbedder(threads=None, batch_size=128), MiniLMEmbedder(threads=1)
    made = make_embedder(name, threads=1)
    return made, made


def _engine_names(raw: str) -> list[str]:
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in ("local", "spark")]
    if unknown:
        raise click.BadParameter(
            f"unknown {', '.join(unknown)}; known: local, spark", param_hint="--engines"
        )
    return names


def _time_builds(
    names: list[str], sizes: list[int], seed: int, workdir: Path | None
) -> list[BuildResult]:
    from ..bench.build import measure_builds
    from ..indexing import get_engine

    engines: dict[str, Callable[[], Engine]] = {n: partial(get_engine, n) for n in names}
    try:
        return measure_builds(
            sizes,
            engines,
            seed=seed,
            workdir=workdir,
            progress=lambda line: click.echo(line, err=True),
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None


def _model_names(raw: str) -> list[str]:
    from ..retrieval import UNDERSTANDERS

    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in UNDERSTANDERS]
    if unknown:
        known = ", ".join(sorted(UNDERSTANDERS))
        raise click.BadParameter(f"unknown {', '.join(unknown)}; known: {known}")
    return names


def _time_models(names: list[str], requests: int, with_cache: bool) -> list[ModelLatency]:
    from ..bench.understanding import measure_models
    from ..evals.understanding import load_cases
    from .understanders import model_factory

    chosen = [str(case["request"]) for case in load_cases()][:requests]
    embedder = None
    if with_cache and any(n != "rules" for n in names):
        from ..retrieval import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    try:
        return measure_models(
            {n: model_factory(n) for n in names},
            chosen,
            cache_embedder=embedder,
            progress=lambda line: click.echo(line, err=True),
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None


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
    type=click.Path(exists=True, file_okay=False, writable=True, path_type=Path),
    default=None,
    help="An existing folder where the temporary indexes go (default: the system temp folder).",
)
@click.option(
    "--dense/--no-dense",
    default=False,
    show_default=True,
    help="Also build a dense index per size (with --embedder) and time dense and hybrid "
    "search (embedding a catalog takes minutes).",
)
@embedder_option
@click.option(
    "--engines",
    default="local,spark",
    show_default=True,
    help="Index-build engines to compare on one catalog file (local, spark); '' skips them.",
)
@click.option(
    "--build-sizes",
    default="100000",
    show_default=True,
    help="Comma-separated catalog sizes for the engine comparison.",
)
@click.option(
    "--models",
    default="rules,smollm2,gemma3-270m",
    show_default=True,
    help="Query-understanding models to time (`cartagent understand --model` names); "
    "'' skips them.",
)
@click.option(
    "--model-requests",
    default=20,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Labelled requests each model understands.",
)
@click.option(
    "--cache/--no-cache",
    "with_cache",
    default=True,
    show_default=True,
    help="Also time LLM models answering from a semantic cache (MiniLM embeddings).",
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
    dense: bool,
    embedder: str | None,
    engines: str,
    build_sizes: str,
    models: str,
    model_requests: int,
    with_cache: bool,
    json_path: Path | None,
) -> None:
    """Synthetic catalog → index build and search latency; understanding latency per model."""
    from ..bench.search import render, run

    chosen = _sizes(sizes)
    if queries <= 0:
        raise click.BadParameter("must be positive", param_hint="--queries")
    names = _model_names(models)
    engine_names = _engine_names(engines)
    chosen_build_sizes = _sizes(build_sizes) if engine_names else []
    report = run(
        chosen,
        queries=queries,
        k=k,
        seed=seed,
        warmup=warmup,
        workdir=workdir,
        progress=lambda line: click.echo(line, err=True),
        embedders=_embedder_pair(embedder_name(embedder)) if dense else None,
    )
    click.echo(render(report))
    figures = report.to_json()
    if dense:
        figures["embedder"] = embedder_name(embedder)
        click.echo(f"(dense: {figures['embedder']}; queries embedded uncached)", err=True)
    if engine_names:
        builds = _time_builds(engine_names, chosen_build_sizes, seed, workdir)
        click.echo("\nIndex build by engine (JSON Lines file, lexical index, whole job)")
        click.echo(render_builds(builds))
        figures["builds"] = [{**asdict(b), "products_per_s": b.products_per_s} for b in builds]
    if names:
        latencies = _time_models(names, model_requests, with_cache)
        click.echo(f"\nUnderstanding latency per model ({model_requests} labelled requests)")
        click.echo(render_models(latencies))
        figures["models"] = [asdict(r) for r in latencies]
    if json_path is not None:
        json_path.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
        click.echo(f"figures written to {json_path}", err=True)
