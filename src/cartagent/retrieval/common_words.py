"""The common words of the other languages cartagent reads (German, Spanish, French).

A word of a shopper's turn in one of them that nothing could check is most likely a
requirement the catalog's English has no word for ("kabellose", "argenté", "Laptopfach"), so
no result may be called an exact match; unless it is one of the language's common words
("dazu", "entonces", "possible"), which are the turn's chat. The lists are the words of
wordfreq 3.1.1 used at least about 32 times per million (Zipf 4.5; ``scripts/common-words.py``
writes them; CC-BY-SA 4.0, see ``data/common-words/NOTICE``).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

__all__ = ["LANGUAGES", "common_words", "is_common"]

LANGUAGES = ("de", "es", "fr")


@cache
def common_words(language: str) -> frozenset[str]:
    """The common words of ``language`` (casefolded); none for a language without a list."""
    if language not in LANGUAGES:
        return frozenset()
    folder = files(__package__).joinpath("data", "common-words")
    return frozenset(folder.joinpath(f"{language}.txt").read_text(encoding="utf-8").split())


def is_common(word: str, language: str) -> bool:
    """Whether ``word`` is one of ``language``'s common words."""
    return word.casefold() in common_words(language)
