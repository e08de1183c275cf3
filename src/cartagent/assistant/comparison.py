"""Comparing shown products: "compare the first two", "what's the difference between #2 and
#3?", "compare them".

:func:`find_comparison` reads which ranks a message compares; :func:`compare_cards` sets those
cards side by side: prices, the options where they differ, stock, what they share.
"""

from __future__ import annotations

import re

from .cards import ProductCard
from .references import MAX_WORDS, NUMBER, ORDINAL, ORDINALS, number_value

__all__ = ["compare_cards", "find_comparison"]


_COMPARE_RE = re.compile(r"\b(?:compare|comparison|differences?|differ|vs\.?|versus)\b")
_FIRST_N_RE = re.compile(r"\b(?:the\s+)?(?:first|top)\s+" + NUMBER)
# "Compare them", "how do they differ": a comparison of everything shown says nothing else.
_ALL_WORDS = frozenset(
    {"compare", "comparison", "difference", "differences", "differ", "vs", "versus", "them",
     "these", "those", "all", "both", "they", "the", "of", "please", "can", "you", "could",
     "what", "are", "is", "how", "do", "does", "between", "and"}
)  # fmt: skip
_PICK_RE = re.compile(r"#\s?" + NUMBER + r"|\b" + ORDINAL + r"|(?<![\w.$€£])(\d{1,2})(?![\w.])")


def find_comparison(text: str) -> tuple[int, ...] | None:
    """The ranks ``text`` asks to compare ("compare the first two", "difference between #1 and
    #3", "compare them": ``()`` for every result shown), or ``None`` when it asks no comparison."""
    lowered = " ".join(text.casefold().split())
    if len(lowered.split()) > MAX_WORDS + 3 or not _COMPARE_RE.search(lowered):
        return None
    if (first := _FIRST_N_RE.search(lowered)) is not None:
        count = number_value(first.group(1))
        return tuple(range(1, count + 1)) if count >= 2 else None
    ranks: list[int] = []
    for found in _PICK_RE.finditer(lowered):
        hashed, ordinal, bare = found.groups()
        rank = number_value(hashed) if hashed else ORDINALS[ordinal] if ordinal else int(bare)
        if rank != 0 and rank not in ranks:
            ranks.append(rank)
    if len(ranks) >= 2:
        return tuple(ranks)
    everything = not set(re.findall(r"[a-z]+", lowered)) - _ALL_WORDS
    return () if not ranks and everything else None


def compare_cards(cards: list[ProductCard]) -> str:
    """The compared cards side by side: price, then every option where they differ."""
    names = " and ".join(f"#{c.rank}" for c in cards)
    rows = [f"Comparing {names}:"]
    if len({c.title for c in cards}) > 1:
        rows.append("- product: " + " vs ".join(c.title for c in cards))
    if all(c.price is not None for c in cards) and len({c.currency for c in cards}) == 1:
        rows.append("- price: " + " vs ".join(f"{c.price} {c.currency}" for c in cards))
        ordered = sorted(cards, key=lambda c: c.price or 0)
        low, high = ordered[0], ordered[-1]
        if len(cards) == 2 and low.price != high.price:
            saved = (high.price or 0) - (low.price or 0)
            rows[-1] += f" (#{low.rank} is {saved} {low.currency} cheaper)"
    keys = list(dict.fromkeys(k for c in cards for k in c.options))
    same: list[str] = []
    for key in keys:
        values = [c.options.get(key, "-") for c in cards]
        if len(set(values)) == 1:
            same.append(f"{key} {values[0]}")
        else:
            rows.append(f"- {key}: " + " vs ".join(values))
    stock = ["in stock" if c.available else "out of stock" for c in cards]
    if len(set(stock)) > 1:
        rows.append("- stock: " + " vs ".join(stock))
    elif not cards[0].available:
        same.append("all out of stock")
    if same:
        rows.append("Same: " + ", ".join(same) + ".")
    return "\n".join(rows)
