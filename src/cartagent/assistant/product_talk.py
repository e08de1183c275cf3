"""Whether a turn says something about products, in so many words.

The router compares a turn with whole example requests, so a follow-up in the shopper's own
words ("nothing too hard tho, she's no expert", "ok fair point. a corded upright then,
bagless") can look like nothing it serves. With results on screen, such a turn refines them:
:func:`names_constraints` tells it from a request the store cannot serve ("tell me a joke about
cats", "what's the weather") by what the searcher's understander reads in the turn alone.

Only constraints the shopper said count: a value, kind or brand one of whose words the turn
writes (stemmed, or as the rule parser's word lists spell it in another language: "Schwarz"
is black), a price with its number, or "in stock". Spelling correction may turn ordinary
words into catalog values ("weather" into leather, "write" into white); those do not count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING

from rapidfuzz.distance import OSA

from ..errors import ModelError
from ..retrieval import (
    ATTRIBUTE_WORDS,
    BRANDS,
    CATEGORIES,
    COLORS,
    GENDERS,
    GLOSSES,
    MATERIALS,
    SIZE_WORDS,
    STOPWORDS,
    SearchQuery,
    shared_words,
)

if TYPE_CHECKING:
    from ..retrieval import Searcher

__all__ = ["names_a_kind", "names_constraints", "said_constraints"]

_TYPED_KIND = 6  # the shortest word of a kind whose one-letter typo still names it

_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
_LONGEST_FORM = 3  # words in the longest word-list form worth looking for ("bleu marine")


@cache
def _canonical_of() -> dict[str, tuple[str, ...]]:
    """Every form in the rule parser's word lists -> the canonical values it names."""
    tables = [COLORS, MATERIALS, GENDERS, CATEGORIES, BRANDS, SIZE_WORDS, GLOSSES]
    tables += list(ATTRIBUTE_WORDS.values())
    found: dict[str, list[str]] = {}
    for table in tables:
        for canonical, forms in table.items():
            for form in forms:
                found.setdefault(form.casefold(), []).append(canonical)
    return {form: tuple(values) for form, values in found.items()}


def _phrases(words: list[str]) -> Iterator[str]:
    for size in range(1, _LONGEST_FORM + 1):
        for start in range(len(words) - size + 1):
            yield " ".join(words[start : start + size])


def _said_stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s words (stop words left out) and of the canonical values its
    words name in the rule parser's lists."""
    words = _WORD.findall(text.casefold().replace("\u2019", "'"))
    stems: set[str] = set()
    for word in words:
        if word not in STOPWORDS:
            stems |= shared_words()(word)
    canonical = _canonical_of()
    for phrase in _phrases(words):
        for value in canonical.get(phrase, ()):
            stems |= shared_words()(value)
    return frozenset(stems)


def _values(query: SearchQuery) -> Iterable[str]:
    """Every value the query constrains by: kind, brand, options, attributes, exclusions."""
    if query.category:
        yield query.category
    if query.brand:
        yield query.brand
    for values in (*query.options.values(), *query.attributes.values()):
        yield from values
    for exclusion in query.exclude:
        yield exclusion.value


def said_constraints(text: str, query: SearchQuery) -> bool:
    """Whether ``query`` (what an understander read in ``text``) holds a constraint ``text``
    says in so many words."""
    if query.available_only or (query.price is not None and any(c.isdigit() for c in text)):
        return True
    said = _said_stems(text)
    return any(shared_words()(value) & said for value in _values(query))


def names_a_kind(
    text: str, searcher: Searcher, understand: Callable[[str], SearchQuery] | None = None
) -> bool:
    """Whether ``text``, read alone (by ``understand``, default the searcher's understander),
    asks for a kind of product the catalog has, named in its own words ("labtop with i9
    procesor", "ich suche einen Wasserkocher"): a search however chatty, rude or foreign the
    rest of it is. An understander whose model fails reads nothing."""
    try:
        query = (understand or searcher.understand)(text)
    except ModelError:
        return False
    if query.category is None:
        return _names_a_kinds_value(text, query, searcher)
    if said_constraints(text, SearchQuery(category=query.category)):
        return True
    # A kind typed one letter off ("labtop", "sunglases"): long words only, first letter kept,
    # so that everyday words ("match", "catch") never turn into one ("watch").
    kind = [w for w in _WORD.findall(query.category.casefold()) if len(w) >= _TYPED_KIND]
    typed = [w for w in _WORD.findall(text.casefold()) if len(w) >= _TYPED_KIND]
    return any(a[0] == b[0] and OSA.distance(a, b) == 1 for a in typed for b in kind)


def _names_a_kinds_value(text: str, query: SearchQuery, searcher: Searcher) -> bool:
    """Whether ``text`` says, word for word, option values that only one kind of product
    offers ("i'd like a french press", "something with a rotisserie")."""
    if searcher.vocabulary is None or not query.options:
        return False
    said = _said_stems(text)
    for values in query.options.values():
        if not any(shared_words()(v) and shared_words()(v) <= said for v in values):
            return False
    return len(searcher.vocabulary.kinds_offering(query.options)) == 1


def names_constraints(
    text: str, searcher: Searcher, understand: Callable[[str], SearchQuery] | None = None
) -> bool:
    """Whether the searcher's understander (or ``understand``) reads a constraint ``text``
    says (see :func:`said_constraints`). The turn is read alone: with the earlier requests as
    context the query would hold their constraints too. An understander whose model fails
    reads nothing."""
    try:
        query = (understand or searcher.understand)(text)
    except ModelError:
        return False
    return said_constraints(text, query)
