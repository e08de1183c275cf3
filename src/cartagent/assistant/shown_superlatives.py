"""Superlatives about the results shown: "which one is the lightest?", "which is bigger?".

They searched for "lightest" (LED bulbs). A superlative the shown options can answer (a size,
a capacity, a length, a power) picks the card or cards at that end; one they cannot answer is
said to be unknown, with what the shown products do differ in. Price and rating are
:mod:`.references`' and the sort's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..retrieval import canonical_key
from .cards import ProductCard

__all__ = ["Superlative", "answer_superlative", "find_superlative"]

# adjective -> (what it measures, the option names that hold it, whether more is the answer)
_SIZE = ("size", "capacity", "volume", "storage")
_MEASURES: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "light": ("weight", ("weight",), False),
    "heavy": ("weight", ("weight",), True),
    "big": ("size", _SIZE, True),
    "large": ("size", _SIZE, True),
    "small": ("size", _SIZE, False),
    "tiny": ("size", _SIZE, False),
    "long": ("length", ("length",), True),
    "short": ("length", ("length",), False),
    "powerful": ("power", ("power", "wattage", "watts"), True),
    "fast": ("speed", ("speed",), True),
    "slow": ("speed", ("speed",), False),
    "bright": ("brightness", ("brightness", "lumens"), True),
}
_FORMS = {
    **{f"{stem}est": stem for stem in ("light", "long", "short", "small", "fast", "slow")},
    **{f"{stem}er": stem for stem in ("light", "long", "short", "small", "fast", "slow")},
    "heaviest": "heavy", "heavier": "heavy", "biggest": "big", "bigger": "big",
    "largest": "large", "larger": "large", "tiniest": "tiny", "tinier": "tiny",
    "brightest": "bright", "brighter": "bright", "most powerful": "powerful",
    "more powerful": "powerful",
}  # fmt: skip
_NOT_HERE = frozenset({"best", "better", "cheapest", "cheaper", "priciest", "pricier",
                       "dearest", "dearer", "most expensive", "more expensive",
                       "least expensive", "less expensive", "highest rated"})  # fmt: skip
_WHICH = re.compile(
    r"^(?:so\s+|and\s+|ok\s+)?which(?:\s+ones?)?(?:\s+of\s+(?:them|these|those|the\s+\w+))?\s+"
    r"(?:is|'s|are|would\s+be)\s+(?:the\s+)?"
    r"(?P<word>(?:most|least|more|less)\s+[a-z-]{3,}|[a-z]{2,}est|[a-z]{3,}er)\s*\??$"
)
_WHICH_HAS = re.compile(
    r"^(?:so\s+|and\s+|ok\s+)?which(?:\s+ones?)?(?:\s+of\s+(?:them|these|those|the\s+\w+))?\s+"
    r"(?:has|have|offers?|gives?)\s+(?:the\s+)?"
    r"(?P<end>most|more|biggest|bigger|largest|larger|highest|higher|longest|longer|least|less"
    r"|smallest|smaller|lowest|lower|shortest|shorter)\s+(?P<option>[a-z][a-z -]{1,25}?)\s*\??$"
)
_MORE_WORDS = frozenset({"most", "more", "biggest", "bigger", "largest", "larger", "highest",
                         "higher", "longest", "longer"})  # fmt: skip
_SIZE_ORDER = {"xxs": 0, "xs": 1, "s": 2, "small": 2, "m": 3, "medium": 3, "l": 4, "large": 4,
               "xl": 5, "xxl": 6, "xxxl": 7}  # fmt: skip
_LEVELS = {"very low": 0, "low": 1, "medium": 2, "mid": 2, "normal": 2, "high": 3,
           "very high": 4}  # fmt: skip
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Superlative:
    """The word asked ("lightest") and, when it is one this module measures, its stem; or,
    for "which one has the most storage?", the ``option`` named and whether ``more`` wins."""

    word: str
    stem: str | None
    option: str | None = None
    more: bool = True


# "the biggest one", "whatever. the lightest one?": a pick said without "which".
_THE_ONE = re.compile(
    r"^(?:(?:ok|okay|whatever|fine|then|so)\W+)*(?:i'?ll take\s+|give me\s+)?the\s+"
    r"(?P<word>(?:most|least)\s+[a-z-]{3,}|[a-z]{2,}est)(?:\s+ones?)?\s*[?.!]?$"
)


def find_superlative(text: str) -> Superlative | None:
    """The superlative ``text`` asks of the results shown, or ``None``."""
    said = " ".join(text.casefold().replace("one's", "one is").split())
    bare = _THE_ONE.match(said)
    if bare is not None and bare["word"] in _FORMS:
        return Superlative(bare["word"], _FORMS[bare["word"]])
    having = _WHICH_HAS.match(said)
    if having is not None and having["option"] not in ("price", "money", "rating", "ratings"):
        end, option = having["end"], having["option"]
        return Superlative(f"{end} {option}", None, option, end in _MORE_WORDS)
    found = _WHICH.match(said)
    if found is None or found["word"] in _NOT_HERE:
        return None
    word = found["word"]
    if word.endswith("er") and word not in _FORMS and not word.startswith(("more ", "less ")):
        return None  # "which one is the other?": not a comparison
    return Superlative(word, _FORMS.get(word))


def _ranks(values: Sequence[str]) -> list[float | None]:
    """The values of one option as numbers to compare: by the order of sizes or of levels
    when one of them orders every value ("S" < "XL", "low" < "high"), else by their first
    number ("20 L", "1.5 liters")."""
    said = [value.casefold().strip() for value in values]
    for order in (_SIZE_ORDER, _LEVELS):
        if all(value in order for value in said):
            return [float(order[value]) for value in said]
    numbers = [_NUMBER.search(value) for value in values]
    return [float(found.group()) if found else None for found in numbers]


def _differences(shown: Sequence[ProductCard]) -> str:
    names = sorted({n for card in shown for n in card.options})
    differing = [n for n in names if len({card.options.get(n) for card in shown}) > 1]
    if len({card.title for card in shown}) > 1:
        differing.insert(0, "product")
    if len({card.price for card in shown}) > 1:
        differing.append("price")
    return f"They differ in {', '.join(differing)}." if differing else "They are alike."


def answer_superlative(
    asked: Superlative, shown: Sequence[ProductCard]
) -> tuple[str, tuple[ProductCard, ...]]:
    """The answer and the cards it points at (those at the end asked; none when the shown
    options cannot tell)."""
    if len(shown) < 2:
        return "There is only one result shown.", tuple(shown)
    measure = _MEASURES.get(asked.stem or "")
    if asked.option is not None:
        measure = (asked.option, (canonical_key(asked.option),), asked.more)
    if measure is None:
        return f"The catalog does not say which is {asked.word}. {_differences(shown)}", ()
    noun, keys, more = measure
    only: tuple[float, ProductCard, str, str] | None = None
    for key in keys:
        held = [
            (card, name, value)
            for card in shown
            for name, value in card.options.items()
            if key in canonical_key(name)
        ]
        ranked = [
            (rank, card, name, value)
            for rank, (card, name, value) in zip(_ranks([v for _, _, v in held]), held, strict=True)
            if rank is not None
        ]
        if len({card.rank for _, card, _, _ in ranked}) == 1:
            only = only or ranked[0]  # said if no other option ranks two of them
            continue
        if not ranked:
            continue
        end = (max if more else min)(rank for rank, _, _, _ in ranked)
        picked = [(card, name, value) for rank, card, name, value in ranked if rank == end]
        cards = tuple(card for card, _, _ in picked)
        _, name, value = picked[0]
        if len(cards) == len({card.rank for _, card, _, _ in ranked}):
            return f"They all have the same {name}, {value}. {_differences(shown)}", ()
        which = " and ".join(f"#{card.rank}" for card in cards)
        if asked.option is not None:  # "which one has the most storage?"
            verb = "has" if len(cards) == 1 else "have"
        else:
            verb = "is" if len(cards) == 1 else "are"
        return f"{which} {verb} the {asked.word} ({name} {value}).", cards
    if only is not None:
        _, card, name, value = only
        return f"Only #{card.rank} gives its {name}: {value}.", (card,)
    given = {
        name: value
        for card in shown
        for name, value in card.options.items()
        if any(key in canonical_key(name) for key in keys)
    }
    if given:
        name = next(iter(given))
        values = sorted({card.options[name] for card in shown if name in card.options})
        return (
            f"Their {name} is {', '.join(values)}, which I cannot rank. {_differences(shown)}",
            (),
        )
    which = f"has the {asked.word}" if asked.option is not None else f"is {asked.word}"
    return (
        f"The catalog does not give their {noun}, so I cannot tell which {which}. "
        f"{_differences(shown)}",
        (),
    )
