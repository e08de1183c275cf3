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

Matching rules (case-insensitive, on stemmed words, so "hooded" excludes "hood"):

* ``attributes`` and ``options`` are one pool of ``name -> alternatives`` constraints, checked
  against the product's attributes merged with the variant's options (a query may say
  ``material`` as an attribute where the catalog has it as an option). A value matches when
  its words are a subset of a value under that name (``"blue"`` matches ``"light blue"``);
  names containing ``size`` need an exact value (``"10"`` is not ``"10.5"``). When the product
  has no value at all under that name, the words may appear anywhere in its title,
  description, category, attributes or the variant's options instead.
* ``category`` matches words of the category path, or of the title.
* ``exclude``: with a ``field``, variants/products whose value under that name matches are
  dropped (falling back to the title when the product has no such name); without one, products
  whose title or attributes contain the value, and variants whose options do.
* Price bounds are inclusive, compare variant prices in the query's currency (no conversion).

Sorting: ``relevance`` (BM25; browsing without text orders by rating), ``price_asc`` /
``price_desc`` (by the chosen variant's price; exact, with early stopping on the product's
min/max price), ``rating``.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson
import tantivy
from pydantic import BaseModel, ConfigDict, Field

from ..catalog import Product, Variant
from .query import Exclusion, SearchQuery

__all__ = ["Hit", "LexicalIndex"]

SCHEMA_VERSION = 1
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
_MAX_QUERY_TOKENS = 64
_NO_PRICE_LOW = 1e18  # price_min of a product without variants: sorts last ascending
_NO_PRICE_HIGH = -1.0  # price_max of a product without variants: sorts last descending
_NO_RATING = -1.0
_PRICE_SLACK = 0.005  # float prefilter slack; the exact check uses Decimal
_FIRST_PAGE = 64
_MAX_PAGE = 4096
_CACHE_SIZE = 4096  # parsed products kept per index
_WORD_CACHE_SIZE = 100_000  # analysed strings kept per index

# Query words too common in shopper requests to be evidence of relevance.
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "s",
        "show",
        "some",
        "that",
        "the",
        "their",
        "them",
        "these",
        "this",
        "to",
        "want",
        "we",
        "with",
        "you",
        "your",
    }
)
# Option/attribute names that are spelled more than one way; the value is the canonical name.
_KEY_ALIASES = {"colour": "color", "colours": "color", "colors": "color", "sizes": "size"}


class Hit(BaseModel):
    """One search result: the product, its score, the best-matching variant and why it matched."""

    model_config = ConfigDict(frozen=True)

    product: Product
    score: float = Field(description="BM25 relevance of the free text; 0.0 without free text.")
    variant: Variant | None = Field(
        default=None, description="The variant that satisfies the constraints (best first)."
    )
    matched: list[str] = Field(
        default_factory=list,
        description='The constraints satisfied, e.g. ["text: shirt", "color=red", "price<=20"].',
    )


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


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


_NUMBER_UNIT = re.compile(r"(?<=\d)(?=[^\W\d_])")


def _prep(text: str) -> str:
    """Split a number from the unit glued to it ("1000ml" -> "1000 ml"), as queries write it."""
    return _NUMBER_UNIT.sub(" ", text)


def _canonical_key(key: str) -> str:
    name = " ".join(key.split()).lower()
    return _KEY_ALIASES.get(name, name)


def _normalised(value: str) -> str:
    return " ".join(value.split()).casefold()


def _same_size(wanted: str, offered: str) -> bool:
    a, b = _normalised(wanted), _normalised(offered)
    if a == b:
        return True
    try:
        return Decimal(a) == Decimal(b)
    except (InvalidOperation, ValueError):
        return False


def _fmt_price(value: Decimal) -> str:
    return f"{value:f}"


class _Words:
    """Stemmed, lower-cased word sets, memoised (catalog values repeat a lot)."""

    def __init__(self, analyzer: tantivy.TextAnalyzer) -> None:
        self._analyzer = analyzer
        self._cache: dict[str, frozenset[str]] = {}

    def tokens(self, text: str) -> list[str]:
        return [t for t in self._analyzer.analyze(_prep(text)) if t != "s"]

    def __call__(self, text: str) -> frozenset[str]:
        found = self._cache.get(text)
        if found is not None:
            return found
        words = frozenset(self.tokens(text))
        if len(self._cache) >= _WORD_CACHE_SIZE:
            self._cache.clear()
        self._cache[text] = words
        return words


@dataclass(frozen=True)
class _Constraint:
    key: str
    values: tuple[str, ...]


@dataclass
class _Plan:
    """A query prepared for matching: canonical keys, analysed words."""

    query: SearchQuery
    text_tokens: list[str]
    constraints: list[_Constraint]
    category_words: frozenset[str]
    brand_words: frozenset[str]
    exclusions: list[tuple[Exclusion, str | None, frozenset[str]]] = field(default_factory=list)

    @classmethod
    def of(cls, query: SearchQuery, words: _Words) -> _Plan:
        tokens = list(
            dict.fromkeys(t for t in words.tokens(query.text[:4000]) if t not in _STOPWORDS)
        )[:_MAX_QUERY_TOKENS]
        merged: dict[str, list[str]] = {}
        for source in (query.attributes, query.options):
            for key, values in source.items():
                bucket = merged.setdefault(_canonical_key(key), [])
                bucket.extend(v for v in values if v.strip() and v not in bucket)
        constraints = [_Constraint(k, tuple(v)) for k, v in merged.items() if v]
        exclusions = [
            (e, _canonical_key(e.field) if e.field else None, words(e.value)) for e in query.exclude
        ]
        return cls(
            query=query,
            text_tokens=tokens,
            constraints=constraints,
            category_words=words(query.category) if query.category else frozenset(),
            brand_words=words(query.brand) if query.brand else frozenset(),
            exclusions=[x for x in exclusions if x[2]],
        )


@dataclass
class _ProductView:
    """What matching needs to know about one product, computed once per candidate."""

    product: Product
    title: frozenset[str]
    category: frozenset[str]
    brand: frozenset[str]
    everywhere: frozenset[str]  # title, description, category, attributes (not options)
    attributes: dict[str, tuple[str, ...]]
    option_keys: frozenset[str]


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
        self._analyzer = _analyzer()
        index.register_tokenizer(_TOKENIZER, self._analyzer)
        self._words = _Words(self._analyzer)
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
        schema = _schema()
        if path is not None:
            path = Path(path)
            path.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(schema, path=str(path), reuse=False)
        else:
            index = tantivy.Index(schema)
        analyzer = _analyzer()
        index.register_tokenizer(_TOKENIZER, analyzer)
        writer = index.writer(heap_size=heap_size)
        seen: set[str] = set()
        count = 0
        for product in products:
            if product.id in seen:
                raise ValueError(f"product id {product.id!r} appears more than once")
            seen.add(product.id)
            writer.add_document(_document(product))
            count += 1
            if count % commit_every == 0:
                writer.commit()
        writer.commit()
        writer.wait_merging_threads()
        if path is not None:
            meta = {"schema_version": SCHEMA_VERSION, "products": count}
            (path / _META_FILE).write_bytes(orjson.dumps(meta))
        return cls(index, path)

    @classmethod
    def open(cls, path: Path) -> LexicalIndex:
        """Reopen an index :meth:`build` persisted in ``path``."""
        path = Path(path)
        meta_file = path / _META_FILE
        if not meta_file.is_file() or not tantivy.Index.exists(str(path)):
            raise FileNotFoundError(f"{path} holds no cartagent lexical index")
        meta = orjson.loads(meta_file.read_bytes())
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(
                f"{path}: index schema version {meta.get('schema_version')} is not "
                f"{SCHEMA_VERSION}; rebuild it"
            )
        return cls(tantivy.Index.open(str(path)), path)

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

    def _product(self, address: tantivy.DocAddress) -> Product:
        doc = self._searcher.doc(address)
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
        variant-level checks (``filter``) are added to it.
        """
        lexical_ms = 0.0
        filter_ms = 0.0
        hits: list[Hit] = []
        if k > 0:
            plan = _Plan.of(query, self._words)
            lexical_ms, filter_ms, hits = self._run(plan, k)
        if timings is not None:
            timings["lexical"] = timings.get("lexical", 0.0) + lexical_ms
            timings["filter"] = timings.get("filter", 0.0) + filter_ms
        return hits

    def _run(self, plan: _Plan, k: int) -> tuple[float, float, list[Hit]]:
        sort = plan.query.sort
        started = time.perf_counter()
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
        lexical_s = time.perf_counter() - started
        filter_s = 0.0

        found: list[tuple[Hit, float]] = []  # hit with its order value (score, price, rating)
        offset, page = 0, max(_FIRST_PAGE, 4 * k)
        done = False
        while not done:
            t0 = time.perf_counter()
            rows = self._searcher.search(
                full,
                page,
                count=False,
                order_by_field=order_field,
                offset=offset,
                order=order,
            ).hits
            t1 = time.perf_counter()
            lexical_s += t1 - t0
            for value, address in rows:
                if _enough(sort, found, k, float(value)):
                    done = True
                    break
                product = self._product(address)
                score = float(value) if order_field is None else 0.0
                hit = _check(plan, product, score, self._words)
                if hit is not None:
                    found.append((hit, _order_value(sort, hit, float(value))))
                    if sort in ("relevance", "rating") and len(found) >= k:
                        done = True
                        break
            filter_s += time.perf_counter() - t1
            if len(rows) < page:
                break
            offset += page
            page = min(page * 2, _MAX_PAGE)

        t2 = time.perf_counter()
        hits = _ordered(sort, found)[:k]
        t3 = time.perf_counter()
        filter_s += t3 - t2
        if order_field is not None and text_query is not None and hits:
            hits = self._rescore(text_query, hits)
            if sort == "rating":
                hits = _ordered(sort, [(h, _order_value(sort, h, 0.0)) for h in hits])
            lexical_s += time.perf_counter() - t3
        return lexical_s * 1000, filter_s * 1000, hits

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

    def _all_words(self, field_names: Sequence[str], words: Iterable[str]) -> tantivy.Query:
        """Every word appears in at least one of ``field_names``."""
        clauses = []
        for word in sorted(words):
            terms = [self._term(f, word) for f in field_names]
            any_field = (
                terms[0]
                if len(terms) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in terms])
            )
            clauses.append((tantivy.Occur.Must, any_field))
        return tantivy.Query.boolean_query(clauses)

    def _text_query(self, plan: _Plan) -> tantivy.Query | None:
        if not plan.text_tokens:
            return None
        per_token = [
            tantivy.Query.disjunction_max_query(
                [
                    tantivy.Query.boost_query(self._term(name, token), boost)
                    for name, boost in _TEXT_FIELDS.items()
                ],
                _DISMAX_TIE,
            )
            for token in plan.text_tokens
        ]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_token])

    def _prefilter(self, plan: _Plan, text_query: tantivy.Query | None) -> tantivy.Query:
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


# -------------------------------------------------------------------- indexing


def _document(product: Product) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_text("id", product.id)
    doc.add_text("title", _prep(product.title))
    if product.description:
        doc.add_text("description", _prep(product.description))
    if product.brand:
        doc.add_text("brand", _prep(product.brand))
    if product.category:
        doc.add_text("category", _prep(" ".join(product.category)))
    values: list[str] = []
    for items in product.attributes.values():
        values.extend(items)
    for options in product.option_values().values():
        values.extend(sorted(options))
    if values:
        doc.add_text("attributes", _prep(" . ".join(values)))
    for variant in product.variants:
        doc.add_float("price", float(variant.price))
    low, high = product.price_min, product.price_max
    doc.add_float("price_min", float(low) if low is not None else _NO_PRICE_LOW)
    doc.add_float("price_max", float(high) if high is not None else _NO_PRICE_HIGH)
    doc.add_float("rating", product.rating if product.rating is not None else _NO_RATING)
    doc.add_unsigned("available", 1 if product.available else 0)
    doc.add_bytes("product", product.model_dump_json().encode())
    return doc


# -------------------------------------------------------------------- exact matching


def _view(product: Product, words: _Words) -> _ProductView:
    attributes: dict[str, tuple[str, ...]] = {}
    for key, values in product.attributes.items():
        name = _canonical_key(key)
        attributes[name] = attributes.get(name, ()) + tuple(values)
    everywhere = set(words(product.title)) | words(product.description)
    category = words(" ".join(product.category))
    everywhere |= category
    for values in attributes.values():
        for value in values:
            everywhere |= words(value)
    option_keys = frozenset(
        _canonical_key(k) for variant in product.variants for k in variant.options
    )
    return _ProductView(
        product=product,
        title=words(product.title),
        category=category,
        brand=words(product.brand) if product.brand else frozenset(),
        everywhere=frozenset(everywhere),
        attributes=attributes,
        option_keys=option_keys,
    )


def _value_matches(key: str, wanted: str, offered: str, words: _Words) -> bool:
    if "size" in key:
        return _same_size(wanted, offered)
    want = words(wanted)
    if not want:
        return _normalised(wanted) == _normalised(offered)
    return want <= words(offered)


def _variant_values(view: _ProductView, variant: Variant | None) -> dict[str, list[str]]:
    """The product's attributes with the variant's options overriding the same names.

    Catalogs often list every variant's material (say) as a product attribute too; the
    variant's own value is the precise one.
    """
    values: dict[str, list[str]] = {k: list(v) for k, v in view.attributes.items()}
    if variant is not None:
        own: dict[str, list[str]] = {}
        for key, value in variant.options.items():
            own.setdefault(_canonical_key(key), []).append(value)
        values.update(own)
    return values


def _has_name(names: Iterable[str], key: str) -> bool:
    suffix = " " + key
    return any(name == key or name.endswith(suffix) for name in names)


def _named(values: Mapping[str, list[str]], key: str) -> list[str] | None:
    """The values under ``key``, else under compound names ending in it ("dial color")."""
    if key in values:
        return values[key]
    suffix = " " + key
    found = [v for name, offered in values.items() if name.endswith(suffix) for v in offered]
    return found or None


def _excluded(
    view: _ProductView,
    values: Mapping[str, list[str]],
    key: str | None,
    unwanted: frozenset[str],
    words: _Words,
) -> bool:
    if key is not None and _has_name(view.attributes.keys() | view.option_keys, key):
        suffix = " " + key
        return any(
            unwanted <= words(v)
            for name, offered in values.items()
            if name == key or name.endswith(suffix)
            for v in offered
        )
    if unwanted <= view.title:
        return True
    if key is None:
        return any(unwanted <= words(v) for vs in values.values() for v in vs)
    return False


def _check_variant(
    plan: _Plan, view: _ProductView, variant: Variant | None, words: _Words
) -> list[str] | None:
    """The constraints ``variant`` (``None``: the product alone) satisfies, or ``None``."""
    matched: list[str] = []
    values = _variant_values(view, variant)
    option_words: set[str] = set()
    if variant is not None:
        for value in variant.options.values():
            option_words |= words(value)
    for constraint in plan.constraints:
        offered = _named(values, constraint.key)
        hit: str | None = None
        for wanted in constraint.values:
            if offered:
                if any(_value_matches(constraint.key, wanted, o, words) for o in offered):
                    hit = wanted
                    break
            else:
                want = words(wanted)
                if want and want <= (view.everywhere | option_words):
                    hit = wanted
                    break
        if hit is None:
            return None
        matched.append(f"{constraint.key}={hit}")
    query = plan.query
    price = query.price
    if price is not None:
        if variant is None or variant.currency != price.currency.upper():
            return None
        if price.min is not None and variant.price < price.min:
            return None
        if price.max is not None and variant.price > price.max:
            return None
        matched.append(_price_label(price.min, price.max, price.currency))
    if query.available_only:
        if variant is None or not variant.available:
            return None
        matched.append("in stock")
    for exclusion, key, unwanted in plan.exclusions:
        if _excluded(view, values, key, unwanted, words):
            return None
        label = f"{key}={exclusion.value}" if key else exclusion.value
        matched.append(f"not {label}")
    return matched


def _price_label(low: Decimal | None, high: Decimal | None, currency: str) -> str:
    if low is not None and high is not None:
        return f"price {_fmt_price(low)}-{_fmt_price(high)} {currency}"
    if high is not None:
        return f"price<={_fmt_price(high)} {currency}"
    if low is not None:
        return f"price>={_fmt_price(low)} {currency}"
    return f"priced in {currency}"


def _check(plan: _Plan, product: Product, score: float, words: _Words) -> Hit | None:
    """``product`` as a hit when it (one of its variants) satisfies ``plan``, else ``None``."""
    view = _view(product, words)
    matched: list[str] = []
    if plan.text_tokens:
        found = [
            t for t in plan.text_tokens if t in view.everywhere or _in_options(product, t, words)
        ]
        if found:
            matched.append("text: " + " ".join(found))
    if plan.category_words:
        if not (plan.category_words <= view.category or plan.category_words <= view.title):
            return None
        matched.append(f"category={plan.query.category}")
    if plan.brand_words:
        if not plan.brand_words <= view.brand:
            return None
        matched.append(f"brand={product.brand}")
    if plan.query.min_rating is not None:
        if product.rating is None or product.rating + 1e-9 < plan.query.min_rating:
            return None
        matched.append(f"rating>={plan.query.min_rating:g}")
    for _exclusion, key, unwanted in plan.exclusions:
        # Product-level part of an exclusion, decided once (variants refine below).
        if key is None and unwanted <= view.title:
            return None

    candidates: Sequence[Variant | None] = product.variants or (None,)
    best: tuple[tuple[Any, ...], Variant | None, list[str]] | None = None
    for variant in candidates:
        variant_matched = _check_variant(plan, view, variant, words)
        if variant_matched is None:
            continue
        rank = _variant_rank(plan, variant, words)
        if best is None or rank < best[0]:
            best = (rank, variant, variant_matched)
    if best is None:
        return None
    return Hit(product=product, score=score, variant=best[1], matched=matched + best[2])


def _in_options(product: Product, token: str, words: _Words) -> bool:
    return any(token in words(v) for values in product.option_values().values() for v in values)


def _variant_rank(plan: _Plan, variant: Variant | None, words: _Words) -> tuple[Any, ...]:
    """Smaller is better: in stock first, then the sort's price order, then text overlap."""
    if variant is None:
        return (0,)
    overlap = 0
    if plan.text_tokens:
        option_words: set[str] = set()
        for value in variant.options.values():
            option_words |= words(value)
        overlap = sum(1 for t in plan.text_tokens if t in option_words)
    price = variant.price
    if plan.query.sort == "price_desc":
        return (not variant.available, -price, -overlap)
    if plan.query.sort == "price_asc":
        return (not variant.available, price, -overlap)
    return (not variant.available, -overlap, price)


# -------------------------------------------------------------------- ordering


def _order_value(sort: str, hit: Hit, value: float) -> float:
    if sort in ("price_asc", "price_desc"):
        if hit.variant is None:
            return math.inf if sort == "price_asc" else -math.inf
        return float(hit.variant.price)
    if sort == "rating":
        return hit.product.rating if hit.product.rating is not None else _NO_RATING
    return value


def _enough(sort: str, found: list[tuple[Hit, float]], k: int, next_value: float) -> bool:
    """Whether no later candidate (at ``next_value`` in tantivy's order) can enter the top k."""
    if len(found) < k or sort not in ("price_asc", "price_desc"):
        return False
    prices = sorted(v for _, v in found)
    if sort == "price_asc":
        return next_value > prices[k - 1]
    return next_value < prices[-k]


def _ordered(sort: str, found: list[tuple[Hit, float]]) -> list[Hit]:
    if sort == "price_asc":
        ranked = sorted(found, key=lambda f: (f[1], -f[0].score))
    elif sort == "price_desc":
        ranked = sorted(found, key=lambda f: (-f[1], -f[0].score))
    elif sort == "rating":
        ranked = sorted(found, key=lambda f: (-f[1], -f[0].product.rating_count, -f[0].score))
    else:
        ranked = found  # tantivy's order (BM25, or rating when browsing)
    return [hit for hit, _ in ranked]
