"""Dense retrieval: nearest products by embedding, with the same exact filters as lexical.

:class:`DenseIndex` embeds every product
(:func:`~cartagent.retrieval.product_vectors.embed_products`) and answers a
:class:`~cartagent.retrieval.query.SearchQuery` by embedding
:func:`~cartagent.retrieval.embeddings.query_text` and taking the products with the largest
inner product (cosine similarity: vectors are unit length). Small catalogs are searched exactly
with numpy; from ``exact_below`` products on, a faiss HNSW graph (``M=32``) answers
approximately, ``ef_search`` trading recall for speed.

Candidates then go through :func:`cartagent.retrieval.filters.check`, exactly as lexical hits do;
candidates are fetched in growing pages until ``k`` of them pass or the index is exhausted.
``Hit.score`` is the cosine similarity. With a price or rating sort, the ``k`` most similar
matching products are returned in that order (lexical retrieval, not this index, finds the
cheapest of all matches). A query with no words to embed (pure browsing) finds nothing here.

An index keeps product ids, not products: hits take their product from a lookup (a dict's
``get`` for :meth:`DenseIndex.build`, a persisted lexical index's ``get`` for a large catalog), so
only candidates are ever materialised. :meth:`DenseIndex.save` writes a self-describing folder
(``dense.json``, ``vectors.npy``, ``ids.json`` and, when approximate, ``hnsw.faiss``) that
:meth:`DenseIndex.open` maps back without copying the vectors into memory.
:meth:`DenseIndex.updated` applies an incremental change without embedding anything again: rows
of removed or replaced products become tombstones that searches skip (the graph keeps them)
until they are a quarter of the rows, when the index is compacted and its graph rebuilt.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from ..catalog import Product
from .embeddings import Embedder, QueryVectorCache, embedder_id, query_text
from .filters import Hit, Plan, Words, analyzer, check, order_value, ordered
from .product_vectors import TextVectors, embed_products
from .query import SearchQuery
from .spans import stage

__all__ = ["FORMAT_VERSION", "DenseIndex", "ProductLookup", "ProductScreen"]

ProductLookup = Callable[[str], Product | None]
"""Returns the product with an id (``None`` if unknown), e.g. ``LexicalIndex.get``."""

ProductScreen = Callable[[SearchQuery, Sequence[str]], Mapping[str, Product]]
"""Returns, by id, those of some product ids that may satisfy a query and leaves out those that
cannot (never one that can), e.g. ``LexicalIndex.screened``."""

FORMAT_VERSION = 1
"""Version of the folder :meth:`DenseIndex.save` writes."""

_META_FILE = "dense.json"
_VECTORS_FILE = "vectors.npy"
_IDS_FILE = "ids.json"
_HNSW_FILE = "hnsw.faiss"
_FIRST_PAGE = 64
_MAX_CANDIDATES = 1024
_HNSW_M = 32
_EF_CONSTRUCTION = 80
_BUILD_BATCH = 4096
_MAX_DEAD_FRACTION = 0.25  # tombstoned rows an approximate index keeps before compacting


class DenseIndex:
    """Product embeddings with exact (numpy) or approximate (faiss HNSW) inner-product search."""

    _hnsw: Any  # a faiss IndexHNSWFlat, or None when search is exact

    def __init__(
        self,
        products: Sequence[Product],
        vectors: npt.NDArray[np.float32],
        embedder: Embedder,
        *,
        exact_below: int = 100_000,
        ef_search: int = 64,
        min_score: float | None = None,
    ) -> None:
        by_id = {p.id: p for p in products}
        self._setup(
            [p.id for p in products],
            vectors,
            embedder,
            by_id.get,
            exact_below=exact_below,
            ef_search=ef_search,
            min_score=min_score,
        )

    def _setup(
        self,
        ids: list[str | None],
        vectors: npt.NDArray[np.float32],
        embedder: Embedder,
        lookup: ProductLookup | None,
        *,
        exact_below: int,
        ef_search: int,
        min_score: float | None,
        hnsw: Any = None,
    ) -> None:
        """Set every attribute; without ``hnsw``, a graph is built from ``exact_below`` rows on."""
        if vectors.shape != (len(ids), embedder.dim):
            raise ValueError(
                f"vectors have shape {vectors.shape}, not ({len(ids)}, {embedder.dim})"
            )
        rows: dict[str, int] = {}
        for row, product_id in enumerate(ids):
            if product_id is None:
                continue
            if rows.setdefault(product_id, row) != row:
                raise ValueError(f"product id {product_id!r} appears more than once")
        self._ids = ids
        self._rows = rows
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._embedder = embedder
        self._lookup = lookup
        if hnsw is None and len(ids) > 0 and len(ids) >= exact_below:
            hnsw = _graph(self._vectors, embedder.dim)
        self._hnsw = hnsw
        self._retired = False
        self.screen: ProductScreen | None = None
        """Set, e.g. to ``LexicalIndex.screened``, to read each page of candidates in one call
        that skips those the query's filters rule out; else each is looked up and checked."""
        self.exact_below = exact_below
        self.ef_search = ef_search
        self.min_score = min_score
        self.max_candidates = _MAX_CANDIDATES
        self._words = Words(analyzer())

    # ---------------------------------------------------------------- construction

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
        cache = TextVectors(embedder)
        kept: list[Product] = []
        chunks: list[npt.NDArray[np.float32]] = []
        batch: list[Product] = []
        seen: set[str] = set()

        def flush() -> None:
            if batch:
                chunks.append(embed_products(batch, cache))
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

    @classmethod
    def from_vectors(
        cls,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        embedder: Embedder,
        *,
        products: ProductLookup | None = None,
        exact_below: int = 100_000,
        ef_search: int = 64,
        min_score: float | None = None,
    ) -> DenseIndex:
        """An index of embeddings computed already: ``vectors[i]`` embeds product ``ids[i]``.

        Hits take their products from ``products``; without it the index can be saved and
        updated but not searched. The other arguments are those of :meth:`build`.
        """
        index = cls.__new__(cls)
        index._setup(
            list(ids),
            vectors,
            embedder,
            products,
            exact_below=exact_below,
            ef_search=ef_search,
            min_score=min_score,
        )
        return index

    @classmethod
    def open(
        cls,
        folder: Path,
        embedder: Embedder,
        *,
        products: ProductLookup | None = None,
        ef_search: int = 64,
        min_score: float | None = None,
    ) -> DenseIndex:
        """Map back the index :meth:`save` wrote to ``folder`` (vectors stay on disk, mapped).

        ``embedder`` must be the kind and size of embedder that made the vectors (queries are
        embedded with it); ``products`` is as for :meth:`from_vectors`.
        """
        folder = Path(folder)
        meta_file = folder / _META_FILE
        if not meta_file.is_file():
            raise FileNotFoundError(f"{folder} holds no dense index (no {_META_FILE})")
        meta = orjson.loads(meta_file.read_bytes())
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"{folder}: dense index format {meta.get('format')} is not {FORMAT_VERSION}; "
                "rebuild it"
            )
        made_by = (meta.get("embedder"), meta.get("dim"))
        if made_by != (embedder_id(embedder), embedder.dim):
            raise ValueError(
                f"{folder}: the vectors were made by {made_by[0]} ({made_by[1]} dimensions), "
                f"not {embedder_id(embedder)} ({embedder.dim} dimensions)"
            )
        vectors = np.load(folder / meta["vectors"], mmap_mode="r")
        ids: list[str | None] = orjson.loads((folder / meta["ids"]).read_bytes())
        hnsw = None
        if meta.get("hnsw"):
            import faiss

            hnsw = faiss.read_index(str(folder / meta["hnsw"]))
        if len(ids) != meta.get("rows") or (hnsw is not None and hnsw.ntotal != len(ids)):
            raise ValueError(f"{folder}: the dense index's files disagree; rebuild it")
        index = cls.__new__(cls)
        index._setup(
            ids,
            vectors,
            embedder,
            products,
            exact_below=int(meta.get("exact_below", 100_000)),
            ef_search=ef_search,
            min_score=min_score,
            hnsw=hnsw,
        )
        return index

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (created) for :meth:`open`; ``dense.json`` comes last.

        Each file is written under a temporary name and renamed into place, so an index mapped
        from the folder keeps reading the files it opened.
        """
        self._usable()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with _replacing(folder / _VECTORS_FILE) as temporary, temporary.open("wb") as file:
            np.save(file, self._vectors)
        with _replacing(folder / _IDS_FILE) as temporary:
            temporary.write_bytes(orjson.dumps(self._ids))
        if self._hnsw is not None:
            import faiss

            with _replacing(folder / _HNSW_FILE) as temporary:
                faiss.write_index(self._hnsw, str(temporary))
        meta = {
            "format": FORMAT_VERSION,
            "embedder": embedder_id(self._embedder),
            "dim": self._embedder.dim,
            "metric": "inner_product",
            "rows": len(self._ids),
            "products": len(self),
            "exact_below": self.exact_below,
            "vectors": _VECTORS_FILE,
            "ids": _IDS_FILE,
            "hnsw": _HNSW_FILE if self._hnsw is not None else None,
            "hnsw_m": _HNSW_M,
            "ef_construction": _EF_CONSTRUCTION,
        }
        with _replacing(folder / _META_FILE) as temporary:
            temporary.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
        if self._hnsw is None:
            (folder / _HNSW_FILE).unlink(missing_ok=True)

    def updated(
        self,
        ids: Sequence[str] = (),
        vectors: npt.NDArray[np.float32] | None = None,
        *,
        remove: Iterable[str] = (),
        products: ProductLookup | None = None,
    ) -> DenseIndex:
        """This index without the products in ``remove`` and with ``ids`` embedded as ``vectors``.

        An id already indexed is replaced; removing an id that is not indexed does nothing.
        Nothing is embedded again and, while tombstones stay under a quarter of the rows, an
        approximate index only adds the new vectors to its graph. The result looks products up
        in ``products`` (default: this index's lookup, which may not know the new ones); it
        takes over this index's graph, and this index can no longer be used.
        """
        self._usable()
        dim = self._embedder.dim
        added = (
            np.zeros((0, dim), dtype=np.float32)
            if vectors is None
            else np.ascontiguousarray(vectors, dtype=np.float32)
        )
        if added.shape != (len(ids), dim):
            raise ValueError(f"vectors have shape {added.shape}, not ({len(ids)}, {dim})")
        row_ids = list(self._ids)
        for product_id in itertools.chain(remove, ids):
            row = self._rows.get(product_id)
            if row is not None:
                row_ids[row] = None
        row_ids.extend(ids)
        live = sum(1 for product_id in row_ids if product_id is not None)
        lookup = products if products is not None else self._lookup
        settings = {"exact_below": self.exact_below, "ef_search": self.ef_search}
        if self._hnsw is not None and len(row_ids) - live <= _MAX_DEAD_FRACTION * len(row_ids):
            if len(ids):
                self._hnsw.add(added)
            result = DenseIndex.__new__(DenseIndex)
            result._setup(
                row_ids,
                np.concatenate((self._vectors, added)),
                self._embedder,
                lookup,
                min_score=self.min_score,
                hnsw=self._hnsw,
                **settings,
            )
        else:
            kept = row_ids[: len(self._ids)]
            keep = np.fromiter((i is not None for i in kept), dtype=bool, count=len(kept))
            result = DenseIndex.from_vectors(
                [product_id for product_id in row_ids if product_id is not None],
                np.concatenate((self._vectors[keep], added)),
                self._embedder,
                products=lookup,
                min_score=self.min_score,
                **settings,
            )
        if products is None:
            result.screen = self.screen
        self._retire()
        return result

    def cache_queries(self, capacity: int = 4096) -> None:
        """Keep the vectors of the last ``capacity`` query texts (a
        :class:`~cartagent.retrieval.embeddings.QueryVectorCache`): a repeated query is not
        embedded again. Only repeats gain; the model id, and so what the index accepts, stays."""
        if not isinstance(self._embedder, QueryVectorCache):
            self._embedder = QueryVectorCache(self._embedder, capacity)

    # ---------------------------------------------------------------- access

    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph (else exact)."""
        return self._hnsw is not None

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, product_id: str) -> Product | None:
        """The indexed product with id ``product_id``, or ``None``."""
        if product_id not in self._rows or self._lookup is None:
            return None
        return self._lookup(product_id)

    def search(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> list[Hit]:
        """The ``k`` most similar products satisfying ``query`` (see the module notes).

        When ``timings`` is given, milliseconds spent embedding the query (``embed``), searching
        vectors (``dense``) and in the exact checks (``filter``) are added to it; each is a span
        too. At most ``max_candidates`` nearest products are checked: when the filters reject
        more than that, lexical retrieval (which filters inside its index) is the one to find
        the rare matches, and a dense search stays bounded.
        """
        self._searchable()
        spent: dict[str, float] = {"embed": 0.0, "dense": 0.0, "filter": 0.0}
        hits: list[Hit] = []
        text = query_text(query)
        if k > 0 and text and self._rows:
            with stage("embed", spent):
                vector = self._embedder.embed([text])[0]
            plan = Plan.of(query, self._words)
            found: list[tuple[Hit, float]] = []
            seen: set[int] = set()
            limit = min(len(self._ids), max(self.max_candidates, k))
            fetch = min(limit, max(_FIRST_PAGE, 4 * k))
            while True:
                with stage("dense", spent):
                    rows = self._nearest(vector, fetch)
                with stage("filter", spent):
                    unseen = [(row, score) for row, score in rows if row not in seen]
                    seen.update(row for row, _score in unseen)
                    floor = self.min_score
                    fresh = [pair for pair in unseen if floor is None or pair[1] >= floor]
                    below_floor = len(fresh) < len(unseen)  # rows come best first
                    page_of = self._reader(query, [self._ids[row] for row, _score in fresh])
                    for row, score in fresh:
                        product_id = self._ids[row]
                        product = None if product_id is None else page_of(product_id)
                        if product is None:
                            continue  # ruled out, a tombstone, or one the lookup no longer has
                        hit = check(plan, product, score, self._words)
                        if hit is not None:
                            found.append((hit, score))
                            if len(found) >= k:
                                break
                if len(found) >= k or below_floor or fetch >= limit:
                    break
                fetch = min(limit, fetch * 4)
            with stage("filter", spent):
                sort = query.sort
                hits = ordered(sort, [(h, order_value(sort, h, s)) for h, s in found])[:k]
        if timings is not None:
            for name, ms in spent.items():
                timings[name] = timings.get(name, 0.0) + ms
        return hits

    def _reader(self, query: SearchQuery, ids: Sequence[str | None]) -> ProductLookup:
        """How this page of candidates is read: screened in one call, or one by one."""
        lookup = self._searchable()
        if self.screen is None:
            return lookup
        return self.screen(query, [i for i in ids if i is not None]).get

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

    def _usable(self) -> None:
        if self._retired:
            raise RuntimeError("this DenseIndex was replaced by the index updated() returned")

    def _searchable(self) -> ProductLookup:
        self._usable()
        if self._lookup is None:
            raise RuntimeError("this DenseIndex has no product lookup: open it with products=")
        return self._lookup

    def _retire(self) -> None:
        self._retired = True
        self._hnsw = None
        self._ids, self._rows = [], {}
        self._vectors = np.zeros((0, self._embedder.dim), dtype=np.float32)


def _graph(vectors: npt.NDArray[np.float32], dim: int) -> Any:
    import faiss

    hnsw = faiss.IndexHNSWFlat(dim, _HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = _EF_CONSTRUCTION
    hnsw.add(vectors)
    return hnsw


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target``, renamed onto it when the block succeeds."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        yield temporary
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, target)
