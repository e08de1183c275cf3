"""References to a listed result: "the second one", "show me #2", "add the first to my cart".

:func:`find_reference` reads which result a message points at (by its rank in the last list,
or the last one) and whether it asks to add it to the cart, and how many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["LAST", "Reference", "find_reference"]

LAST = -1
"""``Reference.rank`` of "the last one"."""
MAX_WORDS = 9
"""Longer messages are not read as references ("the first thing I need is a tent for four")."""

_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": LAST,
}  # fmt: skip
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}  # fmt: skip
_NUMBER = r"(\d{1,2}(?![\d\w])|(?:" + "|".join(_NUMBERS) + r")\b)"

_ORDINAL = r"(" + "|".join(_ORDINALS) + r")\b"
_ORDINAL_RE = re.compile(
    r"\bthe\s+" + _ORDINAL + r"|\b" + _ORDINAL + r"\s+(?:one|result|item|option|product)\b"
)
_SHORT_ORDINAL_RE = re.compile(r"^" + _ORDINAL + r"(?:\s+\w+)?[.!?]?$")  # "second please"
_HASH_RE = re.compile(r"(?:#|\b(?:number|no\.?|nr\.?|option|result|item)\s*#?\s*)" + _NUMBER)
_BARE_RE = re.compile(r"^\s*#?\s*(\d{1,2})\s*[.!?]?\s*$")
_ADD_RE = re.compile(r"\b(add|put|stick|throw|buy)\b|\b(cart|basket|trolley)\b|\bi'?ll take\b")
_REMOVE_RE = re.compile(r"\b(remove|delete|drop|take\s+\w+(?:\s+\w+)?\s+out|out of)\b")
_QUANTITY_RE = re.compile(r"\b(?:add|put|buy|get|take)\s+" + _NUMBER + r"\s+(?:of\b|x\b)")


@dataclass(frozen=True)
class Reference:
    """A pointer into the last result list: ``rank`` from 1, or :data:`LAST`."""

    rank: int
    action: Literal["show", "add"] = "show"
    quantity: int = 1


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def find_reference(text: str) -> Reference | None:
    """The result ``text`` points at, or ``None`` when it points at none.

    Messages of more than :data:`MAX_WORDS` words are not references. Removing something
    ("take the second one out of my cart") is not a reference to the result list: it is
    about the cart.
    """
    lowered = " ".join(text.casefold().split())
    if len(lowered.split()) > MAX_WORDS or _REMOVE_RE.search(lowered):
        return None
    rank: int | None = None
    if (found := _BARE_RE.match(lowered)) is not None:
        rank = int(found.group(1))
    elif (found := _HASH_RE.search(lowered)) is not None:
        rank = _number(found.group(1))
    elif (found := _ORDINAL_RE.search(lowered) or _SHORT_ORDINAL_RE.match(lowered)) is not None:
        rank = _ORDINALS[next(g for g in found.groups() if g)]
    if rank is None or rank == 0:
        return None
    if _ADD_RE.search(lowered):
        quantity = _QUANTITY_RE.search(lowered)
        return Reference(rank, "add", _number(quantity.group(1)) if quantity else 1)
    return Reference(rank)
