"""Base vs tuned query-understanding models, side by side on the same requests.

For each model (an understander factory by ``--model`` name), in one run on one machine:

- **quality**: valid JSON, field F1, exact and price exact on the held-out test split of
  ``cartagent tune data`` and on the labelled set; token F1 against WebShop shoppers' queries;
  nDCG@10 and MRR of hybrid search + understanding on the labelled retrieval requests;
- **latency**: the retrieval step (understand + retrieve) p50/p95 over those requests, and the
  whole turn (the assistant answering a search turn: route, understand, retrieve, render) p50/p95;
- **cost**: process CPU-seconds per 1,000 retrieval steps (every thread), and output tokens.

A model named with :data:`CACHED` after it (``tuned+cache``) is measured with a semantic cache
(:func:`with_semantic_cache`), fresh at the start of its row: by the timed retrieval requests it
holds the answers to the quality sets asked before them.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .report import percentile, table

if TYPE_CHECKING:
    from ..catalog.product import Product
    from ..evals.retrieval import RetrievalCase
    from ..retrieval import Embedder, Understander

__all__ = [
    "CACHED",
    "SlmResult",
    "measure_slm",
    "plot_slm",
    "render_slm",
    "with_semantic_cache",
]

CACHED = "+cache"
"""The suffix of a model name measured with the semantic cache on."""


def with_semantic_cache(
    make: Callable[[], Understander], embedder: Embedder
) -> Callable[[], Understander]:
    """What builds ``make``'s model understander with a new semantic cache over ``embedder``."""

    def build() -> Understander:
        from ..errors import ConfigurationError
        from ..retrieval import ModelUnderstander, SemanticCache

        understander = make()
        if not isinstance(understander, ModelUnderstander):
            raise ConfigurationError("only a language model's understanding has a semantic cache")
        return understander.with_cache(SemanticCache(embedder))

    return build


@dataclass(frozen=True)
class SlmResult:
    model: str
    test_f1: float
    test_exact: float
    test_price_exact: float
    test_valid: float
    labelled_f1: float
    labelled_exact: float
    labelled_price_exact: float
    webshop_f1: float | None
    ndcg: float
    mrr: float
    step_p50_ms: float
    step_p95_ms: float
    turn_p50_ms: float | None
    turn_p95_ms: float | None
    cpu_s_per_1000: float
    output_tokens_per_request: float
    group_ndcg: dict[str, float] = field(default_factory=dict)
    """nDCG@10 per request group of the labelled retrieval set (paraphrase, typo, hard...)."""


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _whole_turns(
    understand: Understander, products: Sequence[Product], requests: Sequence[str], router: Any
) -> list[float]:
    """Milliseconds per search turn of the assistant, each in a fresh conversation."""
    from ..assistant import Assistant, ConversationStore
    from ..retrieval import LexicalIndex, Searcher

    with tempfile.TemporaryDirectory() as folder:
        store = ConversationStore.open(f"sqlite:///{Path(folder) / 'bench.db'}")
        searcher = Searcher(LexicalIndex.build(products), understand=understand)
        assistant = Assistant(router, store, searcher=searcher)

        async def run() -> list[float]:
            await assistant.turn(assistant.open_session(), requests[0])  # warm-up
            samples = []
            for request in requests:
                session = assistant.open_session()
                started = time.perf_counter()
                await assistant.turn(session, request)
                samples.append((time.perf_counter() - started) * 1000)
            return samples

        try:
            return asyncio.run(run())
        finally:
            store.engine.dispose()


def _output_tokens(understand: Understander, requests: Sequence[str]) -> float:
    from ..retrieval import ModelUnderstander

    if not isinstance(understand, ModelUnderstander):
        return 0.0
    total = 0
    for request in requests:
        outcome = understand.understand_sync(request)
        total += outcome.usage.output_tokens if outcome.usage is not None else 0
    return total / max(len(requests), 1)


def measure_slm(
    name: str,
    understand: Understander,
    *,
    products: Sequence[Product],
    embedder: Embedder,
    retrieval_cases: Sequence[RetrievalCase],
    test_cases: Sequence[dict[str, Any]],
    labelled_cases: Sequence[dict[str, Any]],
    webshop: Path | None = None,
    webshop_limit: int = 200,
    router: Any = None,
    token_requests: int = 30,
) -> SlmResult:
    """Every figure of one model; ``router`` (the assistant's) adds whole-turn latency."""
    from ..evals.retrieval import Answer, System, evaluate_retrieval, shown
    from ..evals.understanding import score_set, webshop_agreement
    from ..retrieval import DenseIndex, LexicalIndex, Searcher

    test = score_set(understand, test_cases)
    labelled = score_set(understand, labelled_cases)
    agreement = (
        webshop_agreement(understand, webshop, limit=webshop_limit) if webshop is not None else None
    )
    searcher = Searcher(
        LexicalIndex.build(products), understand, dense=DenseIndex.build(products, embedder)
    )

    def search(request: str) -> Answer:
        return shown(searcher.search(request, 10))

    cpu_started = time.process_time()
    [report] = evaluate_retrieval([System(name, search)], retrieval_cases, products)
    cpu_s = time.process_time() - cpu_started
    steps = [o.ms for o in report.outcomes]
    turns = (
        _whole_turns(understand, products, [c.request for c in retrieval_cases], router)
        if router is not None
        else None
    )
    requests = [c["request"] for c in test_cases[:token_requests]]
    return SlmResult(
        model=name,
        test_f1=test.f1,
        test_exact=_share(test.exact, test.cases),
        test_price_exact=_share(test.price_exact, test.price_cases),
        test_valid=_share(test.valid_json, test.cases),
        labelled_f1=labelled.f1,
        labelled_exact=_share(labelled.exact, labelled.cases),
        labelled_price_exact=_share(labelled.price_exact, labelled.price_cases),
        webshop_f1=agreement.mean_f1 if agreement is not None else None,
        ndcg=report.ndcg,
        mrr=report.mrr,
        step_p50_ms=percentile(steps, 50),
        step_p95_ms=percentile(steps, 95),
        turn_p50_ms=percentile(turns, 50) if turns else None,
        turn_p95_ms=percentile(turns, 95) if turns else None,
        # The untimed warm-up request is inside the CPU window: one request in len + 1.
        cpu_s_per_1000=cpu_s / (len(retrieval_cases) + 1) * 1000,
        output_tokens_per_request=_output_tokens(understand, requests),
        group_ndcg={group: report.only(group).ndcg for group in report.groups()},
    )


def measure_models(
    factories: Mapping[str, Callable[[], Understander]],
    on_result: Callable[[SlmResult], None] | None = None,
    **shared: Any,
) -> list[SlmResult]:
    results = []
    for name, factory in factories.items():
        understander = factory()
        try:
            result = measure_slm(name, understander, **shared)
        finally:
            close = getattr(understander, "close", None)
            if callable(close):
                close()
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def _f(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def render_slm(results: Sequence[SlmResult], reference: str | None = None) -> str:
    """Quality and latency tables; with ``reference`` (a model name), each model's change."""
    quality = table(
        [
            "model", "test F1", "test exact", "test price", "valid JSON", "labelled F1",
            "labelled exact", "labelled price", "WebShop F1", "nDCG@10", "MRR",
        ],
        [
            [
                r.model, _f(r.test_f1), _f(r.test_exact), _f(r.test_price_exact), _f(r.test_valid),
                _f(r.labelled_f1), _f(r.labelled_exact), _f(r.labelled_price_exact),
                _f(r.webshop_f1), _f(r.ndcg), _f(r.mrr),
            ]
            for r in results
        ],
    )  # fmt: skip
    rows = []
    base = next((r for r in results if r.model == reference), None)
    for r in results:
        change = ""
        if base is not None and r is not base and base.step_p50_ms > 0:
            step = (r.step_p50_ms - base.step_p50_ms) / base.step_p50_ms * 100
            cost = (r.cpu_s_per_1000 - base.cpu_s_per_1000) / max(base.cpu_s_per_1000, 1e-9) * 100
            change = f"step {step:+.0f}%, CPU {cost:+.0f}%"
        rows.append(
            [
                r.model, _ms(r.step_p50_ms), _ms(r.step_p95_ms), _ms(r.turn_p50_ms),
                _ms(r.turn_p95_ms), f"{r.cpu_s_per_1000:,.1f}",
                f"{r.output_tokens_per_request:.1f}", change,
            ]
        )  # fmt: skip
    latency = table(
        [
            "model", "step p50 ms", "step p95 ms", "turn p50 ms", "turn p95 ms",
            "CPU-s / 1,000", "output tokens", f"vs {reference}" if base else "",
        ],
        rows,
    )  # fmt: skip
    return f"{quality}\n\n{latency}\n\n{_group_table(results)}"


def _group_table(results: Sequence[SlmResult]) -> str:
    """nDCG@10 by request group, a column per model."""
    groups = list(dict.fromkeys(g for r in results for g in r.group_ndcg))
    rows = [[group, *(_f(r.group_ndcg.get(group)) for r in results)] for group in groups]
    return table(["nDCG@10 by group", *(r.model for r in results)], rows)


def plot_slm(results: Sequence[SlmResult], path: str | Path) -> Path:
    """A PNG: quality per model (labelled and test field F1, nDCG@10) beside retrieval-step
    latency (p50 bar, p95 whisker, log scale), so the trade-off reads at a glance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.model for r in results]
    positions = range(len(results))
    figure, (quality, latency) = plt.subplots(1, 2, figsize=(12, 4.5))
    series = (
        ("labelled F1", [r.labelled_f1 for r in results]),
        ("test F1", [r.test_f1 for r in results]),
        ("nDCG@10", [r.ndcg for r in results]),
    )
    width = 0.8 / len(series)
    for index, (label, values) in enumerate(series):
        quality.bar([p + index * width for p in positions], values, width, label=label)
    quality.set_xticks([p + width for p in positions], names, rotation=20, ha="right")
    quality.set_ylim(0, 1.15)  # room above the bars for the legend
    quality.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    quality.set_title("quality (higher is better)")
    quality.legend(loc="upper center", ncol=len(series), fontsize=8)
    p50 = [max(r.step_p50_ms, 0.01) for r in results]
    spread = [max(r.step_p95_ms - r.step_p50_ms, 0) for r in results]
    latency.bar(list(positions), p50, yerr=[[0] * len(p50), spread], capsize=4, color="tab:gray")
    latency.set_yscale("log")
    latency.set_xticks(list(positions), names, rotation=20, ha="right")
    latency.set_ylabel("ms per request (p50, whisker to p95)")
    latency.set_title("retrieval step latency (lower is better)")
    figure.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target
