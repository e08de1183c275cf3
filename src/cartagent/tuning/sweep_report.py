"""The sweep report: a Markdown table of every trial and PNG plots people would rather look at.

``loss_curves.png``: training loss per step of every trial (pruned ones dashed).
``quality.png``: the objective against LoRA rank and against learning rate, per optimizer.
``latency.png``: dev latency p50 against rank, when the evaluator measured it.
The chosen trial is starred in each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .sweep import SweepResult, TrialResult

__all__ = ["write_report"]

_METRICS = ("f1", "exact", "price_exact", "eval_loss", "p50_ms", "p95_ms", "train_seconds")


def _label(trial: TrialResult) -> str:
    p = trial.params
    return (
        f"#{trial.number} lr={p['learning_rate']:g} {p['optimizer']} {p['schedule']} r={p['rank']}"
    )


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def _table(sweep: SweepResult) -> list[str]:
    shown = [m for m in _METRICS if any(m in t.metrics for t in sweep.trials)]
    head = ["trial", "lr", "optimizer", "schedule", "rank", "state", "final loss", *shown]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ranked = sorted(
        sweep.trials, key=lambda t: (t.objective is None, -(t.objective or 0.0), t.number)
    )
    for t in ranked:
        star = " ★" if sweep.best is not None and t.number == sweep.best.number else ""
        row = [
            f"{t.number}{star}",
            f"{t.params['learning_rate']:g}",
            t.params["optimizer"],
            t.params["schedule"],
            str(t.params["rank"]),
            t.state,
            _cell(t.losses[-1][1] if t.losses else None),
            *(_cell(t.metrics.get(m)) for m in shown),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _star(axes: Any, x: float, y: float) -> None:
    axes.scatter([x], [y], marker="*", s=250, c="gold", edgecolors="black", label="chosen")


def _plots(sweep: SweepResult, folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    figure, axes = plt.subplots(figsize=(8, 5))
    for t in sweep.trials:
        if t.losses:
            steps, losses = zip(*t.losses, strict=True)
            style = "--" if t.state == "pruned" else "-"
            width = 2.5 if sweep.best is not None and t.number == sweep.best.number else 1.0
            axes.plot(steps, losses, style, linewidth=width, label=_label(t))
    axes.set(xlabel="step", ylabel="training loss", title="Training loss per trial")
    axes.set_yscale("log")
    axes.legend(fontsize=6)
    figure.tight_layout()
    figure.savefig(folder / "loss_curves.png", dpi=120)
    plt.close(figure)
    written.append("loss_curves.png")

    done = [t for t in sweep.trials if t.objective is not None]
    if done:
        figure, (by_rank, by_lr) = plt.subplots(1, 2, figsize=(10, 4))
        for optimizer in sorted({t.params["optimizer"] for t in done}):
            mine = [t for t in done if t.params["optimizer"] == optimizer]
            by_rank.scatter(
                [t.params["rank"] for t in mine], [t.objective for t in mine], label=optimizer
            )
            by_lr.scatter(
                [t.params["learning_rate"] for t in mine],
                [t.objective for t in mine],
                label=optimizer,
            )
        if sweep.best is not None and sweep.best.objective is not None:
            _star(by_rank, sweep.best.params["rank"], sweep.best.objective)
            _star(by_lr, sweep.best.params["learning_rate"], sweep.best.objective)
        objective = "dev field F1" if any("f1" in t.metrics for t in done) else "- dev loss"
        by_rank.set(xlabel="LoRA rank", ylabel=objective, title="Quality by rank")
        by_lr.set(
            xlabel="learning rate", ylabel=objective, xscale="log", title="Quality by learning rate"
        )
        ranks = sorted({t.params["rank"] for t in done})
        by_rank.set_xscale("log", base=2)
        by_rank.set_xticks(ranks, [str(r) for r in ranks])
        by_rank.minorticks_off()
        by_rank.legend(fontsize=7)
        figure.tight_layout()
        figure.savefig(folder / "quality.png", dpi=120)
        plt.close(figure)
        written.append("quality.png")

    timed = [t for t in done if "p50_ms" in t.metrics]
    if timed:
        figure, axes = plt.subplots(figsize=(6, 4))
        axes.scatter([t.params["rank"] for t in timed], [t.metrics["p50_ms"] for t in timed])
        if sweep.best is not None and "p50_ms" in sweep.best.metrics:
            _star(axes, sweep.best.params["rank"], sweep.best.metrics["p50_ms"])
        axes.set(xlabel="LoRA rank", ylabel="dev latency p50 (ms)", title="Latency by rank")
        figure.tight_layout()
        figure.savefig(folder / "latency.png", dpi=120)
        plt.close(figure)
        written.append("latency.png")
    return written


def write_report(sweep: SweepResult, folder: Path | None = None) -> Path:
    """Write ``report.md`` and its plots into ``folder`` (default: the sweep's); return it."""
    target = folder or sweep.folder
    target.mkdir(parents=True, exist_ok=True)
    plots = _plots(sweep, target)
    pruned = sum(t.state == "pruned" for t in sweep.trials)
    lines = [
        "# Sweep report",
        "",
        f"{len(sweep.trials)} trials ({pruned} pruned early); tracking: `{sweep.tracking_uri}` "
        f"(`mlflow ui --backend-store-uri {sweep.tracking_uri}`).",
        "",
    ]
    if sweep.best is not None:
        lines += [f"Chosen: trial {_label(sweep.best)}, adapter `{sweep.best.adapter}`.", ""]
    lines += [*_table(sweep), ""]
    lines += [f"![{name}]({name})" for name in plots]
    report = target / "report.md"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report
