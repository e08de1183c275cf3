"""Exact structured filtering of products against a :class:`SearchQuery`, shared by retrievers.

Every retriever (lexical BM25, dense vectors, hybrid) produces *candidates*; this module decides
exactly, variant by variant, which candidates satisfy the query and why. A product matches when
one of its variants satisfies the options, price, availability and exclusions *together*; that
variant is reported in :attr:`Hit.variant` and every satisfied constraint in :attr:`Hit.matched`.

Matching rules (case-insensitive, on stemmed words, so "hooded" excludes "hood"):

* ``attributes`` and ``options`` are one pool of ``name -> alternatives`` constraints, checked
  against the product's attributes merged with the variant's options (a query may say
  ``material`` as an attribute where the catalog has it as an option). A value matches when
  its words are a subset of a value under that name (``"blue"`` matches ``"light blue"``);
  names containing ``size`` need the same size (``"10"`` is not ``"10.5"``), compared without
  the word "size", with units spelled one way and letter sizes read as words (``"full"`` is
  ``"full size"``, ``"15 inch"`` is ``"15-inch"``, ``"L"`` is ``"large"``). When the product
  has no value at all under that name, the words may appear anywhere in its title,
  description, category, attributes or the variant's options instead; words that some of
  its variants' options hold must be the variant's own (``"100 ml"`` picks the 100ml bottle,
  not a 30ml one whose description lists every size).
* A word of ``text`` that names a yes/no option of the product ("waterproof boots", where the
  variants say ``waterproof: yes`` or ``no``) asks for a variant that says yes.
* ``category`` matches words of the category path, or of the title.
* ``exclude``: with a ``field``, variants/products whose value under that name matches are
  dropped (falling back to the title when the product has no such name); without one, products
  whose title or attributes contain the value, and variants whose options do.
* Price bounds are inclusive, compare variant prices in the query's currency (no conversion).

Use: ``words = Words(analyzer()); plan = Plan.of(query, words); hit = check(plan, product,
score, words)`` (``None`` when the product does not match), then :func:`ordered` for the
query's sort.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property, lru_cache
from typing import Any

import tantivy
from pydantic import BaseModel, ConfigDict, Field

from ..catalog import Product, Variant
from .amounts import same_amount
from .query import Exclusion, SearchQuery
from .vocabulary import NO, SIZE_WORDS, YES

__all__ = [
    "NO_RATING",
    "Hit",
    "Plan",
    "Words",
    "analyzer",
    "canonical_key",
    "check",
    "matching_variants",
    "order_value",
    "ordered",
    "prep",
    "same_option_value",
    "shared_words",
    "spellings",
]

_MAX_QUERY_TOKENS = 64
_YES_NO = YES | NO

NO_RATING = -1.0

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
    score: float = Field(
        description=(
            "Relevance: BM25 of the free text (lexical; 0.0 without free text), cosine "
            "similarity (dense) or the reciprocal rank fusion score (hybrid)."
        )
    )
    variant: Variant | None = Field(
        default=None, description="The variant that satisfies the constraints (best first)."
    )
    matched: list[str] = Field(
        default_factory=list,
        description='The constraints satisfied, e.g. ["text: shirt", "color=red", "price<=20"].',
    )


def analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


_NUMBER_UNIT = re.compile(r"(?<=\d)(?=[^\W\d_])")
_NON = re.compile(r"\b(non)-(?=[^\W\d_])", re.IGNORECASE)


def prep(text: str) -> str:
    """Split a number from the unit glued to it ("1000ml" -> "1000 ml"), as queries write it,
    and keep "non-" on its word ("non-polarized" -> "nonpolarized"): split, the word would
    read as the very thing it denies."""
    return _NON.sub(r"\1", _NUMBER_UNIT.sub(" ", text))


@lru_cache(maxsize=4096)  # a catalog has few option names, asked for on every variant check
def canonical_key(key: str) -> str:
    """An option or attribute name as filters compare it: "Colour" and "colors" are "color"."""
    name = " ".join(key.split()).lower()
    return _KEY_ALIASES.get(name, name)


def _normalised(value: str) -> str:
    return " ".join(value.split()).casefold()


_SIZE_UNITS = {'"': "inch", "in": "inch", "inches": "inch", "foot": "ft", "feet": "ft"}
_SIZE_PARTS = re.compile(r'\d+(?:\.\d+)?|[^\W\d_]+|"')


def _size_parts(value: str) -> str:
    """``value``'s numbers and words, the word "size" dropped, units spelled one way."""
    parts = [
        _SIZE_UNITS.get(part, part)
        for part in _SIZE_PARTS.findall(value.casefold())
        if part not in ("size", "sized")
    ]
    return " ".join(parts)


# Every way of saying a letter size, as _size_parts writes it -> the letter: "size L" is a
# large, "2XL" an "xx-large" (the rule parser's table).
_LETTER_SIZES = {
    _size_parts(form): letter.casefold()
    for letter, forms in SIZE_WORDS.items()
    for form in (letter, *forms)
}


@lru_cache(maxsize=4096)  # sizes repeat across variants and products
def _size_form(value: str) -> str:
    """A size as comparable words: the word "size" dropped, a unit split from its number and
    spelled one way, a letter size as its letter ("full size" -> "full", "15-inch" -> "15
    inch", "100ml" -> "100 ml", "extra large" -> "xl")."""
    joined = _size_parts(value)
    return _LETTER_SIZES.get(joined, joined)


def _same_size(wanted: str, offered: str) -> bool:
    a, b = _size_form(wanted), _size_form(offered)
    if a == b:
        return True
    try:
        return Decimal(a) == Decimal(b)
    except (InvalidOperation, ValueError):
        return False


_NUMBER_IN = re.compile(r"\d")


def same_option_value(name: str, wanted: str, offered: str) -> bool:
    """Whether ``offered``, a variant's value of the option ``name``, is the value ``wanted``:
    sizes by :func:`_same_size` ("large" is "L", "10" is "10.0"), "grey" is "gray", amounts
    with their unit however spaced ("128 gb" is "128GB") or in another unit ("1 l" is
    "1000ml"), other values case and spacing aside."""
    if "size" in canonical_key(name):
        return _same_size(wanted, offered)
    a, b = _normalised(wanted), _normalised(offered)
    if a == b or _spelled_one_way(a) == _spelled_one_way(b):  # "space gray" is "space grey"
        return True
    # "128 gb" is "128GB": an amount and its unit, however they are spaced or spelled; and
    # "1 l" is "1000ml": one amount in two units.
    if not _NUMBER_IN.search(a):
        return False
    return _size_parts(a) == _size_parts(b) or same_amount(wanted, offered)


def _fmt_price(value: Decimal) -> str:
    return f"{value:f}"


# British and American spellings of the same word compare equal ("grey" matches "gray").
# Keys and values are stemmed forms, as the analyzer emits them.
_SPELLINGS = {"grey": "gray", "colour": "color", "jewelleri": "jewelri", "aluminium": "aluminum"}
_OTHER_SPELLINGS = {american: british for british, american in _SPELLINGS.items()}


def _spelled_one_way(value: str) -> str:
    return " ".join(_SPELLINGS.get(word, word) for word in value.split())


def spellings(word: str) -> tuple[str, ...]:
    """``word`` (as :meth:`Words.tokens` gives it) and the other spellings an index may hold:
    catalogs are indexed as written, so "gray" must also find "grey"."""
    other = _OTHER_SPELLINGS.get(word)
    return (word,) if other is None else (word, other)


@lru_cache(maxsize=1)
def shared_words() -> Words:
    """One memoised :class:`Words` for code that reads requests outside an index (the
    assistant's question readers): the analyser is built once, not per turn."""
    return Words(analyzer())


class Words:
    """Stemmed, lower-cased word sets, memoised (catalog values repeat a lot)."""

    def __init__(self, analyzer: tantivy.TextAnalyzer) -> None:
        self._analyzer = analyzer
        self._cache: dict[str, frozenset[str]] = {}

    def tokens(self, text: str) -> list[str]:
        return [_SPELLINGS.get(t, t) for t in self._analyzer.analyze(prep(text)) if t != "s"]

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
class Plan:
    """A query prepared for matching: canonical keys, analysed words."""

    query: SearchQuery
    text_tokens: list[str]
    constraints: list[_Constraint]
    category_words: frozenset[str]
    brand_words: frozenset[str]
    exclusions: list[tuple[Exclusion, str | None, frozenset[str]]] = field(default_factory=list)

    @cached_property
    def said(self) -> frozenset[str]:
        """The text's tokens as a set (made once per plan, not per candidate checked)."""
        return frozenset(self.text_tokens)

    @classmethod
    def of(cls, query: SearchQuery, words: Words) -> Plan:
        tokens = list(
            dict.fromkeys(t for t in words.tokens(query.text[:4000]) if t not in _STOPWORDS)
        )[:_MAX_QUERY_TOKENS]
        merged: dict[str, list[str]] = {}
        for source in (query.attributes, query.options):
            for key, values in source.items():
                bucket = merged.setdefault(canonical_key(key), [])
                bucket.extend(v for v in values if v.strip() and v not in bucket)
        constraints = [_Constraint(k, tuple(v)) for k, v in merged.items() if v]
        exclusions = [
            (e, canonical_key(e.field) if e.field else None, words(e.value)) for e in query.exclude
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
    option_words: frozenset[str]  # of every variant's options
    # Options whose every value is yes or no ("waterproof"), by canonical name: their words.
    flags: dict[str, frozenset[str]]


# -------------------------------------------------------------------- exact matching


def _view(product: Product, words: Words) -> _ProductView:
    attributes: dict[str, tuple[str, ...]] = {}
    for key, values in product.attributes.items():
        name = canonical_key(key)
        attributes[name] = attributes.get(name, ()) + tuple(values)
    everywhere = set(words(product.title)) | words(product.description)
    category = words(" ".join(product.category))
    everywhere |= category
    for values in attributes.values():
        for value in values:
            everywhere |= words(value)
    option_keys = frozenset(
        canonical_key(k) for variant in product.variants for k in variant.options
    )
    option_words: set[str] = set()
    flags: dict[str, frozenset[str]] = {}
    for name, offered in product.option_values().items():
        for value in offered:
            option_words |= words(value)
        if offered and all(_normalised(v) in _YES_NO for v in offered):
            flags[canonical_key(name)] = words(name)
    return _ProductView(
        product=product,
        title=words(product.title),
        category=category,
        brand=words(product.brand) if product.brand else frozenset(),
        everywhere=frozenset(everywhere),
        attributes=attributes,
        option_keys=option_keys,
        option_words=frozenset(option_words),
        flags=flags,
    )


def _value_matches(key: str, wanted: str, offered: str, words: Words) -> bool:
    if "size" in key:
        return _same_size(wanted, offered)
    want = words(wanted)
    if not want:
        return _normalised(wanted) == _normalised(offered)
    if want <= words(offered):
        return True
    # "1 l" is "1000ml": one amount in another unit.
    return bool(_NUMBER_IN.search(wanted)) and same_amount(wanted, offered)


def _variant_values(view: _ProductView, variant: Variant | None) -> dict[str, list[str]]:
    """The product's attributes with the variant's options overriding the same names.

    Catalogs often list every variant's material (say) as a product attribute too; the
    variant's own value is the precise one.
    """
    values: dict[str, list[str]] = {k: list(v) for k, v in view.attributes.items()}
    if variant is not None:
        own: dict[str, list[str]] = {}
        for key, value in variant.options.items():
            own.setdefault(canonical_key(key), []).append(value)
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
    words: Words,
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
    plan: Plan,
    view: _ProductView,
    variant: Variant | None,
    words: Words,
    flags: Sequence[str] = (),
) -> list[str] | None:
    """The constraints ``variant`` (``None``: the product alone) satisfies, or ``None``;
    ``flags`` are yes/no options that must say yes."""
    matched: list[str] = []
    values = _variant_values(view, variant)
    for flag in flags:
        if not _says_yes(values, flag):
            return None
        matched.append(f"{flag}=yes")
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
                yes_no = _flag_named(view, want)
                if yes_no is not None:  # "features: waterproof" where variants say waterproof: no
                    if _says_yes(values, yes_no):
                        hit = wanted
                        break
                    continue
                # Where the product's variants differ in it ("size: 30ml" or "100ml"), the
                # words must be this variant's; a description listing every option is no match.
                own = want <= view.option_words
                if want and want <= (option_words if own else view.everywhere | option_words):
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


def _flag_named(view: _ProductView, want: frozenset[str]) -> str | None:
    """The yes/no option whose name is the words ``want``, if the product has one."""
    if want:
        for name, named in view.flags.items():
            if named == want:
                return name
    return None


def _says_yes(values: Mapping[str, list[str]], flag: str) -> bool:
    return any(_normalised(v) in YES for v in values.get(flag, ()))


def _price_label(low: Decimal | None, high: Decimal | None, currency: str) -> str:
    if low is not None and high is not None:
        return f"price {_fmt_price(low)}-{_fmt_price(high)} {currency}"
    if high is not None:
        return f"price<={_fmt_price(high)} {currency}"
    if low is not None:
        return f"price>={_fmt_price(low)} {currency}"
    return f"priced in {currency}"


def check(plan: Plan, product: Product, score: float, words: Words) -> Hit | None:
    """``product`` as a hit when it (one of its variants) satisfies ``plan``, else ``None``."""
    view = _view(product, words)
    matched: list[str] = []
    if plan.text_tokens:
        found = [t for t in plan.text_tokens if t in view.everywhere or t in view.option_words]
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

    # A word of the request naming a yes/no option ("waterproof boots") asks for its yes.
    flags = [name for name, named in view.flags.items() if named and named <= plan.said]
    candidates: Sequence[Variant | None] = product.variants or (None,)
    best: tuple[tuple[Any, ...], Variant | None, list[str]] | None = None
    for variant in candidates:
        variant_matched = _check_variant(plan, view, variant, words, flags)
        if variant_matched is None:
            continue
        rank = _variant_rank(plan, variant, words)
        if best is None or rank < best[0]:
            best = (rank, variant, variant_matched)
    if best is None:
        return None
    return Hit(product=product, score=score, variant=best[1], matched=matched + best[2])


def matching_variants(plan: Plan, product: Product, words: Words) -> list[Variant]:
    """Every variant of ``product`` that satisfies ``plan`` on its own.

    Judged against the whole product (its other variants tell which words are options), so a
    variant matches exactly when :func:`check` of the product could have chosen it.
    """
    if not product.variants or check(plan, product, 0.0, words) is None:
        return []
    view = _view(product, words)
    flags = [name for name, named in view.flags.items() if named and named <= plan.said]
    return [v for v in product.variants if _check_variant(plan, view, v, words, flags) is not None]


def _variant_rank(plan: Plan, variant: Variant | None, words: Words) -> tuple[Any, ...]:
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


def order_value(sort: str, hit: Hit, value: float) -> float:
    if sort in ("price_asc", "price_desc"):
        if hit.variant is None:
            return math.inf if sort == "price_asc" else -math.inf
        return float(hit.variant.price)
    if sort == "rating":
        return hit.product.rating if hit.product.rating is not None else NO_RATING
    return value


def ordered(sort: str, found: list[tuple[Hit, float]]) -> list[Hit]:
    if sort == "price_asc":
        ranked = sorted(found, key=lambda f: (f[1], -f[0].score))
    elif sort == "price_desc":
        ranked = sorted(found, key=lambda f: (-f[1], -f[0].score))
    elif sort == "rating":
        ranked = sorted(found, key=lambda f: (-f[1], -f[0].product.rating_count, -f[0].score))
    else:
        ranked = found  # tantivy's order (BM25, or rating when browsing)
    return [hit for hit, _ in ranked]
