"""A product seen through the query conventions: what a shopper could ask for, and in which words.

:func:`listing_for` turns a catalog :class:`~cartagent.catalog.Product` into a :class:`Listing`:
its category in the canonical form queries use (``"running shoes"``, ``"pet bed"``), the noun a
shopper would type for it, its brand and gender, and for each variant an :class:`Offer` of
:class:`Facet` s. A facet pairs the words a request says (``"grey"``, ``"size large"``,
``"1000ml"``) with what the gold query holds for them (option ``color: gray``, option
``size: L``, option ``capacity: 1000 ml``), following the conventions of
:mod:`cartagent.retrieval.query` and the labelled understanding set:

* colours, materials, genders, sizes and the descriptors the retrieval vocabulary knows become
  options or attributes under the vocabulary's keys and canonical values;
* quantities are written ``"<number> <unit>"`` under the parser's key (``capacity``,
  ``length``, ``storage``...; ``ram`` for a RAM option);
* a material the vocabulary lacks is still a ``material`` attribute (its key is certain);
* any other descriptor (``"insulated"``, ``"side burner"``) is free ``text``;
* values that would be ambiguous in a request (numbers without a unit, words that name a
  category or a brand, ``"none"``) are left out rather than given a guessed meaning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from ..catalog.product import Product
from ..catalog.synthetic import KINDS
from ..retrieval import (
    ATTRIBUTE_OF,
    BRAND_OF,
    CATEGORIES,
    CATEGORY_OF,
    COLOR_OF,
    GENDER_OF,
    MATERIAL_OF,
    SIZE_OF,
    SIZE_WORDS,
    STOPWORDS,
    UNIT_KEY,
    UNITS,
    canonical_quantity,
)

__all__ = [
    "Facet",
    "FacetKind",
    "Listing",
    "Offer",
    "content_words",
    "facet_for",
    "is_quantity",
    "listing_for",
]

FacetKind = Literal["option", "attribute", "brand", "text"]


@dataclass(frozen=True)
class Facet:
    """One thing a request can ask for: the ``words`` it says and the gold field they fill."""

    kind: FacetKind
    key: str
    """Option or attribute name (``"color"``, ``"material"``); ``"brand"``; ``""`` for text."""
    value: str
    """The gold value: canonical for vocabulary words, the content words for text."""
    words: str
    """How a shopper writes it, e.g. ``"grey"``, ``"size M"``, ``"side burner"``."""
    feature: bool = False
    """A feature a product has (said after the noun with "with"), not an adjective."""


@dataclass(frozen=True)
class Offer:
    """One variant: its facets and its price."""

    variant_id: str
    facets: tuple[Facet, ...]
    price: Decimal | None
    available: bool


@dataclass(frozen=True)
class Listing:
    """A product as the training data speaks of it."""

    product_id: str
    category: str
    """Canonical category, e.g. ``"running shoes"``, ``"pet bed"``."""
    noun: str
    """The singular noun a request uses, e.g. ``"dog bed"`` (gold category ``pet bed``)."""
    plural: str
    brand: Facet | None
    gender: Facet | None
    offers: tuple[Offer, ...]
    rating: float | None
    rivals: tuple[str, ...] = ()
    """Other brands of the same kind of product, to rule out ("not by Nike")."""

    def alternatives(self, offer: Offer) -> list[Facet]:
        """Facets other variants offer under a key ``offer`` has, with another value."""
        mine = {(f.kind, f.key) for f in offer.facets}
        values = {(f.kind, f.key, f.value) for f in offer.facets}
        found: dict[tuple[str, str, str], Facet] = {}
        for other in self.offers:
            for facet in other.facets:
                ident = (facet.kind, facet.key, facet.value)
                if (facet.kind, facet.key) in mine and ident not in values:
                    found.setdefault(ident, facet)
        return list(found.values())


_QUANTITY_KEYS = frozenset(UNIT_KEY.values()) | {"ram"}
_KIND_NOUNS = {kind.noun.lower() for kind in KINDS}
_KIND_BRANDS = {kind.noun.lower(): kind.brands for kind in KINDS}
_BED_SIZES = frozenset({"twin", "twin xl", "full", "queen", "king", "california king"})
_NOTHING = frozenset({"none", "no", "n/a", "not resistant", "standard", "other"})
# Bare level words read better with their option name: "high brightness", not "high".
_LEVELS = frozenset({"high", "low", "medium", "fixed", "full", "half", "basic", "plain", "custom"})
# Options and attributes whose values are things a product has ("with a side burner").
_FEATURE_KEYS = frozenset({"feature", "features", "hood", "compartment", "tilt mechanism"})
_ADJECTIVE_ENDS = ("compatible", "resistant", "safe", "proof", "free", "wicking")
_PERSON_GENDERS = frozenset({"women", "men", "unisex", "girls", "boys", "kids", "baby"})
_TOKEN = re.compile(r"[\w][\w'&.+/-]*")
# Words that would name a category or a brand inside a descriptor ("laptop" compartment).
_AMBIGUOUS = frozenset(CATEGORY_OF) | frozenset(BRAND_OF)


def is_quantity(facet: Facet) -> bool:
    """Whether the facet is a ``"<number> <unit>"`` option such as ``capacity: 32 oz``."""
    return facet.kind == "option" and facet.key in _QUANTITY_KEYS


def content_words(text: str) -> str:
    """``text`` lower-cased without stop words: what a query's free ``text`` keeps of it."""
    tokens = (t.strip(".'-") for t in _TOKEN.findall(text.lower()))
    return " ".join(t for t in tokens if t and t not in STOPWORDS)


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun if noun.endswith(("s", "x")) and not noun.endswith("ss") else noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _category(product: Product) -> tuple[str, str, str] | None:
    """(canonical, singular noun, plural noun) from the title's last words, else the path."""
    title = " ".join(product.title.lower().split())
    known = set(CATEGORY_OF) | _KIND_NOUNS
    best = ""
    for form in known:
        if (title == form or title.endswith(" " + form)) and len(form) > len(best):
            best = form
    if not best and product.category:
        leaf = product.category[-1].lower()
        best = leaf if leaf in known else ""
    if not best:
        return None
    canonical = CATEGORY_OF.get(best, best)
    forms = CATEGORIES.get(canonical, ())
    # "running shoes" is both singular and plural in a request; "t-shirt" has "t-shirts".
    plural = _plural(best)
    if forms and plural not in forms:
        plural = best
    return canonical, best, plural


def _words_in(text: str, phrases: Iterable[str]) -> bool:
    padded = f" {text} "
    return any(f" {p} " in padded for p in phrases)


def _quantity(key: str, value: str) -> Facet | None:
    text = f"{value} {key}" if re.fullmatch(r"\d+(?:\.\d+)?", value) and key in UNITS else value
    canonical = canonical_quantity(text)
    if canonical is None:
        # "256GB SSD": the quantity leads, the rest is a kind the request need not repeat.
        text = value.split(" ", 1)[0]
        canonical = canonical_quantity(text)
    if canonical is None:
        return None
    number, unit = canonical.split(" ", 1)
    if unit == "g" and Decimal(number) < 10:  # "5G" is a network generation, not 5 grams
        return None
    if key == "ram":
        return Facet("option", "ram", canonical, f"{text.lower()} ram")
    return Facet("option", UNIT_KEY[unit], canonical, text.lower())


def _size(key: str, value: str) -> Facet | None:
    low = value.lower()
    if low in SIZE_OF:
        return Facet("option", "size", SIZE_OF[low], f"size {low}")
    if value.upper() in SIZE_WORDS:
        return Facet("option", "size", value.upper(), f"size {value.upper()}")
    if low in _BED_SIZES:
        return Facet("option", "size", low, f"{low} size")
    if key == "size":
        return Facet("option", "size", value, f"size {value}")
    return None


def facet_for(name: str, raw: str) -> Facet | None:
    """The facet an option or attribute ``name: raw`` gives, or ``None`` when it is unusable."""
    key = " ".join(name.split()).lower()
    value = " ".join(raw.split())
    low = value.lower()
    if not low or not key or low in _NOTHING:
        return None
    if low == "yes":  # "waterproof: yes" asks for the option's own name
        value = low = key
    if key in ("color", "colour"):
        return Facet("option", "color", COLOR_OF.get(low, low), low)
    if key.endswith((" color", " colour")):
        part = key.rsplit(" ", 1)[0]
        return Facet("option", key, COLOR_OF.get(low, low), f"{low} {part}")
    if key == "brand":
        return Facet("brand", "brand", BRAND_OF.get(low, value), value)
    if key == "gender":
        gender = GENDER_OF.get(low)
        return None if gender is None else Facet("attribute", "gender", gender, low)
    quantity = _quantity(key, value)
    if quantity is not None:
        return quantity
    if key == "size" or key.endswith(" size"):
        size = _size(key, value)
        if size is not None:
            return size
    for phrase in (low, f"{low} {key}"):
        if phrase in MATERIAL_OF:
            return Facet("attribute", "material", MATERIAL_OF[phrase], phrase)
        if phrase in ATTRIBUTE_OF:
            attribute, canonical = ATTRIBUTE_OF[phrase]
            return Facet("attribute", attribute, canonical, phrase)
    if any(ch.isdigit() for ch in low) or _words_in(low, _AMBIGUOUS):
        return None
    if key == "material" or key.endswith(" material"):
        return Facet("attribute", "material", low, low)
    words = f"{low} {key}" if low in _LEVELS else low
    feature = (
        key in _FEATURE_KEYS and " " in low and not low.endswith(_ADJECTIVE_ENDS)
    ) or low.startswith("with ")
    return Facet("text", "", content_words(words), words, feature=feature)


def _gender(product: Product) -> Facet | None:
    words = [*product.title.lower().split(), *(level.lower() for level in product.category)]
    for word in words:
        for token in (word, word.split("'")[0]):
            gender = GENDER_OF.get(token)
            if gender in _PERSON_GENDERS:
                return Facet("attribute", "gender", gender, _GENDER_WORDS[gender])
    return None


_GENDER_WORDS = {
    "women": "women's",
    "men": "men's",
    "unisex": "unisex",
    "girls": "girls'",
    "boys": "boys'",
    "kids": "kids'",
    "baby": "baby",
}


def _overlaps(facet: Facet, noun: str) -> bool:
    """Whether saying ``facet`` before ``noun`` would change the noun ("hiking" + "boots")."""
    if facet.kind in ("brand", "option") and facet.key in ("brand", "size", "color"):
        return False
    return _words_in(noun, facet.words.split()) or f"{facet.words} {noun}" in CATEGORY_OF


def listing_for(product: Product) -> Listing | None:
    """``product`` as a :class:`Listing`, or ``None`` when no category noun can be found."""
    found = _category(product)
    if found is None:
        return None
    category, noun, plural = found
    shared: list[Facet] = []
    for name, values in product.attributes.items():
        if len(values) == 1:  # several values are the variants' choices, read per variant
            facet = facet_for(name, values[0])
            if facet is not None:
                shared.append(facet)
    offers = []
    for variant in product.variants:
        facets: dict[tuple[str, str, str], Facet] = {}
        for facet in [*shared, *(facet_for(k, v) for k, v in variant.options.items())]:
            if facet is not None and not _overlaps(facet, noun):
                facets.setdefault((facet.kind, facet.key, facet.value), facet)
        offers.append(Offer(variant.id, tuple(facets.values()), variant.price, variant.available))
    if not offers:
        kept = tuple(f for f in shared if not _overlaps(f, noun))
        offers.append(Offer("", kept, None, True))
    brand = None
    if product.brand:
        brand = Facet("brand", "brand", BRAND_OF.get(product.brand.lower(), product.brand),
                      product.brand)  # fmt: skip
    rivals = tuple(b for b in _KIND_BRANDS.get(noun, ()) if b != product.brand)
    return Listing(
        product_id=product.id,
        category=category,
        noun=noun,
        plural=plural,
        brand=brand,
        gender=_gender(product),
        offers=tuple(offers),
        rating=product.rating,
        rivals=rivals,
    )
