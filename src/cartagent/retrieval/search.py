"""The search facade: words in, understood query and ranked hits out, with per-stage timings.

``Searcher(index, understand=rules.parse).search("red t-shirt under 20")`` runs query
understanding (any :class:`Understander`: the rule parser today, an LLM later), then the
retriever (a :class:`Retriever`: the lexical index), and reports how long each stage took.

With ``dense=`` (a :class:`~cartagent.retrieval.dense.DenseIndex`) the search is hybrid: both
retrievers answer the same query (each applying the exact structured filters), and their hit
lists are fused with reciprocal rank fusion; ``Hit.score`` is then the RRF score. A price or
rating sort re-orders the fused hits by that key.

When fewer than ``k`` products match every constraint, :attr:`SearchResult.near_misses` fills
the answer up to ``k`` with the nearest others and what each breaks
(:mod:`cartagent.retrieval.near_misses`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..catalog import Product
from .filters import Hit, order_value, ordered
from .fusion import reciprocal_rank_fusion
from .near_misses import NearMiss, find_near_misses
from .query import SearchQuery
from .spans import stage

if TYPE_CHECKING:
    from .catalog_vocabulary import CatalogVocabulary
    from .uses import KindsByUse

_MIN_FUSION_DEPTH = 20  # hits asked of each retriever before fusing, at least

__all__ = [
    "Refiner",
    "Retriever",
    "SearchResult",
    "Searcher",
    "Understander",
    "hit_summary",
    "near_miss_summary",
]


class Understander(Protocol):
    """Turns a shopper's words (and earlier turns, for follow-ups) into a :class:`SearchQuery`."""

    def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery: ...


@runtime_checkable
class Refiner(Understander, Protocol):
    """An understander that reads a follow-up against the query whose results are on screen."""

    def refine(
        self, request: str, shown: SearchQuery, *, context: Sequence[str] = ()
    ) -> SearchQuery: ...


class Retriever(Protocol):
    """Answers a :class:`SearchQuery` (e.g. :class:`~cartagent.retrieval.lexical.LexicalIndex`).

    ``timings`` receives milliseconds per stage it ran (``lexical``, ``filter``, ...).
    """

    def search(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> list[Hit]: ...

    def get(self, product_id: str) -> Product | None:
        """The indexed product with id ``product_id``, or ``None``."""
        ...


class SearchResult(BaseModel):
    """What a search found, how the request was understood, and where the time went."""

    model_config = ConfigDict(frozen=True)

    query: SearchQuery
    hits: list[Hit]
    timings: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "Milliseconds per stage: understand, lexical, filter (and total); "
            "embed, dense, fuse and rerank when hybrid; near_misses when fewer than k matched."
        ),
    )
    near_misses: list[NearMiss] = Field(
        default_factory=list,
        description="When fewer products than asked for match every constraint: the nearest "
        "others (after the hits, up to as many as asked for in all), and what each breaks.",
    )


def _default_understander() -> Understander:
    from .rules import parse

    return parse


class Searcher:
    """Query understanding plus retrieval (lexical, or hybrid with ``dense``) behind one call.

    ``vocabulary``, when the searcher knows its catalog's, tells which words of a query no
    constraint checks (:meth:`~cartagent.retrieval.catalog_vocabulary.CatalogVocabulary.
    leftover`). ``rrf_k`` is the reciprocal rank fusion constant; each retriever is asked for
    ``max(k, 20)`` hits before fusing. In a hybrid search the dense retriever runs in a worker
    thread while the lexical one runs in the caller's: embedding the query (torch), the vector
    search (faiss) and tantivy release the GIL, so the two overlap.
    """

    def __init__(
        self,
        index: Retriever,
        understand: Understander | None = None,
        *,
        dense: Retriever | None = None,
        rrf_k: int = 60,
        vocabulary: CatalogVocabulary | None = None,
        uses: KindsByUse | None = None,
    ) -> None:
        self.index = index
        self.vocabulary = vocabulary
        self.uses = uses
        self.dense = dense
        self.rrf_k = rrf_k
        self.understand: Understander = understand or _default_understander()
        self._worker: ThreadPoolExecutor | None = None
        self._worker_lock = threading.Lock()

    def _dense_worker(self) -> ThreadPoolExecutor:
        with self._worker_lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="cartagent-dense")
            return self._worker

    def close(self) -> None:
        """Stop the hybrid search's worker thread (a later hybrid search starts another)."""
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)

    def understand_turn(
        self, request: str, *, context: Sequence[str] = (), shown: SearchQuery | None = None
    ) -> SearchQuery:
        """``request`` understood after the earlier requests ``context``; a follow-up of the
        query ``shown`` (the results on screen) refines it when the understander can
        (:class:`Refiner`)."""
        if shown is not None and isinstance(self.understand, Refiner):
            return self.understand.refine(request, shown, context=context)
        return self.understand(request, context=context)

    def read_use(self, request: str, query: SearchQuery, language: str) -> SearchQuery:
        """``query``, a new search's reading of ``request`` (in ``language``), with the kind
        its use asks for where it names none (:class:`~cartagent.retrieval.uses.KindsByUse`):
        of the words left, those that could back a value stay, the use's are dropped."""
        if self.uses is None or query.category or not query.text:
            return query
        kind = self.uses.kind(request, query.text, language)
        if kind is None:
            return query
        vocabulary = self.vocabulary
        kept = [
            word
            for word in query.text.split()
            if vocabulary is not None and vocabulary.could_back(word, request)
        ]
        return query.model_copy(update={"category": kind, "text": " ".join(kept)})

    def product(self, product_id: str) -> Product | None:
        """The catalog's product with id ``product_id``, or ``None``."""
        return self.index.get(product_id)

    def search(self, request: str, k: int = 10, *, context: Sequence[str] = ()) -> SearchResult:
        """Understand ``request`` (with earlier turns in ``context``) and retrieve ``k`` hits."""
        spent: dict[str, float] = {}
        with stage("search"):
            with stage("understand", spent):
                query = self.understand(request, context=context)
            return self.search_query(query, k, timings=spent)

    def search_query(
        self,
        query: SearchQuery,
        k: int = 10,
        *,
        timings: dict[str, float] | None = None,
        near: int | None = None,
    ) -> SearchResult:
        """Retrieve ``k`` hits for an already structured query (e.g. with overrides applied),
        then near misses up to ``k`` in all, or at most ``near`` of them."""
        spent: dict[str, float] = {"understand": 0.0, "lexical": 0.0, "filter": 0.0}
        spent.update(timings or {})
        retrieval: dict[str, float] = {}
        found: list[NearMiss] = []
        with stage("retrieve", retrieval):
            hits = self._retrieve(query, k, spent)
            wanted = k - len(hits) if near is None else min(near, k - len(hits))
            if wanted > 0:
                with stage("near_misses", spent):
                    found = find_near_misses(
                        query,
                        wanted,
                        lambda q, n: self._retrieve(q, n, {}),
                        shown=hits,
                    )
        spent["total"] = spent["understand"] + retrieval["retrieve"]
        return SearchResult(query=query, hits=hits, timings=spent, near_misses=found)

    def _retrieve(self, query: SearchQuery, k: int, spent: dict[str, float]) -> list[Hit]:
        if self.dense is None:
            return self.index.search(query, k, timings=spent)
        return self._hybrid(query, k, spent)

    def _hybrid(self, query: SearchQuery, k: int, spent: dict[str, float]) -> list[Hit]:
        if self.dense is None:
            raise RuntimeError("hybrid search needs a dense index")
        if k <= 0:
            for name in ("embed", "dense", "fuse", "rerank"):
                spent.setdefault(name, 0.0)
            return []
        depth = max(k, _MIN_FUSION_DEPTH)
        # Each retriever opens its own stage spans (lexical, embed, dense, filter); the worker
        # runs in a copy of this context so its spans nest under this search's.
        dense_spent: dict[str, float] = {}
        pending = self._dense_worker().submit(
            contextvars.copy_context().run,
            self.dense.search,
            query,
            depth,
            timings=dense_spent,
        )
        try:
            lexical = self.index.search(query, depth, timings=spent)
        finally:
            dense = pending.result()
        for name, ms in dense_spent.items():  # both retrievers filter: their times add up
            spent[name] = spent.get(name, 0.0) + ms
        with stage("fuse", spent):
            by_id: dict[str, Hit] = {}
            for hit in [*lexical, *dense]:  # a lexical hit wins: same filters, BM25 matched words
                by_id.setdefault(hit.product.id, hit)
            fused = reciprocal_rank_fusion(
                [[h.product.id for h in lexical], [h.product.id for h in dense]], k=self.rrf_k
            )
            hits = [by_id[pid].model_copy(update={"score": score}) for pid, score in fused]
        with stage("rerank", spent):
            # RRF ranks by relevance; a price or rating sort re-orders the fused hits.
            if query.sort != "relevance":
                keyed = [(h, order_value(query.sort, h, h.score)) for h in hits]
                hits = ordered(query.sort, keyed)
        return hits[:k]


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


def near_miss_summary(near: NearMiss) -> dict[str, Any]:
    """A near miss as :func:`hit_summary` shows a hit, with ``breaks``: what it does not
    satisfy."""
    return {**hit_summary(near.hit), "breaks": list(near.breaks)}
