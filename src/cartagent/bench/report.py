"""Percentiles and plain-text tables for benchmark output."""

from __future__ import annotations

from collections.abc import Sequence

from ..percentiles import percentile as percentile

LOAD_HEADERS = ("backend", "clients", "flows", "errors", "flows/s", "p50 ms", "p99 ms")
"""The first columns of a load benchmark's table (the sandbox's flows, the merchant's checkouts)."""


def measured(value: float, digits: int = 3) -> float | None:
    """``value`` rounded for JSON, or ``None`` where it is NaN (nothing was measured)."""
    return None if value != value else round(value, digits)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, columns padded so it also reads well in a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
