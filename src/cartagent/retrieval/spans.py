"""OpenTelemetry spans for retrieval stages, with their durations kept for the caller too.

``with stage("lexical", timings): ...`` opens a span named ``retrieval.lexical`` on the
``cartagent.retrieval`` tracer (current for the block, so spans opened inside nest under it)
and, when the block ends (even by an exception, which the span records), adds the milliseconds
it took to ``timings["lexical"]``.

Only the OpenTelemetry *API* is used. While no tracer provider is installed (no SDK, nothing in
``OTEL_PYTHON_TRACER_PROVIDER``), no span is opened at all and only the timings are recorded:
opening a no-op span still costs ~10 µs, a few percent of a millisecond-scale search.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from types import TracebackType

from opentelemetry import trace

__all__ = ["TRACER_NAME", "stage"]

TRACER_NAME = "cartagent.retrieval"

_TRACER = trace.get_tracer(TRACER_NAME)  # a proxy until a provider is installed, then delegates
_NO_TRACING = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)


class _Stage(AbstractContextManager[trace.Span]):
    __slots__ = ("_name", "_scope", "_started", "_timings")

    def __init__(self, name: str, timings: dict[str, float] | None) -> None:
        self._name = name
        self._timings = timings
        self._scope: AbstractContextManager[trace.Span] | None = None
        self._started = 0.0

    def __enter__(self) -> trace.Span:
        span: trace.Span = trace.INVALID_SPAN
        if not isinstance(trace.get_tracer_provider(), _NO_TRACING):
            self._scope = _TRACER.start_as_current_span(f"retrieval.{self._name}")
            span = self._scope.__enter__()
        self._started = time.perf_counter()
        return span

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        elapsed = (time.perf_counter() - self._started) * 1000
        if self._timings is not None:
            self._timings[self._name] = self._timings.get(self._name, 0.0) + elapsed
        if self._scope is not None:
            scope, self._scope = self._scope, None
            scope.__exit__(exc_type, exc, traceback)


def stage(name: str, timings: dict[str, float] | None = None) -> AbstractContextManager[trace.Span]:
    """A ``retrieval.<name>`` span; its duration in ms is *added* to ``timings[name]``.

    Durations add up, so a stage entered several times in one search (e.g. once per page of
    candidates) reports its total. With ``timings=None`` it only traces (e.g. a parent
    ``retrieval.search`` span around the stages). The span is yielded so callers can set
    attributes; it is a non-recording span while tracing is off.
    """
    return _Stage(name, timings)
