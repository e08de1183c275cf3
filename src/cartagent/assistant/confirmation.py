"""Reading a shopper's answer to a question the assistant asked ("Pay 58.87 USD now?").

Only a short, unambiguous answer counts: "yes", "yes please", "ok, go ahead", "no thanks".
"yes, but in red" is not an answer (it goes through routing like any other request), and
neither is anything long: consent to move money must be explicit.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Answer", "answers_confirmation", "read_answer"]

Answer = Literal["yes", "no", "done"]

_YES = {
    "yes", "y", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed",
    "go ahead", "do it", "please do", "pay", "pay now", "proceed", "correct", "absolutely",
}  # fmt: skip
_NO = {
    "no", "n", "nope", "nah", "cancel", "stop", "don't", "do not", "not now", "never mind",
    "nevermind", "abort",
}  # fmt: skip
_DONE = {
    "done", "i'm done", "im done", "approved", "i approved", "i approved it", "i've approved",
    "i've approved it", "i have approved it", "i paid", "i've paid", "paid", "finished",
    "approved it", "it's approved",
}  # fmt: skip
_FILLER = {"please", "thanks", "thank you", "go ahead", "do it", "now", "it", "pay", "that"}
_PARTS = re.compile(r"[,.!;]+|\s+-\s+")
_SPACE = re.compile(r"\s+")
MAX_WORDS = 8


def read_answer(text: str) -> Answer | None:
    """``"yes"``, ``"no"``, ``"done"`` (the shopper finished approving elsewhere), or
    ``None`` when ``text`` is not a plain answer."""
    words = _SPACE.sub(" ", text.casefold().replace("\u2019", "'")).strip()
    if not words or len(words.split()) > MAX_WORDS:
        return None
    parts = [p.strip() for p in _PARTS.split(words) if p.strip()]
    if not parts:
        return None
    head, rest = parts[0], parts[1:]
    found: Answer | None = None
    for answer, phrases in (("yes", _YES), ("no", _NO), ("done", _DONE)):
        if head in phrases or any(head == f"{p} {f}" for p in phrases for f in _FILLER):
            found = answer  # type: ignore[assignment]
            break
    if found is None:
        return None
    for part in rest:
        if part in _FILLER or (found == "yes" and part in _YES) or (found == "no" and part in _NO):
            continue
        return None
    return found


def answers_confirmation(text: str) -> bool:
    return read_answer(text) is not None
