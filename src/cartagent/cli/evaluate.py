"""``cartagent eval``: quality measures that print their figures."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..bench.report import table
from ..errors import ConfigurationError
from .embedders import embedder_name, embedder_option, make_embedder
from .search import load_catalog, locate_catalog
from .understanders import model_option, understander_for

if TYPE_CHECKING:
    from ..evals.discovery import Catalog, Conversation, Figures, TurnResult
    from ..evals.retrieval import SystemReport
    from ..evals.understanding import AgreementReport, UnderstandingReport
    from ..retrieval import Understander

_webshop_option = click.option(
    "--webshop",
    default=None,
    help="WebShop goal_query_map JSON (default: the WebShop instructions cartagent ships).",
)
_existing_file = click.Path(exists=True, dir_okay=False, path_type=Path)
_limit_option = click.option(
    "--limit", type=int, default=None, help="Only the first N WebShop instructions."
)


def _locate_webshop(given: str | None) -> Path:
    """``given`` (which must exist), else the WebShop development set cartagent ships."""
    from ..data import webshop_dev

    if given:
        path = Path(given)
        if not path.is_file():
            raise click.BadParameter(f"{path} is not a file", param_hint="--webshop")
        return path
    return webshop_dev()


@click.group("eval")
def evaluate() -> None:
    """Measure cartagent's quality on labelled data."""


def _understanding_table(report: UnderstandingReport) -> str:
    return table(
        ["cases", "valid JSON", "exact", "precision", "recall", "F1", "price exact"],
        [
            [
                report.cases,
                f"{report.valid_json}/{report.cases}",
                f"{report.exact}/{report.cases}",
                f"{report.precision:.3f}",
                f"{report.recall:.3f}",
                f"{report.f1:.3f}",
                f"{report.price_exact}/{report.price_cases}",
            ]
        ],
    )


def _agreement_table(agreement: AgreementReport) -> str:
    return table(
        ["instructions", "token F1", "precision", "recall"],
        [
            [
                agreement.instructions,
                f"{agreement.mean_f1:.3f}",
                f"{agreement.mean_precision:.3f}",
                f"{agreement.mean_recall:.3f}",
            ]
        ],
    )


def _understanding_sections(
    understand: Understander,
    model: str,
    set_path: Path | None,
    webshop: str | None,
    limit: int | None,
) -> dict[str, Any]:
    """Print the labelled-set and WebShop tables; return their figures."""
    from ..evals.understanding import load_cases, score_set, webshop_agreement

    report = score_set(understand, load_cases(set_path))
    click.echo(f"labelled set, model {model}")
    click.echo(_understanding_table(report))
    figures: dict[str, Any] = {
        "understanding": {
            "cases": report.cases,
            "valid_json": report.valid_json,
            "exact": report.exact,
            "precision": round(report.precision, 4),
            "recall": round(report.recall, 4),
            "f1": round(report.f1, 4),
            "price_exact": report.price_exact,
            "price_cases": report.price_cases,
        },
        "webshop": None,
    }
    path = _locate_webshop(webshop)
    agreement = webshop_agreement(understand, path, limit=limit)
    click.echo(f"\nagreement with human WebShop queries ({path.name})")
    click.echo(_agreement_table(agreement))
    figures["webshop"] = {
        "instructions": agreement.instructions,
        "token_f1": round(agreement.mean_f1, 4),
        "precision": round(agreement.mean_precision, 4),
        "recall": round(agreement.mean_recall, 4),
    }
    return figures


@evaluate.command("understanding")
@model_option
@click.option(
    "--set",
    "set_path",
    type=_existing_file,
    default=None,
    help="Labelled JSONL (default: the packaged set).",
)
@_webshop_option
@_limit_option
def understanding(
    model: str, set_path: Path | None, webshop: str | None, limit: int | None
) -> None:
    """Query understanding: the labelled set, and agreement with real shoppers' queries."""
    understand = understander_for(model)
    _understanding_sections(understand, model, set_path, webshop, limit)


def _retrieval_table(reports: list[SystemReport]) -> str:
    k = reports[0].k if reports else 10
    return table(
        ["system", "queries", f"recall@{k}", f"nDCG@{k}", "MRR", "zero-hit", "ms/query"],
        [
            [
                r.name,
                r.queries,
                f"{r.recall:.3f}",
                f"{r.ndcg:.3f}",
                f"{r.mrr:.3f}",
                r.zero_hits,
                f"{r.mean_ms:.2f}",
            ]
            for r in reports
        ],
    )


def _group_table(reports: list[SystemReport]) -> str:
    groups = reports[0].groups() if reports else []
    rows = []
    for group in groups:
        parts = [r.only(group) for r in reports]
        rows.append([group, parts[0].queries, *(f"{p.ndcg:.3f} ({p.recall:.3f})" for p in parts)])
    return table(["group", "queries", *(r.name for r in reports)], rows)


def _retrieval_json(reports: list[SystemReport]) -> dict[str, Any]:
    return {
        "systems": {
            r.name: {**r.summary(), "groups": {g: r.only(g).summary() for g in r.groups()}}
            for r in reports
        },
        "queries": [
            {
                "request": outcomes[0].request,
                "group": outcomes[0].group,
                "relevant": outcomes[0].relevant,
                "results": {
                    r.name: {
                        "recall": round(o.recall, 4),
                        "ndcg": round(o.ndcg, 4),
                        "rr": round(o.rr, 4),
                        "ms": round(o.ms, 3),
                        "hits": [
                            {"title": title, "variant": variant, "grade": grade}
                            | ({} if rank < o.matches else {"near_miss": True})
                            for rank, ((title, variant), grade) in enumerate(
                                zip(o.hits, o.grades, strict=True)
                            )
                        ],
                    }
                    for r, o in zip(reports, outcomes, strict=True)
                },
            }
            for outcomes in zip(*(r.outcomes for r in reports), strict=True)
        ],
    }


@evaluate.command("retrieval")
@model_option
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="A products file or a tau-bench retail folder (default: the tau-bench store).",
)
@click.option(
    "--set",
    "set_path",
    type=_existing_file,
    default=None,
    help="Labelled retrieval JSONL for that catalog (default: the packaged tau-bench set).",
)
@_webshop_option
@_limit_option
@click.option("--no-dense", is_flag=True, help="Lexical systems only (no MiniLM).")
@embedder_option
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every figure, and each query's hits, to this JSON file.",
)
def retrieval(
    model: str,
    catalog_path: str | None,
    set_path: Path | None,
    webshop: str | None,
    limit: int | None,
    no_dense: bool,
    embedder: str | None,
    json_path: Path | None,
) -> None:
    """Understanding, WebShop agreement, then retrieval quality on labelled requests.

    Retrieval compares lexical, dense and hybrid search on the raw words with hybrid search on
    the --model's structured query (lexical and lexical+understanding with --no-dense): recall,
    nDCG and MRR at 10 of what a shopper is shown (the matches, then the near misses a search
    adds when fewer than 10 match), queries where nothing matched and mean latency, overall and
    per request group.
    """
    from ..evals.retrieval import evaluate_retrieval, judge, load_retrieval_cases, standard_systems

    catalog = locate_catalog(catalog_path)
    products = load_catalog(catalog)
    hint = "" if set_path else " (the packaged set labels the tau-bench store: pass --set)"
    try:
        cases = load_retrieval_cases(set_path)
        judge(cases, products)  # fail before any work when a label does not fit the catalog
    except ConfigurationError as error:
        raise click.ClickException(f"{error}{hint}") from None
    chosen = None
    if not no_dense:
        from ..retrieval import minilm_model_dir

        try:
            minilm_model_dir()
        except FileNotFoundError as error:
            raise click.ClickException(f"{error} (or pass --no-dense)") from None
        chosen = make_embedder(embedder_name(embedder), threads=1)

    understand = understander_for(model)
    figures = _understanding_sections(understand, model, None, webshop, limit)
    systems = standard_systems(products, understand, embedder=chosen)
    reports = evaluate_retrieval(systems, cases, products)

    click.echo(f"\nretrieval on {len(cases)} labelled requests, {len(products)} products")
    click.echo(_retrieval_table(reports))
    click.echo("\nnDCG@10 (recall@10) by request group")
    click.echo(_group_table(reports))
    if json_path is not None:
        figures = {
            "model": model,
            "embedder": None if chosen is None else embedder_name(embedder),
            "catalog": str(catalog),
            "set": str(set_path) if set_path else "retrieval_tau.jsonl",
            "k": reports[0].k if reports else 10,
            **figures,
            "retrieval": _retrieval_json(reports),
        }
        json_path.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
        click.echo(f"figures written to {json_path}", err=True)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "-"


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:.0f}"


def _discovery_table(figures: dict[str, Figures]) -> str:
    return table(
        [
            "split",
            "conversations",
            "turns right",
            "follow-ups right",
            "language right",
            "match precision",
            "honest when none",
            "search p50 ms",
            "search p95 ms",
            "max turn ms",
        ],
        [
            [
                split,
                _share(f.conversations_right, f.conversations),
                _share(f.turns_right, f.turns),
                _share(f.follow_ups_right, f.follow_ups),
                _share(f.language_right, f.turns),
                _share(f.claimed_in_gold, f.claimed),
                _share(f.honest_none, f.none_turns),
                _ms(f.search_p50),
                _ms(f.search_p95),
                _ms(f.max_ms),
            ]
            for split, f in figures.items()
        ],
    )


def _pattern_table(figures: dict[str, Figures]) -> str:
    from ..evals.discovery import PATTERNS

    used = [p for p in PATTERNS if p in figures["all"].patterns]
    return table(
        ["pattern", *figures],
        [[p, *(_share(*f.patterns.get(p, (0, 0))) for f in figures.values())] for p in used],
    )


def _play(model: str, conversations: list[Conversation], catalog: Catalog) -> list[TurnResult]:
    """Every conversation played on the assistant ``cartagent chat`` builds, without PayPal
    and on an in-memory conversation store, a progress bar on stderr."""
    from tqdm import tqdm

    from ..evals.discovery import play_all
    from .assistant_setup import AssistantOptions, build_assistant

    options = AssistantOptions(model, "sqlite://", None, None, None, None)
    assistant = build_assistant(options, None)
    turns = sum(len(c.turns) for c in conversations)
    try:
        with tqdm(total=turns, desc="turns", unit="turn", file=sys.stderr, disable=None) as bar:
            return asyncio.run(play_all(assistant, conversations, catalog, bar.update))
    finally:
        assistant.store.close()


@evaluate.command("discovery")
@click.option(
    "--set",
    "set_path",
    type=_existing_file,
    default=None,
    help="Conversations JSONL (default: the packaged discovery set).",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "test", "all"]),
    default="all",
    show_default=True,
    help="Which conversations to play.",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N conversations."
)
@model_option
@click.option(
    "--failures",
    "shown",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many failed turns to print (dev ones first).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every figure, and each turn as played and judged, to this JSON file.",
)
def discovery(
    set_path: Path | None,
    split: str,
    limit: int | None,
    model: str,
    shown: int,
    json_path: Path | None,
) -> None:
    """Shopper conversations with the demo store, played turn by turn in fresh sessions of the
    assistant and judged against the catalog: claimed-match precision, honesty when nothing
    fits, turn, follow-up and language success, success per pattern, latency, and the failures.
    """
    from ..evals.discovery import (
        Catalog,
        check_against_catalog,
        describe_failure,
        figures_by_split,
        load_conversations,
        select,
    )

    catalog = Catalog.of(load_catalog(locate_catalog(None)))
    try:
        conversations = select(load_conversations(set_path), split, limit)
        warnings = check_against_catalog(conversations, catalog)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    results = _play(model, conversations, catalog)
    figures = figures_by_split(results)

    click.echo(f"discovery set, {len(conversations)} conversations, model {model}")
    click.echo(_discovery_table(figures))
    click.echo("\nturns right by pattern")
    click.echo(_pattern_table(figures))
    # Dev failures first: the README asks that test failures not be studied while building.
    failed = sorted((r for r in results if not r.right), key=lambda r: r.split != "dev")
    if shown and failed:
        click.echo(f"\nfailures ({min(shown, len(failed))} of {len(failed)})")
        click.echo("\n\n".join(describe_failure(r) for r in failed[:shown]))
    if json_path is not None:
        report = {
            "model": model,
            "set": str(set_path) if set_path else "conversations.jsonl",
            "split": split,
            "figures": {name: f.to_json() for name, f in figures.items()},
            "turns": [r.to_json() for r in results],
        }
        json_path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
        click.echo(f"figures written to {json_path}", err=True)
