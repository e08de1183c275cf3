"""Input screening before a turn is routed: empty, overlong and unreadable input.

Rudeness is not screened: "just show me a damn laptop" asks for a laptop and gets one.

A refused input gets a clear answer and touches nothing: no routing, no search, no stored
message.
"""

from __future__ import annotations

import re
from gettext import NullTranslations

from .small_talk import small_talk

__all__ = ["MAX_INPUT_CHARS", "screen"]

_ENGLISH = NullTranslations()

MAX_INPUT_CHARS = 2000
"""Longer messages are refused (cutting them could change what they ask)."""

_LETTERS = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[a-z]+")
_VOWELS = re.compile(r"[aeiouyäöüéèêáàíóúñ]")
_CONSONANT_RUN = re.compile(r"[b-df-hj-np-tv-xz]{5,}")
_REPEATS = re.compile(r"(.)\1{3,}")
_PLACEHOLDER = re.compile(r"null|undefined|nan|nil|\[object object\]|\{\s*\}|\[\s*\]", re.I)
_LONG_NUMBER = re.compile(r"#?\s*(\d{6,})\s*[.?!]*")


def _wordlike(token: str) -> bool:
    token = token.casefold()
    if not _LATIN.fullmatch(token):
        return True  # other scripts: no cheap test, give them the benefit of the doubt
    if len(token) > 24 or _REPEATS.search(token):
        return False
    return len(token) <= 3 or (  # sizes and abbreviations: xxl, ssd, usb
        _VOWELS.search(token) is not None and _CONSONANT_RUN.search(token) is None
    )


def screen(text: str, tr: NullTranslations = _ENGLISH) -> str | None:
    """The answer for input that cannot be served (in ``tr``'s language), or ``None`` when it
    can be routed."""
    stripped = text.strip()
    if not stripped:
        return tr.gettext("What are you looking for? Type it in your own words.")
    if len(text) > MAX_INPUT_CHARS:
        return tr.gettext(
            "That message is %(length)s characters long; I read at most %(limit)s. Could you "
            "send a shorter one, for example what you are looking for and your budget?"
        ) % {"length": f"{len(text):,}", "limit": f"{MAX_INPUT_CHARS:,}"}
    tokens = _LETTERS.findall(stripped)
    if _PLACEHOLDER.fullmatch(stripped):  # what a broken client sends: "null", "undefined"
        return tr.gettext("I could not read that. What are you looking for, in words?")
    if not tokens:
        number = _LONG_NUMBER.fullmatch(stripped)
        if number is not None:  # no pick ("2"), no size: an id, or a key pressed too long
            return tr.gettext(
                "A number alone, %(number)s, does not tell me what to do. What are you looking "
                "for, or which order do you mean?"
            ) % {"number": number.group(1)}
        if any(c.isdigit() for c in stripped) or small_talk(stripped) is not None:
            return None  # "2" may pick the second result; a lone wave says hello
        return tr.gettext("I could not read that. What are you looking for, in words?")
    readable = sum(1 for t in tokens if _wordlike(t))
    if readable * 2 < len(tokens):
        return tr.gettext("I could not make sense of that. What are you looking for, in words?")
    return None
