"""Field-level scoring of a parsed :class:`SearchQuery` against a labelled one.

A query is broken into atomic facts (each attribute value, each option value, each price bound,
the category, the brand, each exclusion, a non-default sort, the minimum rating, "in stock only");
free text is not scored. Comparisons ignore case and repeated whitespace, and price bounds
compare as numbers ("50" == "50.00"). Defaults are the absence of a fact, so an empty expected
query matched by an empty answer scores (0, 0, 0), which :func:`f1` counts as perfect.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from ..retrieval import SearchQuery

__all__ = ["Fact", "f1", "facts", "field_scores", "micro_f1", "precision", "recall"]

Fact = tuple[str, ...]


def _norm(value: str) -> str:
    return " ".join(value.split()).casefold()


def _amount(value: Decimal) -> str:
    return format(value.normalize(), "f") if value.is_finite() else str(value)


def facts(query: SearchQuery) -> set[Fact]:
    """The atomic facts a query asserts."""
    out: set[Fact] = set()
    for name, table in (("attribute", query.attributes), ("option", query.options)):
        for key, values in table.items():
            out.update((name, _norm(key), _norm(v)) for v in values)
    if query.price is not None:
        currency = query.price.currency.upper()
        if query.price.min is not None:
            out.add(("price_min", _amount(query.price.min), currency))
        if query.price.max is not None:
            out.add(("price_max", _amount(query.price.max), currency))
    if query.category:
        out.add(("category", _norm(query.category)))
    if query.brand:
        out.add(("brand", _norm(query.brand)))
    for exclusion in query.exclude:
        out.add(("exclude", _norm(exclusion.field or ""), _norm(exclusion.value)))
    if query.sort != "relevance":
        out.add(("sort", query.sort))
    if query.min_rating is not None:
        out.add(("min_rating", _amount(Decimal(str(query.min_rating)))))
    if query.available_only:
        out.add(("available_only",))
    return out


def field_scores(expected: SearchQuery, got: SearchQuery) -> tuple[int, int, int]:
    """``(true positives, false positives, false negatives)`` over the two queries' facts."""
    want, have = facts(expected), facts(got)
    return len(want & have), len(have - want), len(want - have)


def precision(tp: int, fp: int, fn: int = 0) -> float:
    return 1.0 if tp + fp == 0 else tp / (tp + fp)


def recall(tp: int, fp: int, fn: int) -> float:
    return 1.0 if tp + fn == 0 else tp / (tp + fn)


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 of the counts; 1.0 when there was nothing to find and nothing was claimed."""
    if tp + fp + fn == 0:
        return 1.0
    return 2 * tp / (2 * tp + fp + fn)


def micro_f1(scores: Iterable[tuple[int, int, int]]) -> float:
    """F1 over summed counts (each fact weighs the same, whichever query it came from)."""
    tp = fp = fn = 0
    for a, b, c in scores:
        tp, fp, fn = tp + a, fp + b, fn + c
    return f1(tp, fp, fn)
