"""Asking for more of the list shown: "show me more", "any others?", "what else do you have?".

:func:`wants_more` reads it; the discovery specialist answers with the next matches of the same
search, or says that those shown were all of them.
"""

from __future__ import annotations

import re

__all__ = ["wants_more"]

_MORE = re.compile(
    r"^(?:(?:ok|okay|hmm|and|so|well),?\s+)?"
    r"(?:(?:can|could)\s+(?:you|i)\s+(?:see\s+|show\s+(?:me\s+)?)?)?(?:please\s+)?"
    r"(?:show\s+(?:me\s+)?(?:some\s+)?more(?:\s+(?:options|results|of\s+them|like\s+(?:these|this)))?"
    r"|(?:some\s+)?more(?:\s+(?:options|results|of\s+them|like\s+(?:these|this)))?"
    r"|(?:are\s+there\s+|do\s+you\s+have\s+)?(?:any|some)\s+(?:others|more|other\s+ones)"
    r"|anything\s+else|what\s+else(?:\s+(?:do\s+you\s+have|is\s+there|have\s+you\s+got))?"
    r"|(?:show\s+(?:me\s+)?)?(?:the\s+)?(?:other|next)\s+(?:ones|options|results|page)"
    r"|see\s+more|next(?:\s+page)?)"
    r"(?:,?\s+please)?\s*[?.!]*\s*$"
)


def wants_more(text: str) -> bool:
    """Whether ``text`` asks for more results of the same search, and nothing else."""
    return _MORE.match(" ".join(text.casefold().split())) is not None
