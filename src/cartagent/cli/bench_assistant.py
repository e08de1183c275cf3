"""``cartagent bench assistant``: the assistant over its HTTP API, per understanding model."""

from __future__ import annotations

from pathlib import Path

import click
import orjson


@click.command("assistant")
@click.option(
    "--models",
    default="rules,smollm2,tuned",
    show_default=True,
    help="Understanding models by --model name; one `cartagent serve` each.",
)
@click.option(
    "--sessions",
    default="1,8",
    show_default=True,
    help="Comma-separated numbers of sessions talking at the same time.",
)
@click.option("--rounds", default=1, show_default=True, help="Times the script is played per run.")
@click.option("--catalog", "catalog_path", default=None, help="The store; default: tau-bench.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write every figure (and every turn's timings) to this JSON file.",
)
def assistant_bench(
    models: str, sessions: str, rounds: int, catalog_path: str | None, json_path: Path | None
) -> None:
    """Per-stage and whole-turn latency, turns/s and peak RSS of `cartagent serve`."""
    from ..bench.assistant import SCRIPT, render, run_model
    from ..retrieval import UNDERSTANDERS

    names = [n.strip() for n in models.split(",") if n.strip()]
    unknown = [n for n in names if n not in UNDERSTANDERS]
    if unknown or not names:
        raise click.BadParameter(
            f"unknown: {', '.join(unknown) or '(none)'}", param_hint="--models"
        )
    try:
        levels = [int(s) for s in sessions.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter("give whole numbers, e.g. 1,8", param_hint="--sessions") from None
    if not levels or any(level < 1 or level > 64 for level in levels):
        raise click.BadParameter("each must be from 1 to 64", param_hint="--sessions")
    if rounds < 1:
        raise click.BadParameter("at least 1", param_hint="--rounds")
    turns = sum(len([t for t in c.turns if not t.startswith("<")]) for c in SCRIPT) * rounds
    click.echo(f"{turns} turns in {len(SCRIPT) * rounds} sessions per run", err=True)
    results = []
    for name in names:
        try:
            results += run_model(
                name,
                levels,
                rounds=rounds,
                catalog=catalog_path,
                progress=lambda line: click.echo(line, err=True),
            )
        except RuntimeError as error:
            raise click.ClickException(f"{name}: {error}") from None
    click.echo(render(results))
    failed = [t for r in results for t in r.errors()]
    if failed:
        click.echo(f"\n{len(failed)} turn(s) failed, e.g. {failed[0].text!r}: {failed[0].error}")
    if json_path is not None:
        payload = {
            "runs": [r.to_json() for r in results],
            "turns": [
                {"model": r.model, "sessions": r.concurrency, **vars(t)}
                for r in results
                for t in r.turns
            ],
        }
        json_path.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
