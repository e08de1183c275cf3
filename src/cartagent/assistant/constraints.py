"""Each constraint of a search, with where the turn says it and how sure that reading is.

A search query says what is wanted; the shopper's words say it first. :func:`constraints_of`
lines the two up: for the kind, each option and attribute value, each exclusion, the price
bounds and the stock flag, the span of the turn that says it and how it was read:

* ``said``: the turn's own words name it (the value's words, a typo of them, or a form the
  catalog's vocabulary files under that value: "16 gigs" for 16GB, "waterproof" for water
  resistance: yes);
* ``glossed``: the turn says it in another language or by a use the word lists read as it
  ("wasserdicht", "snorkeling" for waterproof, "keep my tea hot" for an insulated bottle): less
  sure, the word lists' reading and not the shopper's words;
* ``earlier``: nothing in this turn says it; an earlier turn did, and it is carried.

The discovery specialist sends these with each search reply, so a client (or a model behind the
understander) sees which of a search's constraints rest on the shopper's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from ..retrieval import YES, glossed_spans, shared_words

if TYPE_CHECKING:
    from ..retrieval import CatalogVocabulary, SearchQuery, Term


__all__ = ["Constraint", "How", "constraints_of"]

How = Literal["said", "glossed", "earlier"]

_TOKEN = re.compile(r"[^\W_]+(?:['\u2019.,-][^\W_]+)*")
_WINDOW = 4  # a value's words are said within this many words of each other


@dataclass(frozen=True)
class Constraint:
    """``field`` ("category", "option:<name>", "attribute:<name>", "exclude:<name>",
    "price:min", "price:max", "stock") holds ``value``; ``span`` is the (start, end) of the
    turn's text that says it, ``None`` when nothing in the turn does."""

    field: str
    value: str
    span: tuple[int, int] | None
    how: How

    def record(self) -> dict[str, Any]:
        """As a reply's data holds it."""
        span = list(self.span) if self.span is not None else None
        return {"field": self.field, "value": self.value, "span": span, "how": self.how}


def constraints_of(
    query: SearchQuery, text: str, vocabulary: CatalogVocabulary | None = None
) -> tuple[Constraint, ...]:
    """Every constraint of ``query`` with where ``text`` (the turn) says it (see the module);
    ``vocabulary`` (the catalog's) finds the forms it files under a value."""
    finder = _Finder(text, vocabulary, query.category)
    found: list[Constraint] = []
    if query.category:
        found.append(finder.find("category", query.category, kind=True))
    for prefix, table in (("option", query.options), ("attribute", query.attributes)):
        for name, values in table.items():
            found += [finder.find(f"{prefix}:{name}", value, name=name) for value in values]
    for exclusion in query.exclude:
        name = exclusion.field or ""
        found.append(finder.find(f"exclude:{name}".rstrip(":"), exclusion.value, name=name))
    if query.price is not None:
        for side, bound in (("min", query.price.min), ("max", query.price.max)):
            if bound is not None:
                found.append(finder.amount(f"price:{side}", bound))
    if query.available_only:
        found.append(finder.stock())
    return tuple(found)


class _Finder:
    """The turn's words, with their offsets and stems, searched for each constraint."""

    def __init__(self, text: str, vocabulary: CatalogVocabulary | None, kind: str | None):
        self.text = text
        self.vocabulary = vocabulary
        self.among = vocabulary.products_of(kind) if vocabulary is not None else frozenset()
        self.stems = shared_words()
        self.tokens = [(m.start(), m.end(), m.group(0).casefold()) for m in _TOKEN.finditer(text)]
        self.token_stems = [self.stems(word) for _, _, word in self.tokens]
        self.glossed = glossed_spans(text)
        self.terms: dict[str, list[Term]] = {}

    def find(self, field: str, value: str, *, name: str = "", kind: bool = False) -> Constraint:
        # "water resistance: yes" is said by the option's name ("water resistance").
        words = name if value.casefold() in YES and name else value
        span = self._words(words) or self._filed(value, name, kind)
        if span is None and kind:  # a name of the kind: "electronic readers"
            span = next((s[:2] for s in self.glossed if s[2] == value.casefold()), None)
        if span is not None:
            return Constraint(field, value, span, "said")
        span = self._glossed(words)
        return Constraint(field, value, span, "glossed" if span is not None else "earlier")

    def amount(self, field: str, bound: Decimal) -> Constraint:
        for start, end, word in self.tokens:
            number = word.replace(",", "").rstrip("k")
            try:
                said = Decimal(number) * (1000 if word.endswith("k") else 1)
            except ArithmeticError:
                continue
            if said == bound:
                return Constraint(field, str(bound), (start, end), "said")
        return Constraint(field, str(bound), None, "earlier")

    def stock(self) -> Constraint:
        for start, end, word in self.tokens:
            if word in {"stock", "stok", "available", "disponible", "lager", "lieferbar"}:
                return Constraint("stock", "in stock", (start, end), "said")
        return Constraint("stock", "in stock", None, "earlier")

    def _words(self, value: str) -> tuple[int, int] | None:
        """The shortest run of the turn's words that holds every stem of ``value``."""
        wanted = self.stems(value)
        if not wanted:
            return None
        for i, stems in enumerate(self.token_stems):
            if not stems & wanted:
                continue
            held = set(stems & wanted)
            for j in range(i, min(i + _WINDOW, len(self.tokens))):
                held |= self.token_stems[j] & wanted
                if held == wanted:
                    return self.tokens[i][0], self.tokens[j][1]
        return None

    def _filed(self, value: str, name: str, kind: bool) -> tuple[int, int] | None:
        """A word or two of the turn the catalog's vocabulary files under ``value``."""
        if self.vocabulary is None:
            return None
        folded = value.casefold()
        for size in (2, 1):
            for i in range(len(self.tokens) - size + 1):
                start, end = self.tokens[i][0], self.tokens[i + size - 1][1]
                words = self.text[start:end]
                if kind:
                    if self.vocabulary.names_products(words) and folded in words.casefold():
                        return start, end
                    continue
                if words not in self.terms:  # looked up once per turn, for every value
                    self.terms[words] = self.vocabulary.terms(words, self.among)
                for term in self.terms[words]:
                    if folded in (v.casefold() for v in term.values) and (
                        not name or term.name.casefold() == name.casefold()
                    ):
                        return start, end
        return None

    def _glossed(self, value: str) -> tuple[int, int] | None:
        """The words of the turn the word lists read as ``value`` (another language, a use)."""
        wanted = self.stems(value)
        for start, end, english in self.glossed:
            if wanted and wanted <= self.stems(english):
                return start, end
        return None
