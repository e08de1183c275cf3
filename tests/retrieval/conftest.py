"""Shared retrieval fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace


@pytest.fixture(scope="module")
def exporter() -> Iterator[Any]:
    """An in-memory exporter on the global tracer provider (which can only be set once)."""
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    sdk_export = pytest.importorskip("opentelemetry.sdk.trace.export")
    in_memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    provider = trace.get_tracer_provider()
    if not isinstance(provider, sdk_trace.TracerProvider):
        trace.set_tracer_provider(sdk_trace.TracerProvider())
        provider = trace.get_tracer_provider()
    if not isinstance(provider, sdk_trace.TracerProvider):
        pytest.skip("another tracer provider is installed globally")
    memory = in_memory.InMemorySpanExporter()
    provider.add_span_processor(sdk_export.SimpleSpanProcessor(memory))
    yield memory
    memory.clear()
