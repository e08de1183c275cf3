"""Filling the gaps of the rule parser's reading with a model's.

Rules first, a model is asked only about requests the parser could not read whole: it left words
in ``text``. What the parser did read it reads precisely (on the tuning set's dev split, a
reading that places every word is exact every time), so :func:`fill_gaps` keeps all of it and
takes from the model only what fills a gap, and only what the leftover words say:

* a category, brand, attribute or option name the parser did not fill, or an exclusion it did
  not find, is taken when each word of the model's value is one of the leftover words, or one
  typo away from it ("sneakrs" ~ "sneakers"), each leftover word backing one value at most: a
  small model also invents categories for vague requests ("something to boil water for tea" ->
  "tea bag") and files leftover words under wrong names, and a constraint that is not in the
  words is a filter the shopper never asked for; a category must also be a kind the word lists
  know (not "bedroom"), and a gender, colour, material or size one of theirs (not "rgb" as a
  colour, "drop" as a size);
* a price bound the parser did not set is taken when its number is one of the leftover words and
  they say a price (a currency or a bound's cue): a number the parser placed is not a second
  bound ("unter 200 Euro" is not "200 to 200"), nor is a bare number ("bump it to 32");
* a minimum rating, sort or stock flag the parser did not set is taken as the model gives it
  (grounding has already checked ratings against the request).

The free text keeps the parser's leftover words that no value taken from the model used, and
the parts of a word a value used only in part ("8130u" of "i3-8130u").

:func:`patch` is the converse: what a query adds in the gaps of the parser's reading, the whole
answer of a model tuned in the ``patch`` style (it writes only that, a few tokens where the full
line took up to 30).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .grounding import same_word, token_number, word_tokens
from .query import Exclusion, PriceRange, SearchQuery
from .vocabulary import (
    CATEGORY_OF,
    COLOR_OF,
    CURRENCY_WORDS,
    GENDER_OF,
    MATERIAL_OF,
    PRICE_MAX_CUES,
    PRICE_MIN_CUES,
    SIZE_OF,
    SIZE_WORDS,
)

__all__ = ["fill_gaps", "patch"]


class _Leftover:
    """The parser's unplaced words, each usable once as a value's evidence."""

    def __init__(self, text: str) -> None:
        self.words = text.split()
        self.tokens = [(i, t) for i, word in enumerate(self.words) for t in word_tokens(word)]
        self.used: set[int] = set()  # indices into tokens

    def take(self, value: str) -> bool:
        """Use the leftover words that say ``value``; False (nothing used) if they do not."""
        wanted = word_tokens(value)
        if not wanted:
            return False
        chosen: list[int] = []
        for token in wanted:
            found = next(
                (
                    k
                    for k, (_, have) in enumerate(self.tokens)
                    if k not in self.used and k not in chosen and same_word(token, have)
                ),
                None,
            )
            if found is None:
                return self._take_joined("".join(wanted))
            chosen.append(found)
        self.used.update(chosen)
        return True

    def _take_joined(self, joined: str) -> bool:
        """One leftover word writing a value's words together ("16gb", "tshirt")."""
        for k, (i, _) in enumerate(self.tokens):
            if k not in self.used and "".join(word_tokens(self.words[i])) == joined:
                self.used.update(n for n, (w, _) in enumerate(self.tokens) if w == i)
                return True
        return False

    def text(self) -> str:
        """The words no value used; of a word some value used in part ("i3" of "i3-8130u",
        "m" of "m.2"), the parts it did not use ("8130u", "2")."""
        kept: list[str] = []
        parts_of: dict[int, list[tuple[int, str]]] = {}
        for k, (i, token) in enumerate(self.tokens):
            parts_of.setdefault(i, []).append((k, token))
        for i, word in enumerate(self.words):
            parts = parts_of.get(i, [])
            if all(k not in self.used for k, _ in parts):
                kept.append(word)
                continue
            # The unused parts as written, those that touch in the word kept together.
            folded, at, piece, end = word.casefold(), 0, "", -1
            for k, token in parts:
                start = folded.find(token, at)
                if start < 0:  # a token not spelt as in the word: nothing to cut it from
                    break
                at = start + len(token)
                if k in self.used:
                    continue
                if piece and start != end:
                    kept.append(piece)
                    piece = ""
                piece, end = piece + word[start:at], at
            if piece:
                kept.append(piece)
        return " ".join(kept)


def _a_kind(category: str | None) -> str | None:
    """``category`` when it is a kind of product the word lists know; a place or a use a model
    took for one ("bedroom" of "the air in my bedroom") is no kind, and its word stays in the
    text (where a catalog's own vocabulary still finds a kind it sells)."""
    return category if category is not None and category.casefold() in CATEGORY_OF else None


_NUMERIC_SIZE = re.compile(r"\d+(?:\.\d+)?")


def _fits_its_name(key: str | None, value: str) -> bool:
    """Whether ``value`` may be filed under ``key``: a name whose values the word lists hold all
    of (a gender, a colour, a material, a letter or number size) takes only one of them. A
    small model files leftover words under such names ("rgb" a colour, "insulated" a
    material, "drop" a size, "husband" a gender); the words stay in the text, where the
    catalog's own vocabulary still places what it sells."""
    name, said = (key or "").casefold(), value.casefold()
    if name == "gender":
        return said in GENDER_OF
    if name in ("color", "colour"):
        return said in COLOR_OF
    if name == "material":
        return said in MATERIAL_OF
    if name == "size":
        return said in SIZE_OF or value.upper() in SIZE_WORDS or bool(_NUMERIC_SIZE.fullmatch(said))
    return True


def _said(value: str | None, leftover: _Leftover) -> str | None:
    return value if value is not None and leftover.take(value) else None


def _table(
    parser: dict[str, list[str]], model: dict[str, list[str]], leftover: _Leftover
) -> dict[str, list[str]]:
    out = dict(parser)
    for key, values in model.items():
        if key not in out:
            said = [v for v in values if _fits_its_name(key, v) and leftover.take(v)]
            if said:
                out[key] = said
    return out


def _exclusions(
    parser: Iterable[Exclusion], model: Iterable[Exclusion], leftover: _Leftover
) -> list[Exclusion]:
    out = list(parser)
    found = {e.value.casefold() for e in out}
    for exclusion in model:
        if (
            exclusion.value.casefold() not in found
            and _fits_its_name(exclusion.field, exclusion.value)
            and leftover.take(exclusion.value)
        ):
            found.add(exclusion.value.casefold())
            out.append(exclusion)
    return out


# Cues made only of signs ("<", "$") have no words: _PRICE_SIGNS finds those.
_PRICE_CUES = [
    cue
    for cue in (tuple(word_tokens(c)) for c in (*PRICE_MAX_CUES, *PRICE_MIN_CUES, *CURRENCY_WORDS))
    if cue
]
_PRICE_SIGNS = frozenset("$€£¥<>≤≥")


def _priced(leftover: _Leftover) -> bool:
    """Whether the leftover words say a price: a currency, or a bound's cue ("max", "budget",
    one typo allowed), not a bare number ("bump it to 32" is memory, not dollars)."""
    if any(sign in word for word in leftover.words for sign in _PRICE_SIGNS):
        return True
    said = [t for _, t in leftover.tokens]
    return any(
        all(same_word(c, s) for c, s in zip(cue, said[i : i + len(cue)], strict=True))
        for cue in _PRICE_CUES
        for i in range(len(said) - len(cue) + 1)
    )


def _left_said(model: PriceRange | None, leftover: _Leftover) -> PriceRange | None:
    """The bounds of ``model`` whose number is one of the leftover words, beside a word that
    says a price: a number the parser already placed ("unter 200 Euro" read as at most 200) is
    not a second bound, and a bare number is no price."""
    if model is None or not _priced(leftover):
        return None
    numbers = {n for _, t in leftover.tokens if (n := token_number(t)) is not None}
    low = model.min if model.min in numbers else None
    high = model.max if model.max in numbers else None
    if low is None and high is None:
        return None
    return PriceRange(min=low, max=high, currency=model.currency)


def _price(parser: PriceRange | None, model: PriceRange | None) -> PriceRange | None:
    if parser is None or model is None:
        return parser or model
    if parser.currency != model.currency:
        return parser
    low = parser.min if parser.min is not None else model.min
    high = parser.max if parser.max is not None else model.max
    if low is not None and high is not None and low > high:
        return parser
    return PriceRange(min=low, max=high, currency=parser.currency)


def fill_gaps(parser: SearchQuery, model: SearchQuery) -> SearchQuery:
    """``parser``'s reading, with the gaps the leftover words fill taken from ``model``'s."""
    leftover = _Leftover(parser.text)
    category = parser.category or _said(_a_kind(model.category), leftover)
    brand = parser.brand or _said(model.brand, leftover)
    options = _table(parser.options, model.options, leftover)
    attributes = _table(parser.attributes, model.attributes, leftover)
    exclude = _exclusions(parser.exclude, model.exclude, leftover)
    return SearchQuery(
        text=leftover.text(),
        category=category,
        brand=brand,
        attributes=attributes,
        options=options,
        price=_price(parser.price, _left_said(model.price, leftover)),
        sort=parser.sort if parser.sort != "relevance" else model.sort,
        min_rating=parser.min_rating if parser.min_rating is not None else model.min_rating,
        available_only=parser.available_only or model.available_only,
        exclude=exclude,
    )


def _missing_price(parser: PriceRange | None, wanted: PriceRange | None) -> PriceRange | None:
    if wanted is None or parser is None:
        return wanted
    if parser.currency != wanted.currency:
        return None
    low = wanted.min if parser.min is None else None
    high = wanted.max if parser.max is None else None
    if low is None and high is None:
        return None
    return PriceRange(min=low, max=high, currency=wanted.currency)


def patch(parser: SearchQuery, wanted: SearchQuery) -> SearchQuery:
    """The part of ``wanted`` that falls in the gaps of the ``parser``'s reading: the fields it
    left open and the exclusions it did not find (no free text, which :func:`fill_gaps` rebuilds
    from the leftover words), so that ``fill_gaps(parser, patch(parser, wanted))`` is
    ``fill_gaps(parser, wanted)``."""
    found = {e.value.casefold() for e in parser.exclude}
    return SearchQuery(
        category=None if parser.category else wanted.category,
        brand=None if parser.brand else wanted.brand,
        attributes={k: v for k, v in wanted.attributes.items() if k not in parser.attributes},
        options={k: v for k, v in wanted.options.items() if k not in parser.options},
        price=_missing_price(parser.price, wanted.price),
        sort=wanted.sort if parser.sort == "relevance" else "relevance",
        min_rating=wanted.min_rating if parser.min_rating is None else None,
        available_only=wanted.available_only and not parser.available_only,
        exclude=[e for e in wanted.exclude if e.value.casefold() not in found],
    )
