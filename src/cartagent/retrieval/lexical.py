"""Lexical retrieval: BM25 over product text with structured filters, on tantivy.

:class:`LexicalIndex` answers a :class:`~cartagent.retrieval.query.SearchQuery` in two steps:

1. **tantivy** scores the free text with BM25 over title (boosted), category, brand,
   attributes/options and description, and applies a *coarse* product-level prefilter that
   can only over-match: category/brand/option words present, some variant price in range
   (a multi-valued fast field), rating, stock, titles naming an excluded word.
2. **Python** checks each candidate exactly, variant by variant: a product matches when one
   of its variants satisfies the options, price, availability and exclusions *together*; that
   variant is reported in :attr:`Hit.variant` and every satisfied constraint in
   :attr:`Hit.matched`. Candidates are fetched in growing pages until ``k`` hits are found.

The exact matching rules live in :mod:`cartagent.retrieval.filters` (shared with the dense
retriever).

Sorting: ``relevance`` (BM25; browsing without text orders by rating), ``price_asc`` /
``price_desc`` (by the chosen variant's price; exact, with early stopping on the product's
min/max price), ``rating``.

:class:`LexicalWriter` edits a persisted index in place of rebuilding it (incremental catalog
builds replace changed products and delete removed ones by id).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import orjson
import tantivy

from ..catalog import Product
from .filters import (
    NO_RATING,
    Hit,
    Plan,
    Words,
    analyzer,
    check,
    order_value,
    ordered,
    prep,
    spellings,
)
from .query import SearchQuery
from .spans import stage

__all__ = ["Hit", "LexicalIndex", "LexicalWriter"]

SCHEMA_VERSION = 2  # 2: "non-" stays on its word (filters.prep)
_META_FILE = "cartagent-lexical.json"
_TOKENIZER = "cartagent_en"

# Field boosts for BM25 (title matches rank first).
_TEXT_FIELDS: dict[str, float] = {
    "title": 3.0,
    "category": 2.0,
    "brand": 2.0,
    "attributes": 1.0,
    "description": 0.5,
}
_DISMAX_TIE = 0.3
_NO_PRICE_LOW = 1e18  # price_min of a product without variants: sorts last ascending
_NO_PRICE_HIGH = -1.0  # price_max of a product without variants: sorts last descending
_PRICE_SLACK = 0.005  # float prefilter slack; the exact check uses Decimal
_FIRST_PAGE = 64
_MAX_PAGE = 4096
_CACHE_SIZE = 4096  # parsed products kept per index


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    for name in _TEXT_FIELDS:
        builder.add_text_field(name, tokenizer_name=_TOKENIZER)
    builder.add_float_field("price", indexed=True, fast=True)  # one value per variant
    builder.add_float_field("price_min", fast=True)
    builder.add_float_field("price_max", fast=True)
    builder.add_float_field("rating", indexed=True, fast=True)
    builder.add_unsigned_field("available", indexed=True, fast=True)
    builder.add_bytes_field("product", stored=True)
    return builder.build()


class LexicalIndex:
    """A tantivy index of products: BM25 text search plus exact structured filters.

    Build with :meth:`build` (in memory when ``path`` is ``None``, else persisted in that
    folder) and reopen a persisted one with :meth:`open`. Products are stored whole, so hits
    and :meth:`get` return full :class:`Product` objects.
    """

    def __init__(self, index: tantivy.Index, path: Path | None) -> None:
        self._index = index
        self._path = path
        self._schema = index.schema
        self._analyzer = analyzer()
        index.register_tokenizer(_TOKENIZER, self._analyzer)
        self._words = Words(self._analyzer)
        self._cache: OrderedDict[str, Product] = OrderedDict()
        self._lock = threading.Lock()
        self._index.reload()
        self._searcher = index.searcher()

    # ---------------------------------------------------------------- construction

    @classmethod
    def build(
        cls,
        products: Iterable[Product],
        path: Path | None = None,
        *,
        heap_size: int = 256_000_000,
        commit_every: int = 250_000,
    ) -> LexicalIndex:
        """Index ``products`` (any iterable, consumed once; streamed for large catalogs).

        With ``path``, the index is written to that folder (created; an index already there is
        replaced) and can be reopened with :meth:`open`. Duplicate product ids are an error.
        """
        writer = LexicalWriter(path, create=True, heap_size=heap_size, commit_every=commit_every)
        seen: set[str] = set()
        for product in products:
            if product.id in seen:
                raise ValueError(f"product id {product.id!r} appears more than once")
            seen.add(product.id)
            writer.add(product)
        return writer.commit()

    @classmethod
    def open(cls, path: Path) -> LexicalIndex:
        """Reopen an index :meth:`build` persisted in ``path``."""
        path = Path(path)
        return cls(_open_persisted(path), path)

    # ---------------------------------------------------------------- access

    @property
    def path(self) -> Path | None:
        return self._path

    def __len__(self) -> int:
        return int(self._searcher.num_docs)

    def get(self, product_id: str) -> Product | None:
        """The stored product with id ``product_id``, or ``None``."""
        query = tantivy.Query.term_query(self._schema, "id", product_id)
        hits = self._searcher.search(query, 1, count=False).hits
        if not hits:
            return None
        return self._product(hits[0][1])

    def screened(self, query: SearchQuery, product_ids: Sequence[str]) -> Mapping[str, Product]:
        """Those of ``product_ids`` that may satisfy ``query``, by id: one tantivy query with
        the product-level prefilter (which never rejects a true match), so that another
        retriever's candidates are parsed only when they may pass the exact check, and only
        when asked for. Unknown ids are left out."""
        if not product_ids:
            return {}
        plan = Plan.of(query, self._words)
        among = tantivy.Query.term_set_query(self._schema, "id", list(product_ids))
        screen = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, self._prefilter(plan, None)), (tantivy.Occur.Must, among)]
        )
        found = self._searcher.search(screen, len(product_ids), count=False).hits
        docs = (self._searcher.doc(address) for _score, address in found)
        return _Parsed(self, {str(doc.get_first("id")): doc for doc in docs})

    def _product(self, address: tantivy.DocAddress) -> Product:
        return self._parse(self._searcher.doc(address))

    def _parse(self, doc: tantivy.Document) -> Product:
        product_id = str(doc.get_first("id"))
        with self._lock:
            cached = self._cache.get(product_id)
            if cached is not None:
                self._cache.move_to_end(product_id)
                return cached
        raw = doc.get_first("product")
        if not isinstance(raw, bytes):
            raise ValueError(f"{self._path or 'index'}: product {product_id!r} is not stored")
        product = Product.model_validate_json(raw)
        with self._lock:
            self._cache[product_id] = product
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return product

    # ---------------------------------------------------------------- search

    def search(
        self, query: SearchQuery, k: int = 10, *, timings: dict[str, float] | None = None
    ) -> list[Hit]:
        """The top ``k`` products satisfying ``query``, in its sort order.

        When ``timings`` is given, milliseconds spent in tantivy (``lexical``) and in the exact
        variant-level checks (``filter``) are added to it; each page of candidates opens a
        ``lexical`` and a ``filter`` span.
        """
        spent: dict[str, float] = {"lexical": 0.0, "filter": 0.0}
        hits: list[Hit] = []
        if k > 0:
            plan = Plan.of(query, self._words)
            hits = self._run(plan, k, spent)
        if timings is not None:
            for name, ms in spent.items():
                timings[name] = timings.get(name, 0.0) + ms
        return hits

    def _run(self, plan: Plan, k: int, spent: dict[str, float]) -> list[Hit]:
        sort = plan.query.sort
        with stage("lexical", spent):
            text_query = self._text_query(plan)
            full = self._prefilter(plan, text_query)
        order_field: str | None = None
        order = tantivy.Order.Desc
        if sort == "price_asc":
            order_field, order = "price_min", tantivy.Order.Asc
        elif sort == "price_desc":
            order_field = "price_max"
        elif sort == "rating" or text_query is None:
            order_field = "rating"

        found: list[tuple[Hit, float]] = []  # hit with its order value (score, price, rating)
        offset, page = 0, max(_FIRST_PAGE, 4 * k)
        done = False
        while not done:
            with stage("lexical", spent):
                rows = self._searcher.search(
                    full,
                    page,
                    count=False,
                    order_by_field=order_field,
                    offset=offset,
                    order=order,
                ).hits
            with stage("filter", spent):
                for value, address in rows:
                    if _enough(sort, found, k, float(value)):
                        done = True
                        break
                    product = self._product(address)
                    score = float(value) if order_field is None else 0.0
                    hit = check(plan, product, score, self._words)
                    if hit is not None:
                        found.append((hit, order_value(sort, hit, float(value))))
                        if sort in ("relevance", "rating") and len(found) >= k:
                            done = True
                            break
            if len(rows) < page:
                break
            offset += page
            page = min(page * 2, _MAX_PAGE)

        with stage("filter", spent):
            hits = ordered(sort, found)[:k]
        if order_field is not None and text_query is not None and hits:
            with stage("lexical", spent):
                hits = self._rescore(text_query, hits)
                if sort == "rating":
                    hits = ordered(sort, [(h, order_value(sort, h, 0.0)) for h in hits])
        return hits

    def _rescore(self, text_query: tantivy.Query, hits: list[Hit]) -> list[Hit]:
        """BM25 scores for hits fetched in another order (price, rating)."""
        ids = tantivy.Query.term_set_query(self._schema, "id", [h.product.id for h in hits])
        only = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, text_query), (tantivy.Occur.Must, ids)]
        )
        scores: dict[str, float] = {}
        for score, address in self._searcher.search(only, len(hits), count=False).hits:
            scores[str(self._searcher.doc(address).get_first("id"))] = float(score)
        return [h.model_copy(update={"score": scores.get(h.product.id, 0.0)}) for h in hits]

    # ---------------------------------------------------------------- tantivy queries

    def _term(self, field_name: str, value: str | int) -> tantivy.Query:
        return tantivy.Query.term_query(self._schema, field_name, value)

    def _word(self, field_name: str, word: str) -> tantivy.Query:
        """``word`` in ``field_name``, in any of its spellings (the index holds the catalog's)."""
        terms = [self._term(field_name, spelling) for spelling in spellings(word)]
        if len(terms) == 1:
            return terms[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in terms])

    def _all_words(self, field_names: Sequence[str], words: Iterable[str]) -> tantivy.Query:
        """Every word appears in at least one of ``field_names``."""
        clauses = []
        for word in sorted(words):
            terms = [self._word(f, word) for f in field_names]
            any_field = (
                terms[0]
                if len(terms) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in terms])
            )
            clauses.append((tantivy.Occur.Must, any_field))
        return tantivy.Query.boolean_query(clauses)

    def _text_query(self, plan: Plan) -> tantivy.Query | None:
        if not plan.text_tokens:
            return None
        per_token = [
            tantivy.Query.disjunction_max_query(
                [
                    tantivy.Query.boost_query(self._word(name, token), boost)
                    for name, boost in _TEXT_FIELDS.items()
                ],
                _DISMAX_TIE,
            )
            for token in plan.text_tokens
        ]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_token])

    def _prefilter(self, plan: Plan, text_query: tantivy.Query | None) -> tantivy.Query:
        """The text query plus product-level filters that never reject a true match."""
        must: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if text_query is not None:
            must.append((tantivy.Occur.Must, text_query))
        if plan.category_words:
            must.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.boolean_query(
                        [
                            (
                                tantivy.Occur.Should,
                                self._all_words(["category"], plan.category_words),
                            ),
                            (tantivy.Occur.Should, self._all_words(["title"], plan.category_words)),
                        ]
                    ),
                )
            )
        if plan.brand_words:
            must.append((tantivy.Occur.Must, self._all_words(["brand"], plan.brand_words)))
        anywhere = ["attributes", "title", "description", "category"]
        for constraint in plan.constraints:
            alternatives = [self._words(v) for v in constraint.values]
            if any(not words for words in alternatives):
                continue  # a value without words cannot be prefiltered
            must.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.boolean_query(
                        [
                            (tantivy.Occur.Should, self._all_words(anywhere, words))
                            for words in alternatives
                        ]
                    ),
                )
            )
        query = plan.query
        if query.price is not None and (query.price.min is not None or query.price.max is not None):
            low = float(query.price.min) - _PRICE_SLACK if query.price.min is not None else None
            high = float(query.price.max) + _PRICE_SLACK if query.price.max is not None else None
            must.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.range_query(
                        self._schema, "price", tantivy.FieldType.Float, low, high
                    ),
                )
            )
        elif query.price is not None:
            must.append((tantivy.Occur.Must, tantivy.Query.exists_query("price")))
        if query.min_rating is not None:
            must.append(
                (
                    tantivy.Occur.Must,
                    tantivy.Query.range_query(
                        self._schema,
                        "rating",
                        tantivy.FieldType.Float,
                        max(query.min_rating - 1e-6, 0.0),
                        None,
                    ),
                )
            )
        if query.available_only:
            must.append((tantivy.Occur.Must, self._term("available", 1)))
        if not must:
            must.append((tantivy.Occur.Must, tantivy.Query.all_query()))
        for _exclusion, key, words in plan.exclusions:
            if key is None:
                must.append((tantivy.Occur.MustNot, self._all_words(["title"], words)))
        return tantivy.Query.boolean_query(must)


class LexicalWriter:
    """Adds, replaces and deletes products; :meth:`commit` writes them and returns the index.

    ``create=True`` starts an empty index (in memory when ``path`` is ``None``; in that folder
    otherwise, replacing any index there); ``create=False`` edits the index persisted in
    ``path``. Nothing is visible to readers of the folder before :meth:`commit`, except every
    ``commit_every`` documents, which bounds the writer's memory on large builds.
    """

    def __init__(
        self,
        path: Path | None,
        *,
        create: bool,
        heap_size: int = 256_000_000,
        commit_every: int = 250_000,
    ) -> None:
        if path is None and not create:
            raise ValueError("an index to edit needs its path")
        if path is not None:
            path = Path(path)
        if not create and path is not None:
            index = _open_persisted(path)
        elif path is not None:
            path.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(_schema(), path=str(path), reuse=False)
        else:
            index = tantivy.Index(_schema())
        index.register_tokenizer(_TOKENIZER, analyzer())
        self._index = index
        self._path = path
        # One thread: tantivy ranks equal scores by where documents sit, and several writer
        # threads deal documents out to segments by timing, so tied hits changed order between
        # runs. Building costs the same (the Python side that makes the documents dominates).
        self._writer: tantivy.IndexWriter | None = index.writer(heap_size=heap_size, num_threads=1)
        self._commit_every = commit_every
        self._pending = 0

    def add(self, product: Product) -> None:
        """Index ``product`` (the caller makes sure its id is not indexed already)."""
        self._open_writer().add_document(_document(product))
        self._counted()

    def replace(self, product: Product) -> None:
        """Index ``product`` in place of the product with its id (if any)."""
        writer = self._open_writer()
        writer.delete_documents_by_term("id", product.id)
        writer.add_document(_document(product))
        self._counted()

    def delete(self, product_id: str) -> None:
        """Remove the product with id ``product_id`` (if any)."""
        self._open_writer().delete_documents_by_term("id", product_id)
        self._counted()

    def commit(self) -> LexicalIndex:
        """Write every change and return the index; the writer cannot be used afterwards."""
        writer = self._open_writer()
        writer.commit()
        writer.wait_merging_threads()
        self._writer = None
        index = LexicalIndex(self._index, self._path)
        if self._path is not None:
            meta = {"schema_version": SCHEMA_VERSION, "products": len(index)}
            (self._path / _META_FILE).write_bytes(orjson.dumps(meta))
        return index

    def discard(self) -> None:
        """Drop the changes not committed yet and stop the writer's threads (it is then closed)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.rollback()
            writer.wait_merging_threads()

    def _open_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise RuntimeError("this LexicalWriter was committed already")
        return self._writer

    def _counted(self) -> None:
        self._pending += 1
        if self._pending >= self._commit_every:
            self._open_writer().commit()
            self._pending = 0


def _open_persisted(path: Path) -> tantivy.Index:
    meta_file = path / _META_FILE
    if not meta_file.is_file() or not tantivy.Index.exists(str(path)):
        raise FileNotFoundError(f"{path} holds no cartagent lexical index")
    meta = orjson.loads(meta_file.read_bytes())
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(
            f"{path}: index schema version {meta.get('schema_version')} is not "
            f"{SCHEMA_VERSION}; rebuild it"
        )
    return tantivy.Index.open(str(path))


# -------------------------------------------------------------------- indexing


def _document(product: Product) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text("id", product.id)
    doc.add_text("title", prep(product.title))
    if product.description:
        doc.add_text("description", prep(product.description))
    if product.brand:
        doc.add_text("brand", prep(product.brand))
    if product.category:
        doc.add_text("category", prep(" ".join(product.category)))
    values: list[str] = []
    for items in product.attributes.values():
        values.extend(items)
    for options in product.option_values().values():
        values.extend(sorted(options))
    if values:
        doc.add_text("attributes", prep(" . ".join(values)))
    for variant in product.variants:
        doc.add_float("price", float(variant.price))
    low, high = product.price_min, product.price_max
    doc.add_float("price_min", float(low) if low is not None else _NO_PRICE_LOW)
    doc.add_float("price_max", float(high) if high is not None else _NO_PRICE_HIGH)
    doc.add_float("rating", product.rating if product.rating is not None else NO_RATING)
    doc.add_unsigned("available", 1 if product.available else 0)
    doc.add_bytes("product", product.model_dump_json().encode())
    return doc


# -------------------------------------------------------------------- ordering


def _enough(sort: str, found: list[tuple[Hit, float]], k: int, next_value: float) -> bool:
    """Whether no later candidate (at ``next_value`` in tantivy's order) can enter the top k."""
    if len(found) < k or sort not in ("price_asc", "price_desc"):
        return False
    prices = sorted(v for _, v in found)
    if sort == "price_asc":
        return next_value > prices[k - 1]
    return next_value < prices[-k]


class _Parsed(Mapping[str, Product]):
    """Stored products by id, each parsed when first asked for."""

    def __init__(self, index: LexicalIndex, docs: dict[str, tantivy.Document]) -> None:
        self._index = index
        self._docs = docs

    def __getitem__(self, product_id: str) -> Product:
        return self._index._parse(self._docs[product_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)
