"""``cartagent bench retrieval-slm``: base vs tuned understanding models, side by side."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
import orjson

from ..data import webshop_dev
from .search import load_catalog, locate_catalog


@click.command("retrieval-slm")
@click.option(
    "--models",
    default="rules,smollm2,tuned",
    show_default=True,
    help="Understanding models by --model name, compared in this order; NAME+cache is a "
    "model with the semantic cache on (e.g. tuned+cache).",
)
@click.option(
    "--test",
    "test_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("tune-data/test.jsonl"),
    show_default=True,
    help="The held-out test split of `cartagent tune data`.",
)
@click.option("--test-limit", type=int, default=200, show_default=True)
@click.option("--webshop-limit", type=int, default=200, show_default=True)
@click.option("--reference", default=None, help="The model the others are compared to.")
@click.option("--no-turns", is_flag=True, help="Skip whole-turn latency through the assistant.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every figure to this JSON file.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also draw quality and latency per model to this PNG (needs matplotlib).",
)
def slm_bench(
    models: str,
    test_path: Path,
    test_limit: int,
    webshop_limit: int,
    reference: str | None,
    no_turns: bool,
    json_path: Path | None,
    plot_path: Path | None,
) -> None:
    """Quality, retrieval-step and whole-turn latency, and CPU cost per understanding model."""
    from ..bench.retrieval_slm import (
        CACHED,
        measure_models,
        plot_slm,
        render_slm,
        with_semantic_cache,
    )
    from ..errors import ConfigurationError
    from ..evals.retrieval import load_retrieval_cases
    from ..evals.understanding import load_cases
    from ..retrieval import UNDERSTANDERS, MiniLMEmbedder
    from ..tuning.dev_eval import cases_from
    from ..tuning.training_data import load_split
    from .embedders import embedder_name, make_embedder
    from .understanders import model_factory

    names = [n.strip() for n in models.split(",") if n.strip()]
    unknown = [
        n for n in names if n.removesuffix(CACHED) not in UNDERSTANDERS or n == "rules" + CACHED
    ]
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(unknown)}", param_hint="--models")
    try:
        test = load_split(test_path)
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--test") from None
    router: Any = None
    if not no_turns:
        from ..assistant import EmbeddingRouter

        router = EmbeddingRouter(MiniLMEmbedder())
        router.warm_up()

    dense_embedder = embedder_name(None)  # what search uses: CARTAGENT_EMBEDDER or the default
    click.echo(f"(hybrid search embeds with {dense_embedder})", err=True)

    def echo(result: Any) -> None:
        click.echo(f"{result.model}: measured", err=True)

    embedder = make_embedder(dense_embedder, threads=1)  # also the semantic caches'
    factories = {
        n: with_semantic_cache(model_factory(n.removesuffix(CACHED)), embedder)
        if n.endswith(CACHED)
        else model_factory(n)
        for n in names
    }
    try:
        results = measure_models(
            factories,
            on_result=echo,
            products=load_catalog(locate_catalog(None)),
            embedder=embedder,
            retrieval_cases=load_retrieval_cases(None),
            test_cases=cases_from(test.examples[:test_limit]),
            labelled_cases=load_cases(None),
            webshop=webshop_dev(),
            webshop_limit=webshop_limit,
            router=router,
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    click.echo(render_slm(results, reference or names[0]))
    if json_path is not None:
        json_path.write_bytes(
            orjson.dumps([asdict(r) for r in results], option=orjson.OPT_INDENT_2)
        )
    if plot_path is not None:
        click.echo(f"plot: {plot_slm(results, plot_path)}", err=True)
