"""Understanding latency per model: the LLM step of retrieval, measured request by request.

Each model (a factory from ``cartagent understand --model`` names) understands the same
requests in turn, after one unmeasured warm-up request (model load, llama.cpp's first decode).
Reported per model: wall-clock latency p50/p95/mean, CPU seconds per 1,000 requests (process
CPU time, every thread: the cost a CPU-hosted model really has) and which path answered
(the model as it was, repaired, the rules fallback, or the cache).

With ``cache_embedder`` every model is measured a second time with a fresh
:class:`~cartagent.retrieval.cache.SemanticCache` over requests it has already seen once: the
second pass shows what a cache hit costs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .report import percentile, table

if TYPE_CHECKING:
    from ..retrieval import Embedder, Understander

__all__ = ["ModelLatency", "measure_model", "measure_models", "render_models"]


@dataclass(frozen=True)
class ModelLatency:
    """How one model understood ``requests`` requests."""

    model: str
    requests: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    cpu_s_per_1000: float
    sources: dict[str, int] = field(default_factory=dict)
    output_tokens: int = 0


def _understand_once(understander: Understander, request: str) -> tuple[str, int]:
    """Understand ``request``; the path that answered and the tokens the model wrote."""
    from ..retrieval import ModelUnderstander

    if isinstance(understander, ModelUnderstander):
        outcome = understander.understand_sync(request)
        tokens = outcome.usage.output_tokens if outcome.usage is not None else 0
        return outcome.source, tokens
    understander(request)
    return "rules", 0


def measure_model(name: str, understander: Understander, requests: Sequence[str]) -> ModelLatency:
    """Latency of ``understander`` over ``requests`` (after one unmeasured warm-up request)."""
    if not requests:
        raise ValueError("no requests to measure")
    _understand_once(understander, requests[0])
    samples: list[float] = []
    sources: Counter[str] = Counter()
    tokens = 0
    cpu_started = time.process_time()
    for request in requests:
        started = time.perf_counter()
        source, written = _understand_once(understander, request)
        samples.append((time.perf_counter() - started) * 1000)
        sources[source] += 1
        tokens += written
    cpu_s = time.process_time() - cpu_started
    return ModelLatency(
        model=name,
        requests=len(requests),
        p50_ms=percentile(samples, 50),
        p95_ms=percentile(samples, 95),
        mean_ms=sum(samples) / len(samples),
        cpu_s_per_1000=cpu_s / len(requests) * 1000,
        sources=dict(sources),
        output_tokens=tokens,
    )


def measure_models(
    factories: Mapping[str, Callable[[], Understander]],
    requests: Sequence[str],
    *,
    cache_embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ModelLatency]:
    """:func:`measure_model` for each factory; with ``cache_embedder``, a cached repeat too."""
    from ..retrieval import ModelUnderstander, SemanticCache

    results: list[ModelLatency] = []
    for name, factory in factories.items():
        if progress is not None:
            progress(f"understanding with {name}: {len(requests)} requests ...")
        understander = factory()
        try:
            results.append(measure_model(name, understander, requests))
            if cache_embedder is not None and isinstance(understander, ModelUnderstander):
                cached = understander.with_cache(SemanticCache(cache_embedder))
                for request in requests:  # fills the cache (and pays for the model once)
                    cached.understand_sync(request)
                results.append(measure_model(f"{name} (cache hit)", cached, requests))
                cached.close()
        finally:
            close = getattr(understander, "close", None)
            if callable(close):
                close()
    return results


def render_models(results: Sequence[ModelLatency]) -> str:
    """One table row per model."""
    rows = []
    for r in results:
        paths = ", ".join(f"{k} {v}" for k, v in sorted(r.sources.items()))
        rows.append(
            [
                r.model,
                r.requests,
                f"{r.p50_ms:.2f}",
                f"{r.p95_ms:.2f}",
                f"{r.mean_ms:.2f}",
                f"{r.cpu_s_per_1000:.1f}",
                r.output_tokens,
                paths,
            ]
        )
    return table(
        [
            "model",
            "requests",
            "p50 ms",
            "p95 ms",
            "mean ms",
            "CPU s / 1k requests",
            "output tokens",
            "answered by",
        ],
        rows,
    )
