"""``stage``: one ``retrieval.<name>`` span per stage, and its duration added to the timings."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest
from opentelemetry import trace

from cartagent.retrieval.spans import TRACER_NAME, stage


def test_timings_are_added_up() -> None:
    timings: dict[str, float] = {"lexical": 1.0}
    with stage("lexical", timings):
        time.sleep(0.002)
    with stage("understand", timings):
        pass
    assert timings["lexical"] >= 1.0 + 2.0  # added to what was there
    assert timings["understand"] >= 0.0
    with stage("filter"):  # no timings: only traces
        pass


_TRACING_OFF = """
from opentelemetry import trace
from cartagent.retrieval.spans import stage
assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
timings = {}
with stage("lexical", timings) as span:
    assert not span.is_recording()
assert timings["lexical"] >= 0
print("ok")
"""


def test_no_span_while_tracing_is_off() -> None:
    # In a process of its own: the tracer provider is process-wide, and another test in this
    # worker may have installed one (this test used to skip then, and so could not fail).
    done = subprocess.run(
        [sys.executable, "-c", _TRACING_OFF], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_spans_are_named_and_nested(exporter: Any) -> None:
    exporter.clear()
    timings: dict[str, float] = {}
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("search"):
        with stage("understand", timings):
            pass
        with stage("lexical", timings) as span:
            span.set_attribute("k", 10)
        with stage("filter", timings):
            time.sleep(0.001)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"retrieval.understand", "retrieval.lexical", "retrieval.filter"} <= set(spans)
    assert spans["retrieval.lexical"].instrumentation_scope.name == TRACER_NAME
    assert spans["retrieval.lexical"].attributes["k"] == 10
    parent = spans["search"].context.span_id
    assert all(spans[f"retrieval.{n}"].parent.span_id == parent for n in timings)
    assert set(timings) == {"understand", "lexical", "filter"}
    assert timings["filter"] >= 1.0
    assert all(v >= 0 for v in timings.values())


def test_failing_stage_still_times_and_records_error(exporter: Any) -> None:
    exporter.clear()
    timings: dict[str, float] = {}
    with pytest.raises(RuntimeError), stage("dense", timings):
        raise RuntimeError("boom")
    assert timings["dense"] >= 0
    (span,) = exporter.get_finished_spans()
    assert span.name == "retrieval.dense"
    assert span.status.status_code == trace.StatusCode.ERROR


def test_a_search_reports_its_stages_as_spans_and_timings(exporter: Any) -> None:
    from decimal import Decimal

    from cartagent.catalog import Product, Variant
    from cartagent.retrieval.lexical import LexicalIndex
    from cartagent.retrieval.search import Searcher

    variant = Variant(id="v1", options={}, price=Decimal("9"))
    mug = Product(id="m1", title="Blue ceramic mug", variants=(variant,))
    exporter.clear()
    result = Searcher(LexicalIndex.build([mug])).search("blue mug")
    names = {span.name for span in exporter.get_finished_spans()}
    assert {
        "retrieval.search",
        "retrieval.understand",
        "retrieval.retrieve",
        "retrieval.lexical",
    } <= names
    assert result.hits[0].product.id == "m1"
    assert result.timings["total"] >= result.timings["understand"] > 0


def test_a_hybrid_search_traces_every_stage(exporter: Any) -> None:
    from decimal import Decimal

    from cartagent.catalog import Product, Variant
    from cartagent.retrieval.dense import DenseIndex
    from cartagent.retrieval.lexical import LexicalIndex
    from cartagent.retrieval.search import Searcher
    from cartagent.testing import HashingEmbedder

    mugs = [
        Product(
            id=f"m{i}",
            title=f"Blue ceramic mug {i}",
            variants=(Variant(id=f"v{i}", options={}, price=Decimal(9 + i)),),
        )
        for i in range(3)
    ]
    searcher = Searcher(LexicalIndex.build(mugs), dense=DenseIndex.build(mugs, HashingEmbedder()))
    exporter.clear()
    result = searcher.search("cheapest blue mug")
    names = {span.name for span in exporter.get_finished_spans()}
    stages = {"understand", "lexical", "embed", "dense", "filter", "fuse", "rerank"}
    assert {f"retrieval.{n}" for n in stages} <= names
    assert stages <= set(result.timings)
    assert [h.product.id for h in result.hits] == ["m0", "m1", "m2"]
