"""The search facade: words in, understood query and ranked hits out, with per-stage timings.

``Searcher(index, understand=rules.parse).search("red t-shirt under 20")`` runs query
understanding (any :class:`Understander`: the rule parser today, an LLM later), then the
retriever (a :class:`Retriever`: the lexical index today, hybrid later), and reports how long each
stage took.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from .lexical import Hit
from .query import SearchQuery

__all__ = ["Retriever", "SearchResult", "Searcher", "Understander", "hit_summary"]


class Understander(Protocol):
    """Turns a shopper's words (and earlier turns, for follow-ups) into a :class:`SearchQuery`."""

    def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery: ...


class Retriever(Protocol):
    """Answers a :class:`SearchQuery` (e.g. :class:`~cartagent.retrieval.lexical.LexicalIndex`).

    ``timings`` receives milliseconds per stage it ran (``lexical``, ``filter``, ...).
    """

    def search(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> list[Hit]: ...


class SearchResult(BaseModel):
    """What a search found, how the request was understood, and where the time went."""

    model_config = ConfigDict(frozen=True)

    query: SearchQuery
    hits: list[Hit]
    timings: dict[str, float] = Field(
        default_factory=dict,
        description="Milliseconds per stage: understand, lexical, filter (and total).",
    )


def _default_understander() -> Understander:
    from .rules import parse

    return parse


class Searcher:
    """Query understanding plus retrieval behind one call."""

    def __init__(self, index: Retriever, understand: Understander | None = None) -> None:
        self.index = index
        self.understand: Understander = understand or _default_understander()

    def search(self, request: str, k: int = 10, *, context: Sequence[str] = ()) -> SearchResult:
        """Understand ``request`` (with earlier turns in ``context``) and retrieve ``k`` hits."""
        started = time.perf_counter()
        query = self.understand(request, context=context)
        understood = (time.perf_counter() - started) * 1000
        return self.search_query(query, k, timings={"understand": understood})

    def search_query(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> SearchResult:
        """Retrieve ``k`` hits for an already structured query (e.g. with overrides applied)."""
        spent: dict[str, float] = {"understand": 0.0, "lexical": 0.0, "filter": 0.0}
        spent.update(timings or {})
        started = time.perf_counter()
        hits = self.index.search(query, k, timings=spent)
        retrieval = (time.perf_counter() - started) * 1000
        spent["total"] = spent["understand"] + retrieval
        return SearchResult(query=query, hits=hits, timings=spent)


def _price(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:f}"


def hit_summary(hit: Hit) -> dict[str, Any]:
    """A compact, JSON-ready view of a hit (what a model or a terminal needs, not the catalog).

    ``price`` is the chosen variant's price, else the product's lowest price.
    """
    product, variant = hit.product, hit.variant
    summary: dict[str, Any] = {
        "id": product.id,
        "title": product.title,
        "price": _price(variant.price if variant is not None else product.price_min),
        "currency": variant.currency if variant is not None else product.currency,
        "score": round(hit.score, 4),
    }
    if product.brand:
        summary["brand"] = product.brand
    if product.category:
        summary["category"] = " > ".join(product.category)
    if product.rating is not None:
        summary["rating"] = product.rating
    if variant is not None:
        summary["variant"] = {
            "id": variant.id,
            "options": dict(variant.options),
            "available": variant.available,
        }
    summary["matched"] = list(hit.matched)
    return summary
