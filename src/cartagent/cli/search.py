"""``cartagent search`` and ``cartagent understand``: product search from the terminal.

``cartagent search 'red t-shirt under 50'`` understands the request, searches a catalog (by
default the tau-bench retail store shipped with cartagent) and prints the hits (``--index DIR``
searches a folder ``cartagent catalog build`` wrote instead); ``--json`` prints the understood
query, compact hits and timings as one JSON object. ``cartagent understand 'text'`` prints only
the understood ``SearchQuery``; with no argument it reads one request per line from stdin and
writes one JSON object per line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..errors import ConfigurationError
from ..retrieval import SEARCH_MODES, SearchMode
from .embedders import (
    ROUTER_EMBEDDER,
    embedder_name,
    embedder_option,
    make_embedder,
    model_cache,
)
from .settings import run_settings
from .understanders import model_option, understander_for

if TYPE_CHECKING:
    from ..catalog import Product, RowProblem
    from ..retrieval import Searcher, SearchResult, Understander


def locate_catalog(path: str | None, *, option: str = "--catalog") -> Path:
    """``path`` if given (it must exist), else the tau-bench retail store cartagent ships.

    ``option`` names the parameter that takes a catalog, in error messages.
    """
    from ..catalog.source import locate_catalog as locate

    try:
        return locate(path)
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint=option) from None


def load_catalog(path: Path) -> list[Product]:
    """The products of ``path`` (see :func:`~cartagent.catalog.read_catalog`);
    the rows it rejects are reported on stderr (with their line) and skipped."""
    from ..catalog import read_catalog
    from ..catalog.source import rows_file

    shown = rows_file(path)

    def report(problem: RowProblem) -> None:
        click.echo(f"{shown}:{problem.line}: skipped: {problem.message}", err=True)

    try:
        return read_catalog(path, report)
    except ConfigurationError as error:
        raise click.UsageError(str(error)) from error


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _result_json(result: SearchResult) -> dict[str, Any]:
    from ..retrieval import hit_summary, near_miss_summary

    return {
        "query": result.query.model_dump(mode="json", exclude_defaults=True),
        "hits": [hit_summary(h) for h in result.hits],
        "near_misses": [near_miss_summary(n) for n in result.near_misses],
        "timings": {name: round(ms, 3) for name, ms in result.timings.items()},
    }


def _print_hit(rank: int, summary: dict[str, Any], *, breaks: Sequence[str] = ()) -> None:
    price = f"{summary['price']} {summary['currency']}" if summary["price"] else "no price"
    line = f"{rank:>2}. {summary['title']} [{summary['id']}]  {price}"
    variant = summary.get("variant")
    if variant:
        options = ", ".join(f"{k}={v}" for k, v in variant["options"].items())
        stock = "" if variant["available"] else ", out of stock"
        line += f"  (variant {variant['id']}: {options}{stock})"
    if breaks:
        line += " — " + "; ".join(breaks)
    click.echo(line)
    if summary["matched"]:
        click.echo(f"    matched: {'; '.join(summary['matched'])}")


def _print_result(result: SearchResult) -> None:
    from ..retrieval import hit_summary

    understood = result.query.model_dump(mode="json", exclude_defaults=True)
    click.echo(f"understood: {_dumps(understood)}")
    if not result.hits:
        click.echo("no products match." + (" nearest:" if result.near_misses else ""))
    for rank, hit in enumerate(result.hits, 1):
        _print_hit(rank, hit_summary(hit))
    if result.hits and result.near_misses:
        click.echo("close, but not a match:")
    for rank, near in enumerate(result.near_misses, len(result.hits) + 1):
        summary = hit_summary(near.hit)
        _print_hit(rank, summary, breaks=near.breaks)
    timings = ", ".join(f"{name} {ms:.1f} ms" for name, ms in result.timings.items())
    click.echo(f"({timings})")


@click.command("search")
@click.argument("request")
@click.option("--k", "k", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="A products file (.json/.jsonl/.csv/.parquet) or a tau-bench retail folder; "
    "default: the tau-bench store shipped with cartagent.",
)
@click.option(
    "--index",
    "index_path",
    default=None,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A folder `cartagent catalog build` wrote: search it (hybrid when it is dense) "
    "instead of indexing --catalog in memory.",
)
@click.option(
    "--mode",
    type=click.Choice(SEARCH_MODES),
    default=None,
    help="Retrieval: lexical (BM25), dense (MiniLM vectors) or hybrid (both, fused)  "
    "[default: hybrid; lexical without MiniLM]. The catalog's vectors are cached in the data "
    "folder, keyed by its content: the first run embeds it, later ones open them.",
)
@embedder_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@model_option
def search(
    request: str,
    k: int,
    catalog_path: str | None,
    index_path: Path | None,
    mode: SearchMode | None,
    embedder: str | None,
    as_json: bool,
    model: str,
) -> None:
    """Search the catalog for REQUEST, e.g. cartagent search 'red t-shirt under 50'."""
    understand = understander_for(model)
    if index_path is not None:
        if catalog_path is not None:
            raise click.UsageError("give --index or --catalog, not both")
        if mode is not None or embedder is not None:
            raise click.UsageError(
                "--index searches the way it was built: drop --mode and --embedder"
            )
        searcher = _index_searcher(index_path, understand)
    else:
        products = load_catalog(locate_catalog(catalog_path))
        searcher = default_searcher(products, understand, mode, embedder)
    result = searcher.search(request, k)
    if as_json:
        click.echo(_dumps(_result_json(result)))
    else:
        _print_result(result)


def default_searcher(
    products: Sequence[Product],
    understand: Understander,
    mode: SearchMode | None = None,
    embedder: str | None = None,
) -> Searcher:
    """The searcher over a catalog: ``mode`` (default hybrid, its vectors cached in the data
    folder) with ``embedder`` (default: ``CARTAGENT_EMBEDDER``, else the built-in default);
    without MiniLM installed the default is lexical, with a note on stderr."""
    from ..retrieval import catalog_searcher, minilm_model_dir

    name = embedder_name(embedder)
    try:
        cache = run_settings().data_dir / "cache"
        if mode != "lexical" and name.startswith("minilm"):
            try:
                minilm_model_dir()
            except FileNotFoundError as error:
                raise ConfigurationError(
                    f"{mode or 'hybrid'} search needs MiniLM: {error}"
                ) from None
        return catalog_searcher(
            products,
            understand,
            mode=mode or "hybrid",
            cache=cache,
            embedder=lambda: make_embedder(name, threads=1),
        )
    except ConfigurationError as error:
        if mode is not None:
            raise click.UsageError(str(error)) from None
        click.echo(f"lexical search only: {error}", err=True)
        return catalog_searcher(products, understand, mode="lexical")


def _index_searcher(folder: Path, understand: Understander) -> Searcher:
    from ..retrieval import index_searcher

    try:
        return index_searcher(folder, understand, model_cache=model_cache())
    except ConfigurationError as error:
        raise click.UsageError(f"cannot open --index {folder}: {error}") from error


@click.command("understand")
@click.argument("request", required=False)
@click.option(
    "--context",
    multiple=True,
    help="An earlier request of the conversation, for follow-ups (repeatable, oldest first).",
)
@model_option
@click.option(
    "--cache",
    "with_cache",
    is_flag=True,
    help="LLM models: reuse answers for near-identical requests (MiniLM semantic cache); "
    "its hit rate goes to stderr at the end.",
)
def understand(request: str | None, context: Sequence[str], model: str, with_cache: bool) -> None:
    """Print REQUEST as a structured SearchQuery (JSON).

    Without REQUEST, reads one request per line from stdin and writes one JSON object per line.
    """
    from ..retrieval import ModelUnderstander

    parse = understander_for(model)
    if with_cache and isinstance(parse, ModelUnderstander):
        from ..retrieval import SemanticCache

        cache = SemanticCache(make_embedder(ROUTER_EMBEDDER))
        parse = parse.with_cache(cache)
    requests = [request] if request is not None else (line.rstrip("\n") for line in sys.stdin)
    for text in requests:
        click.echo(parse(text, context=tuple(context)).model_dump_json())
    if isinstance(parse, ModelUnderstander):
        stats = parse.stats
        line = (
            f"understood {stats.calls}: model {stats.model_ok}, repaired {stats.repaired}, "
            f"rules fallback {stats.fallbacks}"
        )
        if parse.cache is not None:
            hits = parse.cache.stats
            line += f"; cache {hits.hits}/{hits.lookups} hits ({hits.hit_rate:.0%})"
        click.echo(line, err=True)
        parse.close()
