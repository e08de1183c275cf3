"""The catalog's own words, and a query grounded in them.

Shoppers and parsers name things their own way: "16gb ram", "an i7", "only polarized ones",
"waterproof", "waterprof", "a laptop compartment". The catalog says ``ram: 16GB``,
``processor: i7``, ``lens type: polarized``, ``water resistance: yes``, ``compartment:
laptop``. :class:`CatalogVocabulary` is built from the products when the index is (any catalog,
no word list per store): every option name and value under the surface forms a request may
use for it:

* the value as written, its words stemmed and its quantities in one spelling ("16GB" is
  "16 gb", "1.5 liters" is "1.5 l");
* for a yes/no-like option (some values say no: ``water resistance: no | yes | IPX7``), the
  option's name and its word forms ("water resistant", "waterproof") mean "any value but no";
* a word one or two edits away from a single-word form ("waterprof", "polarised"), when no form
  matches exactly;
* within a kind, the words that tell a several-word value apart ("stainless" for stainless
  steel), its bare amount ("750" for 750ml), a letter size in words ("small" for S), and the
  opposite of a "-less" value ("corded" excludes cordless);
* units as people say them ("16 gigs"), and bounds ("at least 6 hours", "16gb ram or more":
  every value within, compared in one unit by :mod:`.amounts`).

:meth:`CatalogVocabulary.ground` rewrites a :class:`SearchQuery` onto those names and values,
for the products of its category (all products when it names none the catalog has): a
constraint under a name those products lack ("features: polarized", "length: 13 inch") moves
to the option that has the value; words of the free text that are option values ("i7",
"laptop") become constraints (the words stay, to rank by). What cannot be placed is left as
it was; the exact filters then decide. :meth:`CatalogVocabulary.leftover` says which words of
a query nothing checks, so that a reply calls a card an exact match only when it is one.
:class:`GroundedUnderstander` grounds any understander's answers and reads follow-ups against
the search before them.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from rapidfuzz import process
from rapidfuzz.distance import OSA

from ..catalog import Product, Variant
from .amounts import amount, units
from .chat_words import CUE_WORDS, FILLER, asks_nothing, is_chat
from .common_words import is_english_word
from .filters import Words, analyzer, canonical_key
from .grounding import written_as_name
from .query import Exclusion, SearchQuery
from .rules import canonical_quantity, gloss, parse
from .search import Understander
from .vocabulary import (
    ATTRIBUTE_WORDS,
    BRAND_OF,
    CATEGORY_OF,
    COLOR_OF,
    COLORS,
    GENDER_OF,
    MATERIAL_OF,
    SHADES,
    SIZE_OF,
    SIZE_WORDS,
    STOPWORDS,
)

__all__ = ["CatalogVocabulary", "GroundedUnderstander", "Leftover", "Term"]

_MAX_NGRAM = 4
_UNIT_TOKENS = {"lbs": "lb", "pound": "lb", "kgs": "kg", "kilo": "kg"}
_SAME_MEASURE = 0.03  # how far a value converted from another unit may be from the catalog's
_MIN_TYPO_CHARS = 5  # shorter words are too close to too many others
_MIN_CLOSE_CHARS = 4  # "brwn" may still be a colour a model spells right
_READINGS_KEPT = 256  # requests a GroundedUnderstander remembers its reading of
_AMOUNT = re.compile(r"^(\d+(?:\.\d+)?)\s*-?\s*[^\W\d_]+$")  # "750ml", "13-inch", "2 liters"
# Units as people say them, where a catalog writes the short form.
_SPOKEN_UNITS = {
    "gig": "gb", "gigs": "gb", "gigabyte": "gb", "gigabytes": "gb", "terabyte": "tb",
    "terabytes": "tb", "megapixel": "mp", "megapixels": "mp",
}  # fmt: skip
_SPOKEN_UNIT = re.compile(
    rf"(\d+(?:\.\d+)?)\s*({'|'.join(sorted(_SPOKEN_UNITS, key=len, reverse=True))})\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
# Where a sentence's clauses part: a comma, or before a word that joins two.
_CLAUSE = re.compile(
    r"(\s*[,;:]\s+|\s+(?=(?:so|but|because|and|although|though|while|since|pero|porque|y|aber"
    r"|weil|und|denn|mais|parce|et|car)\s))",
    re.IGNORECASE,
)
# Words that ask for something: the sentence holding them names what is wanted.
_ASKS = re.compile(
    r"\b(?:want|wanted|need|needs|looking for|look for|searching for|show me|give me|gimme"
    r"|get me|i'd like|i would like|after|busco|quiero|necesito|suche|brauche|möchte"
    r"|je cherche|je voudrais|il me faut)\b",
    re.IGNORECASE,
)
_NUMBER = r"(\d+(?:[.,]\d+)?)"
_BOUND = re.compile(
    r"(?:(?P<min1>at least|minimum|min\.?|no less than|mindestens|al menos|au moins)"
    r"|(?:at most|maximum|max\.?|no more than|up to|höchstens|como máximo|au plus))\s+"
    r"(?:an?\s+)?(?P<n1>\d+(?:[.,]\d+)?)\s*(?P<u1>[a-z]+)"
    r"|(?P<n2>\d+(?:[.,]\d+)?)\s*(?P<u2>[a-z]+)(?:\s+[a-z]+)?\s+"
    r"(?:(?P<min2>or more|or above|or higher|plus|at least|minimum|or better)"
    r"|or less|or below|or lower|at most|maximum)"
)  # "at least a 512 ssd", "1TB or more", "4k at least", "höchstens 2 Liter"
# What lets go of an option: "any height", "forget the battery thing", "colour doesn't matter",
# "doesn't have to be charcoal", and (glossed first) "egal welche Größe", "peu importe le
# type", "el material me da igual".
_ANY = re.compile(
    r"\b(?:any|whatever|either|no matter the|regardless of|forget(?: about)?(?: the)?"
    r"|never ?mind(?: the)?|drop the|don'?t care about(?: the)?|egal welche[rsnm]?"
    r"|peu importe(?: le| la| les)?|n'importe quel(?:le)?s?|cualquier|da igual(?: el| la)?"
    r"|(?:doesn'?t|does not|don'?t|do not|needn'?t) (?:have to |need to )?be(?: an?| the)?"
    r"|no need for(?: an?| the)?)"
    r"\s+([a-z]+)"
    r"|\b([a-z]+)\s+(?:doesn'?t|does not|don'?t|do not)\s+matter"
    r"|\b([a-z]+)\s+(?:ist )?egal\b|\b([a-z]+)\s+me da igual"
)
_RAW_WORD = re.compile(r"[\w][\w.'-]*")
_LETTERS = re.compile(r"[^\W\d_]+")
# "biggest screen", "bigger screen better" (of "the bigger the screen the better").
_MOST = re.compile(
    r"\b(?:(?:biggest|largest)\s+|(?:bigger|larger)\s+(?:the\s+)?(?=\w+\s+(?:the\s+)?"
    r"(?:better|best)\b))(\w+)"
)
# What a thing is for: "for the kitchen", "for pets", "for my office".
_FOR_PLACE = re.compile(r"\bfor\s+(?:the\s+|my\s+|our\s+|your\s+|a\s+)?([^\W\d_]+)")
# A step from the amount on screen: "bigger capacity is fine", "more storage", "a smaller screen".
_STEP = re.compile(
    r"\b(?:(?P<up>bigger|larger|more|higher|longer|greater)"
    r"|(?P<down>smaller|less|lower|shorter|fewer))\s+(?P<name>[a-z]+)\b",
    re.IGNORECASE,
)
# Words shoppers use for an option that catalogs name otherwise ("whatever screen": display).
_OPTION_SYNONYMS = {
    "screen": ("display",),
    "display": ("screen",),
    "strap": ("band",),
    "band": ("strap",),
    "bracelet": ("band", "strap"),
}
# What shoppers call a word of a value by the trade's names for it ("4G" of "Wi-Fi + Cellular").
_VALUE_SYNONYMS = {
    "cellular": ("4g", "5g", "lte"),
}
# A value saying the product lacks the option's property ("water resistance: no").
_NEGATIVE = re.compile(r"^(no|none|n/?a|false|without\b.*|non\b.*|not\b.*)$")
# Values too short and common to find in a request's words ("no" in "no leather").
_BARE_NEGATIVES = frozenset({"no", "none", "na", "n a", "false"})
# Word endings that make a property out of a noun: "water resistance", "waterproof".
_PROPERTY_ENDINGS = ("resistance", "resistant", "protection", "protected", "proof")
# The words of the word lists a model's value must come from (kinds, colours, materials,
# genders, sizes, makers) and of the cues the parser reads.
_LISTED_WORDS = (
    frozenset(
        word
        for table in (CATEGORY_OF, COLOR_OF, MATERIAL_OF, GENDER_OF, SIZE_OF, BRAND_OF)
        for key in table
        for word in _RAW_WORD.findall(key.casefold())
    )
    | CUE_WORDS
)


def says_nothing(word: str) -> bool:
    """Whether ``word`` checks nothing by itself: chat (:func:`asks_nothing`), a spoken unit
    whose amount was read ("gigs" of "16 gigs") or a single letter ("w" of "w/")."""
    return len(word) < 2 or asks_nothing(word) or word.casefold() in _SPOKEN_UNITS


@dataclass(frozen=True)
class Term:
    """What a surface form means in one product: ``name`` (the option, as the catalog writes
    it) holding any of ``values``."""

    product: str
    name: str
    values: tuple[str, ...]
    partial: bool = False  # from part of a value ("stainless", "750"): trusted within a kind


def _is_named(name: str, key: str) -> bool:
    """Whether option ``name`` is what ``key`` says ("lens color" is a color)."""
    return name == key or name.endswith(" " + key)


def _is_negative(value: str) -> bool:
    return bool(_NEGATIVE.match(" ".join(value.casefold().replace("-", " ").split())))


def _telling_words(values: Sequence[str]) -> list[tuple[str, str]]:
    """(value, word) for each word of a several-word value that tells it from the option's
    other values ("stainless" of "stainless steel"; not "steel" when "carbon steel" is one
    too); alphabetic words of four letters or more only."""
    words = {v: re.findall(r"[^\W\d_]{4,}", v.casefold()) for v in values}
    count: dict[str, int] = defaultdict(int)
    for value in values:
        for word in set(re.findall(r"[^\W\d_]+", value.casefold())):
            count[word] += 1
    return [
        (value, word)
        for value in values
        if len(words[value]) > 1 or len(value.split()) > 1
        for word in words[value]
        if count[word] == 1 and word not in STOPWORDS and word != value.casefold()
    ]


def _opposite_forms(value: str) -> set[str]:
    """ "cordless" -> corded; "bagless" -> bagged (a "-less" value's opposites)."""
    folded = value.casefold()
    if not folded.isalpha() or not folded.endswith("less") or len(folded) < 7:
        return set()
    stem = folded[: -len("less")]
    return {f"{stem}ed", f"{stem}d", f"{stem}{stem[-1]}ed"}


def _property_forms(name: str) -> set[str]:
    """ "water resistance" -> water resistant, waterproof, water proof, water resistance."""
    folded = " ".join(name.casefold().replace("-", " ").split())
    forms = {folded}
    stem = None
    for ending in _PROPERTY_ENDINGS:
        if folded.endswith(ending):
            stem = folded[: -len(ending)].strip()
            break
    if stem:
        for ending in _PROPERTY_ENDINGS:
            forms |= {f"{stem} {ending}", f"{stem}{ending}"}
    return forms


class Leftover(NamedTuple):
    """Words of a request that no constraint accounts for.

    ``known``: words the catalog uses; a card must have them to be an exact match.
    ``unknown``: words it never uses; nothing can check them ("gigs", "commute").
    ``unplaced``: words naming an option with no value for it ("hepa filter", "the thick
    kind"), said as not checked; ``graded``: those of them that are the adjective of an
    option named by a quality ("thick" of thickness, "bright" of brightness): they ask how
    much, nothing checked it, so no card is an exact match. (Refusing every match for all
    unplaced words cost more right answers than wrong ones on the discovery set's dev split:
    "hepa filter", "tactile switches" name options too.)
    """

    known: list[str]
    unknown: list[str]
    unplaced: list[str]
    graded: list[str]


_JUST = re.compile(r"^\W*(?:(?:ok(?:ay)?|fine|alright|then|well)\W+)*just\b", re.IGNORECASE)
# "red anything then", "what has 8gb ram then", "any 2 litre one in stock then", "ok whats in
# stock in 50 feet": after no exact match, only what this turn names (when it names an option).
_ONLY_THIS = re.compile(
    r"^(?=.*\bthen\b)\W*(?:any\b|what(?:ever)?\s+(?:has|have)\b"
    r"|which(?:\s+ones?)?\s+(?:has|have)\b|.*\banything\b)"
    r"|^\W*(?:(?:ok(?:ay)?|so|well|fine)\W+)?(?:what(?:'?s|\s+is)|whats)\s+(?:there\s+)?"
    r"(?:in\s+stock|available)\b",
    re.IGNORECASE,
)
_MEASURE = re.compile(r"\d+(?:\.\d+)?")


def _values_of(product: Product) -> str:
    """Every attribute and option value of ``product``, as one text."""
    values = [v for vs in product.attributes.values() for v in vs]
    values += [v for variant in product.variants for v in variant.options.values()]
    return " ".join(values)


def _one_dropped(short: str, long: str) -> bool:
    """Whether ``short`` is ``long`` with one letter left out."""
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


class CatalogVocabulary:
    """Every option name and value of a catalog, by the surface forms that mean them."""

    def __init__(self, products: Sequence[Product], words: Words | None = None) -> None:
        self._words = words or Words(analyzer())
        self._products = {p.id: p for p in products}
        self._kind_words = {p.id: self._words(" ".join([p.title, *p.category])) for p in products}
        # Each product's own words, read once: its kind's and its attribute and option values'.
        self._own_words = {
            p.id: self._kind_words[p.id] | self._words(_values_of(p)) for p in products
        }
        # surface key -> the terms it means, product by product
        self._values: dict[str, list[Term]] = defaultdict(list)
        self._option_names: dict[str, set[str]] = {}
        # Stemmed words the catalog uses to name kinds, options and values.
        self._catalog_words: set[str] = set()
        self._option_name_words: set[str] = set()
        self._option_name_raw: set[str] = set()
        self._option_names_folded: set[str] = set()  # "screen size", as canonical_key has it
        self._title_words: set[str] = set()
        self._head_words: set[str] = set()  # last words of titles: "tent" of "Dome Tent"
        self._value_words: dict[str, list[frozenset[str]]] = {}  # option -> its values' words
        for product in products:
            self._add(product)
            self._title_words |= self._words(product.title)
            self._head_words |= self._words(_RAW_WORD.findall(product.title)[-1])
            self._catalog_words |= self._kind_words[product.id]
            for values in product.attributes.values():
                for value in values:
                    self._catalog_words |= self._words(value)
        self._single_word = sorted(k for k in self._values if " " not in k)
        # Each department of the category paths (above the products' own kind), by the path
        # down to it: ("Home & Kitchen", "Kitchen Appliances").
        self._departments = {
            p.category[: depth + 1] for p in products for depth in range(len(p.category) - 1)
        }
        # "corded" and "wired" say "not cordless", "not wireless": the forms of a "-less"
        # value's stem that are no value themselves.
        self._opposites: dict[str, list[Term]] = defaultdict(list)
        for product in products:
            for option, offered in product.option_values().items():
                for value in offered:
                    for form in _opposite_forms(value):
                        key = self.surface(form)
                        if key and key not in self._values:
                            self._opposites[key].append(Term(product.id, option, (value,)))

    def surface(self, text: str) -> str:
        """The key a form is filed under: stemmed words, quantities spelled one way ("16
        gigs" is "16 gb")."""
        spoken = _SPOKEN_UNIT.sub(lambda m: f"{m.group(1)} {_SPOKEN_UNITS[m.group(2)]}", text)
        tokens = self._words.tokens(canonical_quantity(spoken) or spoken)
        # A range's unit, which canonical_quantity leaves: "30-50 lbs" is "30-50 lb".
        return " ".join(_UNIT_TOKENS.get(t, t) for t in tokens)

    def _add(self, product: Product) -> None:
        offered: dict[str, list[str]] = {}  # in the catalog's order, which answers keep
        for variant in product.variants:
            for name, value in variant.options.items():
                seen = offered.setdefault(name, [])
                if value not in seen:
                    seen.append(value)
        self._option_names[product.id] = {canonical_key(n) for n in offered}
        for name, values in offered.items():
            self._option_name_words |= self._words(name)
            self._option_name_raw.update(_RAW_WORD.findall(name.casefold()))
            self._option_names_folded.add(canonical_key(name))
            for value in values:
                self._catalog_words |= self._words(value)
            for value in values:
                key = self.surface(value)
                if key and key not in _BARE_NEGATIVES:  # "non-polarized" is asked for too
                    self._values[key].append(Term(product.id, name, (value,)))
                for form in SIZE_WORDS.get(value.upper(), ()) if "size" in name.casefold() else ():
                    self._values[self.surface(form)].append(Term(product.id, name, (value,)))
            for value, word in _telling_words(values):  # "stainless" for "stainless steel"
                self._values[self.surface(word)].append(Term(product.id, name, (value,), True))
            for value in values:
                for word in _RAW_WORD.findall(value.casefold()):
                    for synonym in _VALUE_SYNONYMS.get(word, ()):
                        self._values[self.surface(synonym)].append(
                            Term(product.id, name, (value,), True)
                        )
            for value in values:  # "750" for "750ml", when it is said bare
                amount = _AMOUNT.match(value)
                if amount:
                    self._values[amount.group(1)].append(Term(product.id, name, (value,), True))
            positives = tuple(v for v in values if not _is_negative(v))
            if positives and len(positives) < len(values):
                for form in _property_forms(name):
                    key = self.surface(form)
                    if key:
                        self._values[key].append(Term(product.id, name, positives))

    # ------------------------------------------------------------------ lookups

    def products_of(self, category: str | None) -> frozenset[str]:
        """Ids of the products whose title or category path holds every word of
        ``category``; every product when it names none of them."""
        if category:
            wanted = self._words(category)
            found = frozenset(pid for pid, kind in self._kind_words.items() if wanted <= kind)
            # A kind that is some products' very name is theirs alone: "tablet" is the
            # Tablet, not a Laptop filed under "Computers & Tablets".
            named = frozenset(p for p in found if self._words(self._products[p].title) == wanted)
            if named:
                return named
            if found:
                return found
        return frozenset(self._products)

    def terms(self, text: str, among: Iterable[str], *, typos: bool = True) -> list[Term]:
        """What ``text`` means as an option value in the products ``among``."""
        allowed = set(among)
        whole = len(allowed) == len(self._products)  # no kind known: whole values only
        key = self.surface(text)
        found = [
            t
            for t in self._values.get(key, ())
            if t.product in allowed and not (whole and t.partial)
        ]
        if found or not typos or " " in key or is_english_word(text.strip()):
            return found  # "blown" is a word, no typo of "brown"
        if len(key) == _MIN_TYPO_CHARS - 1 and not whole:
            # "brwn", "blak", "whte": a short word is a typo only as a value of these
            # products with one letter dropped, the first kept.
            return [
                t
                for k in self._single_word
                if len(k) == len(key) + 1 and k[0] == key[0] and _one_dropped(key, k)
                for t in self._values[k]
                if t.product in allowed and not t.partial
            ]
        if len(key) < _MIN_TYPO_CHARS:
            return found
        limit = 1 if len(key) < 9 else 2
        close = [
            k
            for k in self._single_word
            if abs(len(k) - len(key)) <= limit and OSA.distance(k, key, score_cutoff=limit) <= limit
        ]
        return [t for k in close for t in self._values[k] if t.product in allowed and not t.partial]

    def _has_name(self, key: str, among: Iterable[str]) -> bool:
        suffix = " " + key
        return any(
            name == key or name.endswith(suffix)
            for pid in among
            for name in self._option_names.get(pid, ())
        )

    def _category(self, category: str | None, text: str) -> str | None:
        """The kind asked for, in the catalog's words: ``category`` as it is when some
        product's kind holds all of it; else its head word (the last) or another of its words
        that names kinds ("bike helmet" -> "helmet", "hedphones" -> "headphones", one typo
        allowed). With no category, a word of ``text`` that is the head of a product's title
        ("a tent for two" -> "tent"). Else ``category`` as it was."""
        everything = frozenset(self._products)
        if category and self.products_of(category) != everything:
            return category
        words = _RAW_WORD.findall(category) if category else _RAW_WORD.findall(text)
        heads = reversed(words) if category else iter(words)
        for word in heads:
            stems = self._words(word)
            found = word if stems and stems <= self._head_words else None
            if category and found is None and stems and stems <= self._title_words:
                found = word
            found = found or self._close_title_word(word, heads_only=not category)
            if found and self.products_of(found) != everything:
                return found
        return category

    def department_asked(self, request: str) -> str | None:
        """The department ``request`` asks for by what it is for ("whatever you've got for
        the kitchen": kitchen appliances; "for pets"), or ``None``."""
        for match in _FOR_PLACE.finditer(request.casefold()):
            department = self._department(match.group(1))
            if department is not None:
                return department
        return None

    def _department(self, word: str) -> str | None:
        """The department ``word`` names, when the departments it is a word of lie on one
        path ("kitchen": "Kitchen Appliances", within "Home & Kitchen"); the deepest of them.
        ``None`` for a word of departments on different paths ("home": "Smart Home", "Home
        Decor") or of none, and for a word that is an option's value or name."""
        stems = self._words(word)
        if not stems or stems & self._option_name_words or self._values.get(self.surface(word)):
            return None
        paths = sorted(
            (path for path in self._departments if stems <= self._words(path[-1])), key=len
        )
        if not paths or any(path != paths[-1][: len(path)] for path in paths):
            return None
        return paths[-1][-1].casefold()

    def _close_title_word(self, word: str, *, heads_only: bool) -> str | None:
        """A word of a product's title (its last word only, with ``heads_only``) one or two
        edits from ``word`` (five letters or more)."""
        if len(word) < _MIN_TYPO_CHARS or is_english_word(word):
            return None  # "match" is no typo of "watch"
        folded = word.casefold()
        limit = 1 if len(folded) < 9 else 2
        for product in self._products.values():
            candidates: list[str] = _RAW_WORD.findall(product.title.casefold())
            for candidate in candidates[-1:] if heads_only else candidates:
                if OSA.distance(candidate, folded, score_cutoff=limit) <= limit:
                    return candidate
        return None

    def leftover(self, query: SearchQuery) -> Leftover:
        """The words of ``query.text`` no constraint of it accounts for (:class:`Leftover`)."""
        among = self.products_of(query.category)
        said = self._words(query.category) if query.category else frozenset()
        constrained = {
            stem for key in (*query.options, *query.attributes) for stem in self._words(key)
        }
        # "screen" of "pantalla AMOLED" names the display asked for.
        constrained |= {
            stem
            for key in (*query.options, *query.attributes)
            for word in _RAW_WORD.findall(key.casefold())
            for synonym in _OPTION_SYNONYMS.get(word, ())
            for stem in self._words(synonym)
        }
        placed_words = {
            word
            for values in (*query.options.values(), *query.attributes.values())
            for value in values
            for word in _RAW_WORD.findall(value.casefold())
        }
        constrained_keys = {canonical_key(key) for key in query.options}
        left = Leftover([], [], [], [])
        words = _RAW_WORD.findall(query.text.casefold())
        for first, second in pairwise(words):
            if first + second in placed_words:  # "hard shell" of "hardshell"
                placed_words |= {first, second}
        ruled_out = {
            stem for e in query.exclude for stem in self._words(f"{e.field or ''} {e.value}")
        }
        for raw in words:
            if says_nothing(raw):
                continue
            if raw.startswith("non-") and self._words(raw[4:]) <= ruled_out:
                continue  # "non-waterproof": an exclusion checks it
            if raw in placed_words:
                continue  # a word of a value a constraint holds ("people" of "2 people")
            if any(c.isdigit() for c in raw):
                placed = (v.casefold() for vs in query.options.values() for v in vs)
                if not any(raw in value for value in placed) and not self.held(raw, query):
                    left.unknown.append(raw)  # a number no constraint took ("16 gigs", "10")
                continue
            stems = self._words(raw)
            if not stems or stems <= said:
                continue
            if self.terms(raw, among):
                continue  # a value: its constraint checks it
            if self._covered(raw, constrained_keys):
                continue  # "fabric" of "sunbrella fabric": the material asked names it
            if stems <= self._option_name_words:
                if not stems <= constrained and raw not in left.unplaced:
                    left.unplaced.append(raw)  # "hepa filter", "the thick kind"
                    if any(f"{raw}{end}" in self._option_name_raw for end in ("ness", "ity")):
                        left.graded.append(raw)  # "thick" asks how thick: nothing checked it
                continue
            bucket = left.known if stems <= self._catalog_words else left.unknown
            if raw not in bucket:
                bucket.append(raw)
        return left

    def speaks_of(self, product: Product, option: str) -> bool:
        """Whether ``product`` has ``option``, or says its value in its name ("Wireless
        Earbuds" of connectivity, which other products have as an option)."""
        key = canonical_key(option)
        if key in {canonical_key(n) for n in (*product.option_values(), *product.attributes)}:
            return True
        if key not in self._value_words:
            self._value_words[key] = [
                self._words(value)
                for p in self._products.values()
                for name, values in p.option_values().items()
                if canonical_key(name) == key
                for value in values
            ]
        title = self._words(product.title)
        return any(words and words <= title for words in self._value_words[key])

    def misfits(self, query: SearchQuery) -> int:
        """How many of ``query``'s option and attribute values no product of its kind has,
        and how many it both asks for and rules out."""
        among = self.products_of(query.category)
        asked = {
            (canonical_key(key), value.casefold())
            for table in (query.options, query.attributes)
            for key, values in table.items()
            for value in values
        }
        count = sum(
            1
            for e in query.exclude
            if e.field and (canonical_key(e.field), e.value.casefold()) in asked
        )
        for key, values in query.options.items():
            count += not self._offered(key, values, among)
        for key, values in query.attributes.items():
            wanted = {v.casefold() for v in values}
            count += not any(
                canonical_key(name) == canonical_key(key) and wanted & {v.casefold() for v in held}
                for pid in among
                for name, held in self._products[pid].attributes.items()
            ) and not self._offered(key, values, among)
        return count

    def held(self, word: str, query: SearchQuery) -> bool:
        """Whether ``word`` means a value ``query``'s options hold ("4g": Wi-Fi + Cellular)."""
        placed = {v.casefold() for vs in query.options.values() for v in vs}
        meant = {v.casefold() for t in self._values.get(self.surface(word), ()) for v in t.values}
        return bool(meant & placed)

    def _covered(self, word: str, keys: set[str]) -> bool:
        """Whether ``word`` is only ever a value of options among ``keys`` (the options a
        query constrains): said beside the value asked for that option ("sunbrella fabric",
        of material), it asks nothing more."""
        names = {canonical_key(term.name) for term in self._values.get(self.surface(word), ())}
        return bool(names) and names <= keys

    def refines(self, query: SearchQuery, category: str) -> bool:
        """Whether ``query`` (with no kind of its own) reads as a refinement of a search for
        ``category``: it says something, every option it names is one those products have,
        and none of its words is one the catalog uses for something those products lack.
        Words the catalog never uses may be chat ("ugh typo, i meant more than 1000") unless
        nothing structured was said ("a sleeping bag", "for pets": another search)."""
        among = self.products_of(category)
        if among == frozenset(self._products) or query.brand:
            return False
        bare = query.model_copy(update={"text": "", "sort": "relevance"})
        left = self.leftover(query.model_copy(update={"category": category}))
        if left.unplaced or (bare.is_empty() and query.sort == "relevance"):
            return False
        if left.known and (bare.is_empty() or not self._other_kinds_words(left.known, among)):
            return False
        return self.fits(query, category)

    def _other_kinds_words(self, words: Sequence[str], among: frozenset[str]) -> bool:
        """Whether each of ``words`` names other kinds only: a word of their product names
        that none of ``among`` has anywhere ("light" of "a super light sleeper", said of air
        purifiers: the shopper's story beside a value of theirs, not another search)."""
        own = frozenset().union(*(self._own_words[pid] for pid in among))
        return all(self._words(w) <= self._title_words and not self._words(w) & own for w in words)

    def _offered(self, key: str, values: Sequence[str], among: Iterable[str]) -> bool:
        """Whether some product ``among`` offers one of ``values`` under option ``key``."""
        name, wanted = canonical_key(key), {v.casefold() for v in values}
        for pid in among:
            for option, offered in self._products[pid].option_values().items():
                if canonical_key(option) == name and wanted & {v.casefold() for v in offered}:
                    return True
        return False

    def need(self, text: str) -> str:
        """The sentences of a long, chatty ``text`` that ask for something (a kind, an option
        value, a price, stock), in their order; the story around them left out. ``text``
        itself when none does."""
        kept = []
        for sentence, query in self._sentences(text):
            if self._asks(query, sentence):
                # Of a sentence that asks, the clauses that do: "after saving up all year and
                # the keyboard is the last piece" is the keyboard.
                said = self._asking_clauses(sentence)
                kept.append(said if said[-1:] in ".!?;" else f"{said}.")
        return self.asked_kind(" ".join(kept)) if kept else text

    def _asking_clauses(self, sentence: str) -> str:
        """The clauses of ``sentence`` that ask for something, as written (with the comma or
        semicolon between two kept side by side); ``sentence`` when none does alone."""
        parts = _CLAUSE.split(sentence)  # clause, separator, clause, ...
        said, previous = "", False
        for index in range(0, len(parts), 2):
            clause = parts[index]
            if not clause.strip(" ,;:") or not self._asks(self.ground(parse(clause)), clause):
                previous = False
                continue
            if said:
                said += parts[index - 1] if previous else " "
            said, previous = said + clause, True
        return sentence if said in ("", sentence) else said.rstrip(" ,;:")

    @staticmethod
    def _asks(query: SearchQuery, said: str) -> bool:
        """Whether ``said``, read as ``query``, asks for something: a constraint, or the most
        of an option ("the bigger the screen the better")."""
        bare = query.model_copy(update={"text": "", "sort": "relevance"})
        return not bare.is_empty() or _MOST.search(said.casefold()) is not None

    def _sentences(self, text: str) -> list[tuple[str, SearchQuery]]:
        found = []
        for sentence in _SENTENCE.split(text):
            if sentence.strip():
                found.append((sentence.strip(), self.ground(parse(sentence))))
        return found

    def answered(self, text: str) -> str:
        """``text`` without its questions about an option that another of its sentences
        says what is wanted of ("wait are those espresso ones? i want normal drip coffee":
        drip, not espresso or drip). ``text`` itself when it has none."""
        sentences = self._sentences(text)
        if len(sentences) < 2:
            return text
        said = [
            {canonical_key(name) for name in query.options}
            for sentence, query in sentences
            if not sentence.endswith("?")
        ]
        stated = set().union(*said) if said else set()
        kept = [
            sentence
            for sentence, query in sentences
            if not (
                sentence.endswith("?")
                and query.options
                and {canonical_key(name) for name in query.options} <= stated
            )
        ]
        return text if len(kept) == len(sentences) else " ".join(kept)

    def asked_kind(self, text: str) -> str:
        """``text`` without its sentences that name another kind of product than the one it
        asks for last ("sorry, my cat walked on the keyboard. looking for a gaming mouse,
        wired": the mouse; "i swear if you show me one more speaker i will scream. i want
        HEADPHONES. wired."): the last sentence that names a kind with a word that asks
        for it ("want", "looking for", "show me") is the request. ``text`` itself when no
        two sentences name different kinds."""
        sentences = self._sentences(text)
        kinds = {query.category for _, query in sentences if query.category}
        if len(kinds) < 2:
            return text
        asked = [q.category for s, q in sentences if q.category and _ASKS.search(s)]
        if not asked:
            return text
        wanted = asked[-1]
        return " ".join(s for s, q in sentences if q.category in (None, wanted))

    def bounded(self, query: SearchQuery, request: str) -> SearchQuery:
        """``query`` with an amount the shopper bounds ("at least 6 hours of battery", "1TB or
        more", "höchstens 2 Liter") as every value of that option within the bound; a price
        bound the same words were read as is dropped (it was no price)."""
        among = self.products_of(query.category)
        if among == frozenset(self._products):
            return query
        options = dict(query.options)
        price = query.price
        for match in _BOUND.finditer(request.casefold()):
            number = match.group("n1") or match.group("n2")
            unit = match.group("u1") or match.group("u2")
            said = amount(f"{number} {unit}")
            if said is None or not said[0]:
                continue
            at_least = bool(match.group("min1") or match.group("min2"))
            name, values = self._within(said, at_least, among, self._words(request))
            if name is None and said[0] == unit:
                # No unit but a word of the values: "at least a 512 ssd" of "512GB SSD".
                name, values = self._within(said, at_least, among, self._words(request), unit)
            if name is None:
                continue
            options = {k: v for k, v in options.items() if canonical_key(k) != canonical_key(name)}
            options[name] = values
            bounds = {float(b) for b in (price.min, price.max) if b} if price else set()
            if float(number.replace(",", ".")) in bounds:
                price = None  # "at least 6 hours" was read as a price from 6
        if options == query.options:
            return query
        return query.model_copy(update={"options": options, "price": price})

    def _within(
        self,
        said: tuple[str, float],
        at_least: bool,
        among: frozenset[str],
        request: frozenset[str],
        word: str | None = None,
    ) -> tuple[str | None, list[str]]:
        """The option of ``among`` whose values are amounts like ``said`` (the one the
        ``request``'s words name, when several are: "16gb ram", not storage), and those of its
        values at least (or at most) ``said``. With ``word``, ``said`` has no unit: the values
        holding that word are compared in their own unit ("512" of "512GB SSD")."""
        found: dict[str, list[str]] = {}
        for pid in among:
            for option, offered in self._products[pid].option_values().items():
                for value in sorted(offered):
                    measured = amount(value)
                    if measured is None:
                        continue
                    if word is not None:
                        if word not in value.casefold().split():
                            continue
                    elif measured[0] != said[0]:
                        continue
                    bucket = found.setdefault(option, [])
                    inside = measured[1] >= said[1] if at_least else measured[1] <= said[1]
                    if inside and value not in bucket:
                        bucket.append(value)
        if len(found) > 1:
            found = {name: v for name, v in found.items() if self._words(name) & request}
        if len(found) != 1:
            return None, []
        option, inside_values = next(iter(found.items()))
        return (option, inside_values) if inside_values else (None, [])

    def stepped(self, query: SearchQuery, request: str) -> tuple[SearchQuery, str]:
        """``query`` with the amount ``request`` steps from ("bigger capacity is fine" after
        5000mAh: every larger capacity its kind offers), and ``request`` without those words;
        ``query`` and ``request`` as they are when it steps from none."""
        among = self.products_of(query.category)
        if among == frozenset(self._products):
            return query, request
        for match in _STEP.finditer(request):
            named = self._words(match.group("name"))
            named |= {w for n in named for w in self._words(" ".join(_OPTION_SYNONYMS.get(n, ())))}
            keys = [k for k in query.options if self._words(k) & named]
            if len(keys) != 1:
                continue
            key = keys[0]
            said = [m for m in (amount(v) for v in query.options[key]) if m is not None]
            if len(said) != len(query.options[key]) or len({unit for unit, _ in said}) != 1:
                continue
            unit, up = said[0][0], bool(match.group("up"))
            edge = max(n for _, n in said) if up else min(n for _, n in said)
            values = []
            for pid in among:
                for value in self._products[pid].option_values().get(key, ()):
                    measured = amount(value)
                    if (
                        measured is not None
                        and measured[0] == unit
                        and (measured[1] > edge if up else measured[1] < edge)
                        and value not in values
                    ):
                        values.append(value)
            if not values:
                continue
            values.sort(key=lambda v: amount(v) or (unit, edge))
            rest = request[: match.start()] + request[match.end() :]
            return query.model_copy(update={"options": {**query.options, key: values}}), rest
        return query, request

    def dropping(self, query: SearchQuery, request: str) -> SearchQuery:
        """``query`` without the options and exclusions ``request`` lets go of ("any height",
        "whatever colour", "any size is fine", "doesn't have to be charcoal")."""
        said = [next(g for g in m.groups() if g) for m in _ANY.finditer(gloss(request.casefold()))]
        said += [other for word in said for other in _OPTION_SYNONYMS.get(word, ())]
        let_go = {stem for word in said for stem in self._words(word)}
        if not let_go:
            return query

        def named(key: str, values: list[str]) -> bool:  # "any colour"; "forget the battery"
            return bool(self._words(" ".join([key, *values])) & let_go)

        kept = {k: v for k, v in query.options.items() if not named(k, v)}
        attributes = {k: v for k, v in query.attributes.items() if not named(k, v)}
        # "colour doesn't matter" lets go of "not black" too.
        exclude = [e for e in query.exclude if not named(e.field or "", [e.value])]
        dropped = {
            stem
            for table in (query.options, query.attributes)
            for key, values in table.items()
            if named(key, values)
            for stem in self._words(" ".join(values))
        }  # "whatever screen" lets go of the word "amoled" said for the display too
        text = " ".join(w for w in query.text.split() if not self._words(w) & (let_go | dropped))
        if (kept, attributes, exclude, text) == (
            query.options,
            query.attributes,
            query.exclude,
            query.text,
        ):
            return query
        update = {"options": kept, "attributes": attributes, "exclude": exclude, "text": text}
        return query.model_copy(update=update)

    def fits(self, query: SearchQuery, category: str) -> bool:
        """Whether every option ``query`` names is one the products of ``category`` have, with
        one of the values it asks for (so that, said after those products were shown, it is
        about them; "a rotisserie" after coffee makers asks for something else)."""
        among = self.products_of(category)
        if among == frozenset(self._products):
            return False
        named = [*query.options, *query.attributes]
        excluded = [e.field for e in query.exclude if e.field]
        # "no RGB stuff, i hate rainbow lighting" of keyboards: their backlight is not RGB; the
        # colour "multicolor" they have no option for rules nothing out, and is no other search.
        if excluded and not any(self._has_name(canonical_key(k), among) for k in excluded):
            named += excluded
        if not all(self._has_name(canonical_key(key), among) for key in named):
            return False
        return all(self._offered(key, values, among) for key, values in query.options.items())

    def kinds_offering(self, options: dict[str, list[str]]) -> frozenset[str]:
        """The titles of the products that offer a value of every option in ``options`` (a
        grounded query's): "french press" is a coffee maker's type, whatever the store calls
        the coffee maker."""
        titles = set()
        for product in self._products.values():
            offered = {canonical_key(k): v for k, v in product.option_values().items()}
            if all(offered.get(canonical_key(k), set()) & set(v) for k, v in options.items()):
                titles.add(product.title)
        return frozenset(titles)

    def without_unsold_kinds(self, text: str, common: frozenset[str]) -> str:
        """``text`` without the words of ``common`` (the common words of the language it is
        in) that would be read as a kind of product this catalog does not sell: German "hat"
        (has) is no hat."""

        def kept(match: re.Match[str]) -> str:
            word = match.group(0)
            if word.casefold() not in common:
                return word
            kind = parse(word).category
            return "" if kind and not self.names_products(kind) else word

        return " ".join(_LETTERS.sub(kept, text).split())

    def names_products(self, kind: str) -> bool:
        """Whether ``kind`` is said in some product's name (a "tablet" is a Tablet), not only
        in the departments products are filed under (a "bag" is in "Bags & Luggage")."""
        words = self._words(kind)
        return bool(words) and words <= self._title_words

    def lacks(self, words: Sequence[str], product: Product, variant: Variant | None) -> list[str]:
        """Those of ``words`` (catalog words) that ``product`` in ``variant`` does not have in
        its kind, attributes or the variant's options."""
        own = set(self._kind_words.get(product.id, frozenset()))
        for values in product.attributes.values():
            for value in values:
                own |= self._words(value)
        if variant is not None:
            for name, value in variant.options.items():
                own |= self._words(name) | self._words(value)
        return [w for w in words if not self._words(w) <= own]

    # ---------------------------------------------------------------- grounding

    @functools.cached_property
    def _raw_words(self) -> frozenset[str]:
        """Every word as written of the products' kinds, makers, names, options and values, and
        of the word lists: built on first use, which only a model beside the rules makes."""
        raw: set[str] = set(_LISTED_WORDS)
        for product in self._products.values():
            named = [product.title, product.brand or "", *product.category]
            named += [f"{k} {' '.join(v)}" for k, v in product.attributes.items()]
            named += [f"{k} {v}" for each in product.variants for k, v in each.options.items()]
            for text in named:
                raw.update(_RAW_WORD.findall(text.casefold()))
        return frozenset(raw)

    def could_back(self, words: str, request: str, context: Sequence[str] = ()) -> bool:
        """Whether one of ``words`` (those the parser left of ``request``, read after the
        earlier requests ``context``) could back a value a
        model adds that grounding keeps: a number, a word written as a name ("Fjällräven"), or
        a word (or a typo of one) that this catalog or the word lists use for a kind, maker,
        option, value or cue. A model's value must be said by the words it fills
        (:func:`~.merging.fill_gaps`) and be one the products have (:class:`GroundedUnderstander`):
        about "she's really into puzzles" in a catalog without puzzles it can add nothing."""
        for word in words.split():
            folded = word.casefold()
            if is_chat(folded):
                continue
            if any(c.isdigit() for c in word) or folded in self._raw_words:
                return True
            if written_as_name(word, [*context, request]):
                return True
            close = len(folded) >= _MIN_CLOSE_CHARS and process.extractOne(
                folded, self._raw_words, scorer=OSA.distance, score_cutoff=1
            )
            if close:
                return True
        return False

    def ground(self, query: SearchQuery) -> SearchQuery:
        """``query`` with its constraints and words placed on the catalog's options."""
        category = self._category(query.category, query.text)
        options: dict[str, list[str]] = {}
        everything = frozenset(self._products)
        if category and self.products_of(category) == everything:
            # No kind of this catalog, but a value of one ("a camera compartment").
            found = self.terms(category, everything, typos=False)
            if found:
                name, values = self._choose(found)
                options[name] = list(values)
                category = None
        if category != query.category:
            query = query.model_copy(update={"category": category})
        among = self.products_of(category)
        if query.brand and not any(
            (self._products[p].brand or "").casefold() == query.brand.casefold() for p in among
        ):
            # A maker none of them is by, but a value they have: "works with google".
            found = self.terms(query.brand, among, typos=False)
            if found:
                name, values = self._choose(found)
                options[name] = list(values)
                query = query.model_copy(update={"brand": None})
        kept: dict[str, dict[str, list[str]]] = {"attributes": {}, "options": {}}
        for field_name in ("attributes", "options"):
            for key, values in getattr(query, field_name).items():
                for value in values:
                    term = self._placed(key, value, among)
                    if term is None:
                        kept[field_name].setdefault(key, []).append(value)
                    else:
                        bucket = options.setdefault(term[0], [])
                        bucket.extend(v for v in term[1] if v not in bucket)
        text = self._ground_text(query.text, among, options, query.category)
        self._ground_grades(query.text, among, options)
        exclude = [
            e
            for x in query.exclude
            if x.field is not None
            or self._words(x.value) <= self._catalog_words | self._option_name_words
            for e in self._ground_exclusion(x, among)
        ]  # "made no sense": a word no product has rules nothing out
        for word in _RAW_WORD.findall(query.text.casefold()):  # "non-waterproof": not waterproof
            if word.startswith("non-") and len(word) > 4:
                for unwanted in self._ground_exclusion(Exclusion(value=word[4:]), among):
                    if unwanted.field is not None and unwanted not in exclude:
                        exclude.append(unwanted)
        for word in _RAW_WORD.findall(query.text.casefold()):  # "corded": not cordless
            for opposite in self._opposites.get(self.surface(word), ()):
                unwanted = Exclusion(field=opposite.name, value=opposite.values[0])
                if opposite.product in among and unwanted not in exclude:
                    exclude.append(unwanted)
        for key, values in kept["options"].items():
            bucket = options.setdefault(key, [])
            bucket.extend(v for v in values if v not in bucket)
        update = {
            "attributes": kept["attributes"],
            "options": options,
            "text": text,
            "exclude": exclude,
        }
        grounded = query.model_copy(update=update)
        return SearchQuery.model_validate(grounded.model_dump())

    def _placed(self, key: str, value: str, among: frozenset[str]) -> tuple[str, list[str]] | None:
        """The catalog option and values ``key: value`` means, when it must move: ``None``
        when ``key`` is already an option of these products, or nothing matches."""
        name = canonical_key(key)
        if self._has_name(name, among):
            exact = self.terms(value, among, typos=False)
            same = [t for t in exact if _is_named(canonical_key(t.name), name)]
            if exact and not same:
                # An amount the parser filed by its unit alone may be another option's: "32
                # GB" read as storage is the laptop's 32GB of RAM. A word stays where it is.
                return self._choose(exact, name) if _AMOUNT.match(value) else None
            if same:  # the catalog's spelling: "16 gb" is "16GB"
                return self._choose(same, name)
            counted = _AMOUNT.match(value)
            if counted and self._words(value[counted.end(1) :]) <= self._words(name):
                # "1000 pieces" under an option named "pieces" whose values are "1000"
                bare = self.terms(counted.group(1), among, typos=False)
                same = [t for t in bare if _is_named(canonical_key(t.name), name)]
                if same:
                    return self._choose(same, name)
        found = self.terms(value, among)
        for form in () if found else ATTRIBUTE_WORDS.get(name, {}).get(value, ()):
            found = self.terms(form, among, typos=False)  # "cordless", read as wireless
            if found:
                break
        found = found or self._same_measure(value, among)
        if not found:
            return None
        return self._choose(found, name)

    def _same_measure(self, value: str, among: frozenset[str]) -> list[Term]:
        """The values of the products ``among`` that are ``value`` in another unit, as
        catalogs round it: "35 cm" is a diameter of "14 inches" (35.6 cm), within 3%."""
        wanted, said = amount(value), units(value)
        if wanted is None or len(said) != 1 or among == frozenset(self._products):
            return []
        found = []
        for pid in among:
            for option, offered in self._products[pid].option_values().items():
                for offer in offered:
                    got, written = amount(offer), units(offer)
                    if (
                        got is not None
                        and len(written) == 1
                        and written[0].casefold() != said[0].casefold()
                        and got[0] == wanted[0]
                        and math.isclose(got[1], wanted[1], rel_tol=_SAME_MEASURE)
                    ):
                        found.append(Term(pid, option, (offer,)))
        return found

    @staticmethod
    def _choose(found: list[Term], key: str | None = None) -> tuple[str, list[str]]:
        """One option name for the terms found (the one named like ``key``, else the one
        most products use) and every value it takes."""
        by_name: dict[str, list[str]] = defaultdict(list)
        count: dict[str, int] = defaultdict(int)
        for term in found:
            folded = canonical_key(term.name)
            count[folded] += 1
            by_name[folded].extend(v for v in term.values if v not in by_name[folded])
        suffix = f" {key}" if key else None
        named = [n for n in by_name if key and (n == key or (suffix and n.endswith(suffix)))]
        chosen = named[0] if len(named) == 1 else max(by_name, key=lambda n: count[n])
        return chosen, by_name[chosen]

    def _ground_text(
        self,
        text: str,
        among: frozenset[str],
        options: dict[str, list[str]],
        category: str | None,
    ) -> str:
        """Add the option values said in ``text`` to ``options``; ``text`` as it was."""
        raw = _RAW_WORD.findall(text)
        if not raw:
            return text
        used = [False] * len(raw)
        misspelt: set[str] = set()
        # Values said by the option's name ("backlight": any backlight) and by a value of it,
        # here or before ("white" the parser read as a colour).
        before = {name: list(values) for name, values in options.items()}
        named: dict[str, set[str]] = {}
        valued: dict[str, set[str]] = {}
        category_words = self._words(category) if category else frozenset()
        start = 0
        while start < len(raw):
            placed = False
            for size in range(min(_MAX_NGRAM, len(raw) - start), 0, -1):
                phrase = " ".join(raw[start : start + size])
                if size == 1 and (
                    self._words(phrase) <= category_words or not self.surface(phrase)
                ):
                    break
                found = self.terms(phrase, among, typos=size == 1)
                if not found and size == 2:  # "hard shell" for "hardshell"
                    found = self.terms("".join(raw[start : start + 2]), among, typos=False)
                names = {t.name.casefold() for t in found}
                if phrase.replace(".", "").isdigit() and (len(names) > 1 or not category):
                    found = []  # a bare number of no known kind, or several options: none
                if found:
                    name, values = self._choose(found)
                    bucket = options.setdefault(name, [])
                    bucket.extend(v for v in values if v not in bucket)
                    said = named if self._words(phrase) <= self._words(name) else valued
                    said.setdefault(name, set()).update(values)
                    if size == 1 and not self._values.get(self.surface(phrase)):
                        misspelt.add(phrase.casefold())
                    used[start : start + size] = [True] * size
                    start += size
                    placed = True
                    break
            if not placed:
                start += 1
        for name in named:  # "RGB backlight" is RGB, not any backlight
            specific = valued.get(name, set()) | set(before.get(name, ()))
            if specific:
                unsaid = named[name] - specific
                options[name] = [v for v in options[name] if v not in unsaid]
        # The words stay: they still rank (BM25, the embedding), and a word left alone may
        # match nothing ("stove" of "induction stove"). A misspelt one ranks nothing and would
        # be said back beside its correction ("brown sunglasses brwn").
        if not misspelt:
            return text
        return " ".join(w for w in text.split() if w.casefold() not in misspelt)

    def _ground_grades(
        self, text: str, among: frozenset[str], options: dict[str, list[str]]
    ) -> None:
        """ "the thick kind" of yoga mats: a word whose measure is an option of these products
        ("thickness") asks for its highest value among them ("6mm"); left alone when the
        option is already asked for, or its values are not all measures."""
        if not among or among == frozenset(self._products):
            return
        folded = text.casefold()
        asked = [f"{raw}{end}" for raw in _RAW_WORD.findall(folded) for end in ("ness", "ity")]
        # "the bigger the screen the better", "the largest screen": of the option it names.
        for match in _MOST.finditer(folded):
            said = self._words(match.group(1))
            named = {
                canonical_key(name)
                for pid in among
                for name in self._products[pid].option_values()
                if said and said <= self._words(name)
            }
            asked += sorted(named) if len(named) == 1 else []
        for option in asked:
            if option not in self._option_names_folded or any(
                canonical_key(k) == option for k in options
            ):
                continue
            values = {
                value
                for pid in among
                for name, offered in self._products[pid].option_values().items()
                if canonical_key(name) == option
                for value in offered
            }
            measured = {v: _MEASURE.match(v) for v in values}
            if not values or not all(measured.values()):
                continue
            top = max(float(m.group()) for m in measured.values() if m)
            options[option] = sorted(
                v for v, m in measured.items() if m and float(m.group()) == top
            )

    def _ground_exclusion(self, exclusion: Exclusion, among: frozenset[str]) -> list[Exclusion]:
        key = canonical_key(exclusion.field) if exclusion.field else None
        shaded = [  # "nothing blue" rules out navy too
            term
            for shade in SHADES.get(COLOR_OF.get(exclusion.value.casefold(), ""), ())
            for form in COLORS.get(shade, (shade,))
            for term in self.terms(form, among)
            if not term.partial
        ]
        if key is not None and self._has_name(key, among):
            grounded = [exclusion]
            name = next((t.name for t in shaded if canonical_key(t.name) == key), None)
        else:
            found = self.terms(exclusion.value, among)
            if found:
                name, values = self._choose(found, key)
                grounded = [Exclusion(field=name, value=v) for v in values]
            else:  # blue itself unsold, navy sold
                grounded = [exclusion]
                name = shaded[0].name if shaded else None
        shades = [v for term in shaded if term.name == name for v in term.values]
        held = {e.value for e in grounded}
        extra = [Exclusion(field=name, value=v) for v in dict.fromkeys(shades) if v not in held]
        return grounded + extra


class GroundedUnderstander:
    """An understander whose every answer is grounded in a catalog's vocabulary."""

    def __init__(
        self,
        understand: Understander,
        vocabulary: CatalogVocabulary,
        *,
        check: Understander | None = None,
    ) -> None:
        """``check``, when given (the rule parser, beside a model), reads each request too:
        where the inner reading asks for values the catalog's products of that kind do not
        have ("rating: rated ipx7 last 8 hrs") and ``check``'s asks for fewer, ``check``'s
        reading is taken. An inner understander that only fills the gaps of ``check``'s reading
        (its ``fills_gaps_of`` is ``check``: a rules-first model) is not called where no word
        ``check`` left could back a value (:meth:`CatalogVocabulary.could_back`)."""
        self.inner = understand
        self.vocabulary = vocabulary
        self.check = check
        # A follow-up is read alone, then with the earlier requests, which may be the same
        # call; a model is asked each request once (the last readings, exactly as asked).
        self._read_before: OrderedDict[tuple[str, tuple[str, ...]], SearchQuery] = OrderedDict()
        self._read_lock = threading.Lock()

    def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        """``request`` as a query; with ``context`` (the earlier requests) a follow-up of them."""
        return self._read(request, context, None)

    def refine(
        self, request: str, shown: SearchQuery, *, context: Sequence[str] = ()
    ) -> SearchQuery:
        """``request`` as a follow-up of ``shown``, the query whose results are on screen,
        when it stays with that kind of product: every constraint of ``shown`` is kept unless
        the request names the same option, excludes the value or lets go of it ("any
        colour"). Earlier requests are not read again then: reading them again loses what
        their own turn settled (a bound, a letter size, the kind chosen from a question). A
        request for something else is read as :meth:`__call__` reads it."""
        return self._read(request, context, shown)

    def _understand(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        key = (request, tuple(context))
        with self._read_lock:
            if key in self._read_before:
                self._read_before.move_to_end(key)
                return self._read_before[key]
        query = self._understand_afresh(request, context)
        with self._read_lock:
            self._read_before[key] = query
            if len(self._read_before) > _READINGS_KEPT:
                self._read_before.popitem(last=False)
        return query

    def _understand_afresh(self, request: str, context: Sequence[str]) -> SearchQuery:
        checked: SearchQuery | None = None
        check = self.check
        fills: object = getattr(self.inner, "fills_gaps_of", None)
        if check is not None and fills is check:
            # The inner model only fills the gaps of check's reading: where no word left could
            # back a value this catalog keeps, asking it costs time and can add nothing.
            checked = check(request, context=context)
            if not self.vocabulary.could_back(checked.text, request, context):
                return checked
        answer = self.inner(request, context=context)
        if self.check is None:
            return answer
        misfits = self.vocabulary.misfits(self.vocabulary.ground(answer))
        if not misfits:
            return answer
        if checked is None:
            checked = self.check(request, context=context)
        if self.vocabulary.misfits(self.vocabulary.ground(checked)) < misfits:
            return checked
        return self._unfit_dropped(answer, checked)

    def _unfit_dropped(self, answer: SearchQuery, checked: SearchQuery) -> SearchQuery:
        """``answer`` without the values it adds to ``checked``'s reading that no product of
        its kind has ("lens type: non-polarized lenses"): a constraint the catalog cannot
        check would be shown as met; its words go back to the text, which search still reads."""
        tables: dict[str, dict[str, list[str]]] = {}
        words = [answer.text] if answer.text else []
        dropped = False
        for name in ("options", "attributes"):
            table: dict[str, list[str]] = getattr(answer, name)
            theirs: dict[str, list[str]] = getattr(checked, name)
            kept = dict(table)
            for key, values in table.items():
                if theirs.get(key) == values:
                    continue
                alone = SearchQuery(category=answer.category).model_copy(
                    update={name: {key: values}}
                )
                if self.vocabulary.misfits(self.vocabulary.ground(alone)):
                    del kept[key]
                    words.extend(values)
                    dropped = True
            tables[name] = kept
        if not dropped:
            return answer
        return answer.model_copy(update={**tables, "text": " ".join(words)})

    def _read(self, request: str, context: Sequence[str], shown: SearchQuery | None) -> SearchQuery:
        query = self._read_words(request, context, shown)
        if query.category is None:
            department = self.vocabulary.department_asked(request)
            if department is not None:  # "what do you have for pets then"
                return query.model_copy(update={"category": department})
        return query

    def _read_words(
        self, request: str, context: Sequence[str], shown: SearchQuery | None
    ) -> SearchQuery:
        if not context and shown is None:
            return self.vocabulary.bounded(
                self.vocabulary.ground(self._understand(request)), request
            )
        request = self.vocabulary.answered(request)
        stepped = shown
        if shown is not None:
            stepped, request = self.vocabulary.stepped(shown, request)
        alone = self._understand(request)
        latest = self.vocabulary.bounded(self.vocabulary.ground(alone), request)
        said = self.vocabulary.dropping(latest, request)  # "battery" of "forget the battery"
        if (
            shown is not None
            and stepped is not None
            and said.model_copy(update={"text": "", "sort": "relevance"}).is_empty()
        ):
            kept = self.vocabulary.dropping(stepped, request)
            if kept != shown:  # "any colour", "forget the battery thing", "a bigger screen"
                return _refined(kept, said)
        shown = stepped
        inside = None
        if shown is not None and shown.category and not latest.category:
            # Read among that kind's products: "750" is 750ml there, "medium" a frame size,
            # "which of those are waterproof" their waterproof: yes.
            within = alone.model_copy(update={"category": shown.category})
            inside = self.vocabulary.bounded(self.vocabulary.ground(within), request)
        if shown is not None and (
            self._continues(shown, latest)
            or (
                inside is not None
                and self._continues(shown, inside.model_copy(update={"category": None}))
            )
        ):
            reading = inside or latest
            said_option = bool(reading.options or reading.attributes)
            if _JUST.search(request) or (said_option and _ONLY_THIS.search(request)):
                # "ok just wireless then": of that kind, only what this turn says.
                shown = shown.model_copy(update={"options": {}, "attributes": {}, "text": ""})
            return self.vocabulary.dropping(_refined(shown, reading), request)
        # Only here are the earlier requests read again (a model answers the turn once above).
        merged = self.vocabulary.ground(self._understand(request, context=context))
        merged = self.vocabulary.dropping(self.vocabulary.bounded(merged, request), request)
        if not context:
            return merged
        if not merged.category and not latest.category:
            previous = self.vocabulary.ground(self._understand(context[-1], context=context[:-1]))
            if previous.category and self.vocabulary.refines(latest, previous.category):
                return _refined(previous, latest)
        if not latest.options:
            return merged
        # A follow-up's own value replaces what an earlier turn said under the same option
        # ("non-polarized ones" after "polarized sunglasses"), however the inner merged them.
        return merged.model_copy(update={"options": {**merged.options, **latest.options}})

    def _continues(self, shown: SearchQuery, latest: SearchQuery) -> bool:
        """Whether ``latest`` refines the search ``shown``: it names that kind (or a kind when
        ``shown`` asked which kind was meant), or no kind and says only what that kind has."""
        if shown.brand and latest.brand and latest.brand != shown.brand:
            return False
        if latest.category:
            return shown.category in (None, latest.category)
        if not shown.category:
            # After "which kind do you mean?", more of what is wanted ("4k, ethernet then")
            # adds to what was said.
            return bool(latest.options or latest.exclude or latest.price or latest.available_only)
        return self.vocabulary.refines(latest, shown.category)


def _refined(previous: SearchQuery, latest: SearchQuery) -> SearchQuery:
    """``previous`` narrowed by what ``latest`` says ("und unter 150?", "4k at least"): its
    values replace those of the same option, its exclusions take their value out of the
    options, and a value it asks for again is no longer excluded."""
    options = {**previous.options, **latest.options}
    attributes = {**previous.attributes, **latest.attributes}
    for exclusion in latest.exclude:
        named = canonical_key(exclusion.field) if exclusion.field else None
        for table in (options, attributes):
            for key in [k for k in table if named in (None, canonical_key(k))]:
                kept = [v for v in table[key] if v.casefold() != exclusion.value.casefold()]
                if kept:
                    table[key] = kept
                else:
                    del table[key]
    wanted = {
        value.casefold()
        for table in (latest.options, latest.attributes)
        for values in table.values()
        for value in values
    }
    exclude = [e for e in previous.exclude if e.value.casefold() not in wanted]
    exclude += [e for e in latest.exclude if e not in exclude]
    said = [w for w in latest.text.split() if w.casefold() not in FILLER]
    # The words of a value replaced go with it ("light" of "light skin", now "medium skin").
    replaced = {
        word
        for old, new in (
            (previous.options, latest.options),
            (previous.attributes, latest.attributes),
        )
        for key, values in old.items()
        if key in new
        for value in values
        if value not in new[key]
        for word in value.casefold().split()
    }
    before = [w for w in previous.text.split() if w.casefold() not in replaced]
    text = " ".join(dict.fromkeys([*before, *said]))
    return previous.model_copy(
        update={
            "text": text if latest.category in (None, previous.category) else " ".join(said),
            "category": latest.category or previous.category,
            "brand": latest.brand or previous.brand,
            "attributes": attributes,
            "options": options,
            "price": latest.price or previous.price,
            "exclude": exclude,
            "available_only": previous.available_only or latest.available_only,
            "sort": latest.sort if latest.sort != "relevance" else previous.sort,
            "min_rating": latest.min_rating or previous.min_rating,
        }
    )
