"""Dev metrics of a trained adapter, measured the way it will serve.

The adapter is served as ``--model tuned`` serves it (exported to GGUF and folded into the
packaged base: :func:`~cartagent.tuning.export.served_model`), or through transformers where
llama.cpp is not installed, and asked through the full understanding pipeline (its prompt
style, grammar for JSON, repair, grounding, fallback).
Reported: field F1, exact, price exact, valid JSON, how often the rule parser had to answer
instead, and, through llama.cpp, latency p50/p95 per request.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..bench.report import percentile
from ..errors import ConfigurationError
from ..llm.model import Completion, Message, ToolSpec
from ..llm.packaged import PACKAGED_MODELS, packaged_model_path
from ..retrieval import PromptStyle, SearchQuery, answer_tokens, answers_in_line
from .export import served_model
from .training_data import Example

if TYPE_CHECKING:
    from ..llm.llama_cpp import LlamaCppModel
    from .transformers_model import TransformersModel

__all__ = ["BACKENDS", "DevEvaluator", "cases_from", "default_backend", "scores"]


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


Backend = Literal["llama-cpp", "transformers"]
BACKENDS: tuple[Backend, ...] = ("llama-cpp", "transformers")


def default_backend(base: str) -> Backend:
    """llama.cpp, as ``--model tuned`` serves, for a packaged ``base`` where it is installed;
    transformers elsewhere."""
    served = base in PACKAGED_MODELS and importlib.util.find_spec("llama_cpp") is not None
    return "llama-cpp" if served else "transformers"


def scores(backend: Backend, style: PromptStyle) -> bool:
    """Whether ``backend`` can ask a model trained on ``style`` (transformers decodes without
    a grammar, so only the styles that answer in a line)."""
    return backend != "transformers" or answers_in_line(style)


@dataclass(frozen=True)
class DevEvaluator:
    """Scores an adapter folder on ``cases`` (see :func:`~cartagent.tuning.sweep.run_sweep`),
    asking it with the prompt ``style`` it was trained on (behind the rule parser when it is
    served ``rules_first``). A plain value, so a sweep's worker processes can be handed it.

    ``backend="llama-cpp"`` asks the adapter as ``--model tuned`` serves it (exported, merged,
    bounded), so its latency is the served one; ``"transformers"`` asks the same merged weights
    through PyTorch, on the GPU when there is one, for machines without llama.cpp: the answers
    are those of the served model less its 4-bit rounding, the latency that of that device. It
    decodes without a grammar, so it takes only the styles that answer in a line, and it
    decodes the dev requests in batches of ``batch_size`` before scoring them, so it reports no
    per-request latency.
    """

    cases: tuple[dict[str, Any], ...]
    base: str = "smollm2"
    style: PromptStyle = "short"
    rules_first: bool = False
    backend: Backend = "llama-cpp"
    batch_size: int = 32
    base_cache: Path | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigurationError(
                f"unknown dev backend {self.backend!r}; use one of {', '.join(BACKENDS)}"
            )
        if self.batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, not {self.batch_size}")
        if not scores(self.backend, self.style):
            raise ConfigurationError(
                f"the transformers backend decodes without a grammar: the {self.style!r} style "
                "answers in JSON, so score it with llama.cpp"
            )
        if self.backend == "llama-cpp":
            if self.base not in PACKAGED_MODELS:
                raise ConfigurationError(
                    f"llama.cpp scores adapters of a packaged base ({', '.join(PACKAGED_MODELS)}),"
                    f" not {self.base!r}: use the transformers backend"
                )
            packaged_model_path(self.base)  # a missing base fails now, not after a trial

    def __call__(self, adapter: Path) -> dict[str, float]:
        from ..evals.understanding import score_set
        from ..retrieval import ModelUnderstander

        model = self._model(adapter)
        latencies: list[float] = []
        try:
            with ModelUnderstander(model, style=self.style, rules_first=self.rules_first) as ask:

                def timed(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
                    started = time.perf_counter()
                    try:
                        return ask(request, context=context)
                    finally:
                        latencies.append((time.perf_counter() - started) * 1000)

                report = score_set(timed, list(self.cases))
                stats = ask.stats
        finally:
            model.close()
        metrics = {
            "f1": report.f1,
            "exact": report.exact / max(report.cases, 1),
            "price_exact": report.price_exact / max(report.price_cases, 1),
            "valid_json": report.valid_json / max(report.cases, 1),
            "fallback_rate": stats.fallbacks / max(stats.calls, 1),
        }
        if self.backend == "llama-cpp":
            metrics["p50_ms"] = percentile(latencies, 50)
            metrics["p95_ms"] = percentile(latencies, 95)
        return metrics

    def _conversations(self) -> list[list[Message]]:
        """The messages the pipeline would send the model for each case (none for a request
        the rule parser reads whole when ``rules_first``)."""
        from ..retrieval import ModelUnderstander

        recorder = _Recorder()
        with ModelUnderstander(recorder, style=self.style, rules_first=self.rules_first) as ask:
            for case in self.cases:
                ask(case["request"], context=case.get("context", ()))
        return recorder.asked

    def _model(self, adapter: Path) -> LlamaCppModel | TransformersModel:
        if self.backend == "llama-cpp":
            # As `--model tuned` serves it (merged, bounded): the latency is the served one.
            return served_model(adapter, self.base, self.style)
        from .transformers_model import TransformersModel

        model = TransformersModel.with_adapter(
            adapter, self.base, max_tokens=answer_tokens(self.style), base_cache=self.base_cache
        )
        try:
            model.prefetch(self._conversations(), batch_size=self.batch_size)
        except BaseException:
            model.close()
            raise
        return model


class _Recorder:
    """A model that keeps what it is asked and answers nothing (the rule parser then does)."""

    def __init__(self) -> None:
        self.asked: list[list[Message]] = []

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        self.asked.append(list(messages))
        raise _Recorded


class _Recorded(Exception):
    pass
