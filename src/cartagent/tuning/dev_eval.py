"""Dev metrics of a trained adapter, measured the way it will serve.

The adapter is served as ``--model tuned`` serves it (exported to GGUF and folded into the
packaged base: :func:`~cartagent.tuning.export.served_model`) and asked through the full
understanding pipeline (its prompt style, grammar for JSON, repair, grounding, fallback).
Reported: field F1, exact, price exact, valid JSON, how often the rule parser had to answer
instead, and latency p50/p95 per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..bench.report import percentile
from ..retrieval.prompt import PromptStyle
from ..retrieval.query import SearchQuery
from .export import served_model
from .training_data import Example

__all__ = ["cases_from", "llama_cpp_evaluator"]


def cases_from(examples: Sequence[Example]) -> list[dict[str, Any]]:
    """Examples as labelled cases (``request``, ``context``, ``expected``)."""
    return [
        {
            "request": e.request,
            "context": list(e.context),
            "expected": e.gold.model_dump(mode="json"),
        }
        for e in examples
    ]


def llama_cpp_evaluator(
    cases: Sequence[dict[str, Any]],
    base: str = "smollm2",
    style: PromptStyle = "short",
    *,
    rules_first: bool = False,
) -> Callable[[Path], dict[str, float]]:
    """An evaluator for :func:`~cartagent.tuning.sweep.run_sweep` over ``cases``, asking each
    adapter with the prompt ``style`` it was trained on (behind the rule parser when it is
    served ``rules_first``)."""
    from ..evals.understanding import score_set
    from ..llm.packaged import packaged_model_path
    from ..retrieval.understanding import ModelUnderstander

    packaged_model_path(base)  # a missing base fails now, not after the first trial's training

    def evaluate(adapter: Path) -> dict[str, float]:
        # As `--model tuned` serves it (merged, bounded): the latency is the served one.
        model = served_model(adapter, base, style)
        latencies: list[float] = []
        with ModelUnderstander(model, style=style, rules_first=rules_first) as understander:

            def timed(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
                started = time.perf_counter()
                try:
                    return understander(request, context=context)
                finally:
                    latencies.append((time.perf_counter() - started) * 1000)

            report = score_set(timed, cases)
            stats = understander.stats
        return {
            "f1": report.f1,
            "exact": report.exact / max(report.cases, 1),
            "price_exact": report.price_exact / max(report.price_cases, 1),
            "valid_json": report.valid_json / max(report.cases, 1),
            "fallback_rate": stats.fallbacks / max(stats.calls, 1),
            "p50_ms": percentile(latencies, 50),
            "p95_ms": percentile(latencies, 95),
        }

    return evaluate
