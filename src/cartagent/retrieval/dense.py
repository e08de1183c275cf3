"""Dense retrieval: nearest products by embedding, with the same exact filters as lexical.

:class:`DenseIndex` embeds :func:`~cartagent.retrieval.embeddings.product_text` for every product
and answers a :class:`~cartagent.retrieval.query.SearchQuery` by embedding
:func:`~cartagent.retrieval.embeddings.query_text` and taking the products with the largest
inner product (cosine similarity: vectors are unit length). Small catalogs are searched exactly
with numpy; from ``exact_below`` products on, a faiss HNSW graph (``M=32``) answers
approximately, ``ef_search`` trading recall for speed.

Candidates then go through :func:`cartagent.retrieval.filters.check`, exactly as lexical hits do;
candidates are fetched in growing pages until ``k`` of them pass or the index is exhausted.
``Hit.score`` is the cosine similarity. With a price or rating sort, the ``k`` most similar
matching products are returned in that order (lexical retrieval, not this index, finds the
cheapest of all matches). A query with no words to embed (pure browsing) finds nothing here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..catalog import Product
from .embeddings import Embedder, product_text, query_text
from .filters import Hit, Plan, Words, analyzer, check, order_value, ordered
from .query import SearchQuery

__all__ = ["DenseIndex"]

_FIRST_PAGE = 64
_HNSW_M = 32
_EF_CONSTRUCTION = 80
_BUILD_BATCH = 4096


class DenseIndex:
    """Product embeddings with exact (numpy) or approximate (faiss HNSW) inner-product search."""

    def __init__(
        self,
        products: list[Product],
        vectors: npt.NDArray[np.float32],
        embedder: Embedder,
        *,
        exact_below: int = 100_000,
        ef_search: int = 64,
        min_score: float | None = None,
    ) -> None:
        if vectors.shape != (len(products), embedder.dim):
            raise ValueError(
                f"vectors have shape {vectors.shape}, not ({len(products)}, {embedder.dim})"
            )
        self._products = products
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._embedder = embedder
        self._ids = {p.id: i for i, p in enumerate(products)}
        self.ef_search = ef_search
        self.min_score = min_score
        self._words = Words(analyzer())
        self._hnsw: Any = None
        if len(products) >= exact_below and len(products) > 0:
            import faiss

            hnsw = faiss.IndexHNSWFlat(embedder.dim, _HNSW_M, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = _EF_CONSTRUCTION
            hnsw.add(self._vectors)
            self._hnsw = hnsw

    @classmethod
    def build(
        cls,
        products: Iterable[Product],
        embedder: Embedder,
        *,
        exact_below: int = 100_000,
        ef_search: int = 64,
        min_score: float | None = None,
    ) -> DenseIndex:
        """Embed ``products`` (consumed once, embedded in batches) and index them.

        Below ``exact_below`` products search is exact; from there on it uses HNSW with
        ``ef_search`` (raised per query to the number of candidates asked for). Hits scoring
        under ``min_score`` (cosine similarity) are dropped. Duplicate ids are an error.
        """
        kept: list[Product] = []
        chunks: list[npt.NDArray[np.float32]] = []
        batch: list[Product] = []
        seen: set[str] = set()

        def flush() -> None:
            if batch:
                chunks.append(embedder.embed([product_text(p) for p in batch]))
                kept.extend(batch)
                batch.clear()

        for product in products:
            if product.id in seen:
                raise ValueError(f"product id {product.id!r} appears more than once")
            seen.add(product.id)
            batch.append(product)
            if len(batch) >= _BUILD_BATCH:
                flush()
        flush()
        vectors = (
            np.concatenate(chunks) if chunks else np.zeros((0, embedder.dim), dtype=np.float32)
        )
        return cls(
            kept,
            vectors,
            embedder,
            exact_below=exact_below,
            ef_search=ef_search,
            min_score=min_score,
        )

    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph (else exact)."""
        return self._hnsw is not None

    def __len__(self) -> int:
        return len(self._products)

    def get(self, product_id: str) -> Product | None:
        """The indexed product with id ``product_id``, or ``None``."""
        at = self._ids.get(product_id)
        return None if at is None else self._products[at]

    def search(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> list[Hit]:
        """The ``k`` most similar products satisfying ``query`` (see the module notes).

        When ``timings`` is given, milliseconds spent embedding and searching vectors
        (``dense``) and in the exact checks (``filter``) are added to it.
        """
        dense_s = filter_s = 0.0
        hits: list[Hit] = []
        text = query_text(query)
        if k > 0 and text and self._products:
            started = time.perf_counter()
            vector = self._embedder.embed([text])[0]
            dense_s += time.perf_counter() - started
            plan = Plan.of(query, self._words)
            found: list[tuple[Hit, float]] = []
            seen: set[int] = set()
            total = len(self._products)
            fetch = min(total, max(_FIRST_PAGE, 4 * k))
            while True:
                t0 = time.perf_counter()
                rows = self._nearest(vector, fetch)
                t1 = time.perf_counter()
                dense_s += t1 - t0
                below_floor = False
                for row, score in rows:
                    if row in seen:
                        continue
                    seen.add(row)
                    if self.min_score is not None and score < self.min_score:
                        below_floor = True
                        break
                    hit = check(plan, self._products[row], score, self._words)
                    if hit is not None:
                        found.append((hit, score))
                        if len(found) >= k:
                            break
                filter_s += time.perf_counter() - t1
                if len(found) >= k or below_floor or fetch >= total:
                    break
                fetch = min(total, fetch * 4)
            t2 = time.perf_counter()
            sort = query.sort
            hits = ordered(sort, [(h, order_value(sort, h, s)) for h, s in found])[:k]
            filter_s += time.perf_counter() - t2
        if timings is not None:
            timings["dense"] = timings.get("dense", 0.0) + dense_s * 1000
            timings["filter"] = timings.get("filter", 0.0) + filter_s * 1000
        return hits

    def _nearest(self, vector: npt.NDArray[np.float32], n: int) -> list[tuple[int, float]]:
        """The ``n`` rows most similar to ``vector``, best first, with their similarity."""
        if self._hnsw is None:
            scores = self._vectors @ vector
            everything = n >= len(scores)
            top = np.arange(len(scores)) if everything else np.argpartition(-scores, n - 1)[:n]
            top = top[np.lexsort((top, -scores[top]))]
            return [(int(i), float(scores[i])) for i in top]
        import faiss

        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # stubs lag
        params.efSearch = max(self.ef_search, n)
        distances, labels = self._hnsw.search(vector.reshape(1, -1), n, params=params)
        return [(int(i), float(d)) for i, d in zip(labels[0], distances[0], strict=True) if i >= 0]
