"""References to a listed result: "the second one", "show me #2", "add the first to my cart",
"add it to my cart".

:func:`find_reference` reads which result a message points at (by its rank in the last list,
the last one, or the one being talked about) and whether it asks to add it to the cart, and
how many; :func:`pointed_card` finds that card in the conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .cards import ProductCard
from .conversation import Conversation

__all__ = [
    "CHEAPEST",
    "DEAREST",
    "FOCUS",
    "LAST",
    "NUMBER",
    "ORDINAL",
    "ORDINALS",
    "Reference",
    "find_reference",
    "focus",
    "number_value",
    "pointed_card",
]

LAST = -1
"""``Reference.rank`` of "the last one"."""
FOCUS = -2
"""``Reference.rank`` of "it", "this one", "that": the product the conversation is about."""
CHEAPEST = -3
"""``Reference.rank`` of "the cheapest one" of the list shown."""
DEAREST = -4
"""``Reference.rank`` of "the most expensive one" of the list shown."""
MAX_WORDS = 9
"""Longer messages are not read as references ("the first thing I need is a tent for four")."""

ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": LAST,
    # German, French and Spanish, after their articles ("der zweite", "la première")
    "erste": 1, "ersten": 1, "erster": 1, "erstes": 1, "zweite": 2, "zweiten": 2, "zweiter": 2,
    "zweites": 2, "dritte": 3, "dritten": 3, "dritter": 3, "drittes": 3, "vierte": 4,
    "vierten": 4, "fünfte": 5, "fünften": 5, "letzte": LAST, "letzten": LAST, "letzter": LAST,
    "premier": 1, "première": 1, "deuxième": 2, "seconde": 2, "troisième": 3, "quatrième": 4,
    "cinquième": 5, "dernier": LAST, "dernière": LAST,
    "primero": 1, "primera": 1, "primer": 1, "segundo": 2, "segunda": 2, "tercero": 3,
    "tercera": 3, "tercer": 3, "cuarta": 4, "quinto": 5, "quinta": 5, "último": LAST,
    "última": LAST,
}  # fmt: skip
_ARTICLES = r"(?:the|der|die|das|den|dem|le|la|el|lo)"
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}  # fmt: skip
# A count of one or two digits, or a number word up to ten; one capturing group.
NUMBER = r"(\d{1,2}(?![\d\w])|(?:" + "|".join(_NUMBERS) + r")\b)"

ORDINAL = r"(" + "|".join(ORDINALS) + r")\b"
_ORDINAL_RE = re.compile(
    r"\b"
    + _ARTICLES
    + r"\s+"
    + ORDINAL
    + r"|\b"
    + ORDINAL
    + r"\s+(?:one|result|item|option|product)\b"
)
_SHORT_ORDINAL_RE = re.compile(r"^" + ORDINAL + r"(?:\s+\w+)?[.!?]?$")  # "second please"
_HASH_RE = re.compile(r"(?:#|\b(?:number|no\.?|nr\.?|option|result|item)\s*#?\s*)" + NUMBER)
_BARE_RE = re.compile(r"^\s*#?\s*(\d{1,2})\s*[.!?]?\s*$")
_ADD_RE = re.compile(r"\b(add|put|stick|throw|buy)\b|\b(cart|basket|trolley)\b|\bi'?ll take\b")
_REMOVE_RE = re.compile(r"\b(remove|delete|drop|take\s+\w+(?:\s+\w+)?\s+out|out of)\b")
# "It" is a reference only with a verb that adds: "is it waterproof?" points at nothing to do.
_PRONOUN_ADD_RE = re.compile(
    r"\b(?:add|put|stick|throw)\s+(?:it|this|that)\b(?!\s+(?:\w+\s+)?(?:is|was|has|are)\b)"
    r"|\bi(?:'ll| will) (?:take|have|get) (?:it|this|that)\b"
    r"|\b(?:add|put)\s+\w+\s+of\s+(?:it|this|that|them|these|those)\b"
)
# "the cheapest one", "add the most expensive to my cart"; not "the cheapest tent" (a search).
_BY_PRICE_RE = re.compile(
    r"\bthe\s+(?:(?P<low>cheapest|least\s+expensive|lowest[- ]priced|most\s+affordable)"
    r"|(?P<high>most\s+expensive|priciest|dearest|highest[- ]priced))"
    r"(?:\s+(?:one|of\s+(?:them|those|these)|option|item|result))?"
    r"(?=\s*(?:$|[.!?,]|to\b|in\b|into\b|please\b|for\s+me\b))"
)
# "which is cheaper?", "which one is the most expensive?": a question about the list shown.
_WHICH_BY_PRICE_RE = re.compile(
    r"^(?:so\s+|and\s+)?which(?:\s+one)?(?:\s+of\s+(?:them|these|those|the\s+two))?\s+"
    r"(?:is|'s|costs?)\s+(?:the\s+)?"
    r"(?:(?P<low>cheaper|cheapest|less(?:\s+expensive)?|least(?:\s+expensive)?|lower[- ]priced)"
    r"|(?P<high>more(?:\s+expensive)?|most(?:\s+expensive)?|pricier|priciest|dearer|dearest))"
    r"\s*\??$"
)
_QUANTITY_RE = re.compile(r"\b(?:add|put|buy|get|take)\s+" + NUMBER + r"\s+(?:of\b|x\b)")


@dataclass(frozen=True)
class Reference:
    """A pointer into the last result list: ``rank`` from 1, or :data:`LAST`."""

    rank: int
    action: Literal["show", "add"] = "show"
    quantity: int = 1


def number_value(word: str) -> int:
    """The count :data:`NUMBER` matched."""
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
        rank = number_value(found.group(1))
    elif (found := _ORDINAL_RE.search(lowered) or _SHORT_ORDINAL_RE.match(lowered)) is not None:
        rank = ORDINALS[next(g for g in found.groups() if g)]
    if rank is None and (
        found := _BY_PRICE_RE.search(lowered) or _WHICH_BY_PRICE_RE.match(lowered)
    ):
        rank = CHEAPEST if found["low"] else DEAREST
    if rank is None and (found := _PRONOUN_ADD_RE.search(lowered)) is not None:
        quantity = _QUANTITY_RE.search(lowered)
        return Reference(FOCUS, "add", number_value(quantity.group(1)) if quantity else 1)
    if rank is None or rank == 0:
        return None
    if _ADD_RE.search(lowered):
        quantity = _QUANTITY_RE.search(lowered)
        return Reference(rank, "add", number_value(quantity.group(1)) if quantity else 1)
    return Reference(rank)


def focus(conversation: Conversation) -> ProductCard | None:
    """The product the conversation is about: the one card of the latest reply that showed
    cards ("the second one" shows one; a search finding one product shows one). ``None`` when
    that reply showed several, or none has."""
    for message in reversed(conversation.messages):
        cards = message.payload.get("cards") if message.role == "assistant" else None
        if cards:
            return ProductCard.from_json(cards[0]) if len(cards) == 1 else None
    return None


def pointed_card(conversation: Conversation, reference: Reference) -> ProductCard | str:
    """The card ``reference`` points at, or what to ask the shopper when it points at none."""
    shown = conversation.results
    if reference.rank == FOCUS:
        card = focus(conversation)
        if card is not None:
            return card
        if not shown:
            return "There is nothing to add yet: search for a product first."
        return f"Which one? Say its number, from 1 to {len(shown)}."
    if not shown:
        return "There is no list to pick from yet. Tell me what you are looking for."
    if reference.rank == LAST:
        return shown[-1]
    if reference.rank in (CHEAPEST, DEAREST):
        priced = [c for c in shown if c.price is not None]
        if not priced:
            return "None of the results shown has a price."
        if len({c.currency for c in priced}) > 1:
            return "The results shown are in different currencies: pick one by its number."
        pick = min if reference.rank == CHEAPEST else max
        # One that can be bought, unless none of them can: "the cheapest one" is to buy.
        in_stock = [c for c in priced if c.available] or priced
        return pick(in_stock, key=lambda c: c.price or 0)
    if not 1 <= reference.rank <= len(shown):
        plural = "s" if len(shown) > 1 else ""
        return f"I showed {len(shown)} result{plural}: pick a number from 1 to {len(shown)}."
    return shown[reference.rank - 1]
