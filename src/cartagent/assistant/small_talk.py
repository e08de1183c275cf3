"""Greetings, thanks and goodbyes: a message that is only one of them.

"Hi" was declined as out of scope and "thanks" showed the empty cart; they get the answer a
shop assistant gives. A message that also asks for something ("hey, do you have backpacks?")
is not small talk.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["SmallTalk", "small_talk"]

SmallTalk = Literal["greeting", "thanks", "goodbye"]

_POLITE = r"(?:\s*(?:there|again|everyone|all|so\s+much|a\s+lot|very\s+much|a\s+bunch|mate))?"
_OPENERS = r"(?:(?:ok(?:ay)?|great|perfect|awesome|cool|nice|lovely|brilliant|got\s+it)[\s,!.]*)?"
_KINDS: tuple[tuple[SmallTalk, re.Pattern[str]], ...] = (
    (
        "greeting",
        re.compile(
            r"(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening|day)"
            r"|hola|bonjour|hallo)" + _POLITE,
        ),
    ),
    (
        "thanks",
        re.compile(
            _OPENERS
            + r"(?:thanks?|thank\s+you|thx|ty|cheers|many\s+thanks|much\s+appreciated)"
            + _POLITE
            + r"(?:\s+for\s+(?:the|your|all\s+(?:the|your))\s+help)?"
            r"(?:[\s,!.]+(?:that'?s\s+(?:all|it|great|helpful)))?",
        ),
    ),
    (
        "goodbye",
        re.compile(
            _OPENERS + r"(?:(?:good)?\s*bye(?:\s*bye)?|see\s+(?:you|ya)(?:\s+later)?|later"
            r"|that'?s\s+(?:all|it)(?:\s+for\s+(?:now|today))?|nothing\s+else|have\s+a\s+good\s+"
            r"(?:one|day|evening))" + _POLITE + r"(?:[\s,!.]+(?:thanks?|thank\s+you))?",
        ),
    ),
)
_EDGES = re.compile(r"^[\s,.!?:;)(-]+|[\s,.!?:;)(-]+$")


def small_talk(text: str) -> SmallTalk | None:
    """What ``text`` says when it is only a greeting, thanks or a goodbye, else ``None``."""
    said = _EDGES.sub("", text.casefold().replace("\u2019", "'"))
    if not said or len(said) > 60:
        return None
    return next((kind for kind, pattern in _KINDS if pattern.fullmatch(said)), None)
