"""``cartagent eval``: quality measures that print their figures."""

from __future__ import annotations

from pathlib import Path

import click

from ..bench.report import table

_WEBSHOP = Path("shared") / "data" / "webshop" / "goal_query_map.dev.json"


def _locate_webshop(given: str | None) -> Path | None:
    if given:
        return Path(given)
    here = Path(__file__).resolve()
    for root in (Path.cwd(), Path.cwd().parent, *here.parents):
        candidate = root / _WEBSHOP
        if candidate.is_file():
            return candidate
    return None


@click.group("eval")
def evaluate() -> None:
    """Measure cartagent's quality on labelled data."""


@evaluate.command("understanding")
@click.option("--model", type=click.Choice(["rules"]), default="rules", show_default=True)
@click.option("--set", "set_path", default=None, help="Labelled JSONL (default: the packaged set).")
@click.option("--webshop", default=None, help="WebShop goal_query_map JSON (default: ../shared).")
@click.option("--limit", type=int, default=None, help="Only the first N WebShop instructions.")
def understanding(model: str, set_path: str | None, webshop: str | None, limit: int | None) -> None:
    """Query understanding: the labelled set, and agreement with real shoppers' queries."""
    from ..evals.understanding import load_cases, score_set, webshop_agreement
    from ..retrieval.rules import parse

    report = score_set(parse, load_cases(Path(set_path) if set_path else None))
    click.echo(f"labelled set, model {model}")
    click.echo(
        table(
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
    )
    path = _locate_webshop(webshop)
    if path is None:
        click.echo("WebShop data not found: pass --webshop PATH", err=True)
        return
    agreement = webshop_agreement(parse, path, limit=limit)
    click.echo(f"\nagreement with human WebShop queries ({path.name})")
    click.echo(
        table(
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
    )
