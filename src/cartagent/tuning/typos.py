"""Character-level typing noise: the request gets it, the gold query never does."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Final

__all__ = ["NOISES", "misspell"]

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS: Final[dict[str, str]] = {}
for _r, _row in enumerate(_ROWS):
    for _i, _ch in enumerate(_row):
        near = _row[max(0, _i - 1) : _i] + _row[_i + 1 : _i + 2]
        for _other in (_r - 1, _r + 1):
            if 0 <= _other < len(_ROWS):
                near += _ROWS[_other][max(0, _i - 1) : _i + 1]
        _NEIGHBOURS[_ch] = near

# Only words of letters, four or more: numbers, units and short words keep their meaning exact.
_WORD = re.compile(r"(?<![\w$])[a-z]{4,}(?![\w])", re.IGNORECASE)


def _swap(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _drop(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))
    return word[:i] + word[i + 1 :]


def _double(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))
    return word[:i] + word[i] + word[i:]


def _neighbour(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))
    near = _NEIGHBOURS.get(word[i].lower(), "")
    if not near:
        return word
    return word[:i] + rng.choice(near) + word[i + 1 :]


NOISES: Final[dict[str, Callable[[str, random.Random], str]]] = {
    "swap": _swap,
    "drop": _drop,
    "double": _double,
    "neighbour": _neighbour,
}
"""Ways to misspell one word (never its first letter), by name."""


def misspell(text: str, noise: str, rng: random.Random, *, words: int = 1) -> str | None:
    """``text`` with ``words`` of its longer words misspelt by ``noise``, or ``None``."""
    spans = [m.span() for m in _WORD.finditer(text)]
    if not spans:
        return None
    chosen = sorted(rng.sample(spans, min(words, len(spans))), reverse=True)
    out = text
    for start, end in chosen:
        word = out[start:end]
        changed = NOISES[noise](word, rng)
        out = out[:start] + changed + out[end:]
    return out if out != text else None
