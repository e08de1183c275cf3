"""Asking for products like one shown: "something similar to the first one", "more like this".

The product meant is the one the words point at ("the first one", "#2"), else the one in
focus. Its title and kind are searched for, and other products answer: a shopper asking for
something similar wants alternatives, not the same product again.
"""

from __future__ import annotations

import re

__all__ = ["SIMILAR", "wants_similar"]

SIMILAR = re.compile(
    r"\b(?:something|anything|products?|items?|ones?|more|others?|stuff)\s+"
    r"(?:(?:that\s+(?:is|are|looks?|looks?)\s+)?similar(?:\s+to)?|like)\b"
    r"|\bsimilar\s+(?:ones|products|items|to)\b|\balternatives?\s+(?:to|for)\b",
    re.IGNORECASE,
)


_PUNCTUATION = re.compile(r"[^\w\s#'-]")


def wants_similar(text: str) -> str | None:
    """The words left once the ask for similar products is taken out of ``text`` (they may
    point at a result: "the first one"), or ``None`` when ``text`` does not ask for it."""
    if SIMILAR.search(text) is None:
        return None
    return " ".join(_PUNCTUATION.sub(" ", SIMILAR.sub(" ", text)).split())
