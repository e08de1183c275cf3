"""The common words of the other languages cartagent reads (German, Spanish, French).

A word of a shopper's turn in one of them that nothing could check is most likely a
requirement the catalog's English has no word for ("kabellose", "argenté", "Laptopfach"), so
no result may be called an exact match; unless it is one of the language's common words
("dazu", "entonces", "possible"), which are the turn's chat. The lists are the words of
wordfreq 3.1.1 used at least about 32 times per million (Zipf 4.5; ``scripts/common-words.py``
writes them; CC-BY-SA 4.0, see ``data/common-words/NOTICE``).

English has a longer list for another purpose: a word of it is never read as a typo.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

__all__ = ["LANGUAGES", "is_common", "is_english_word", "language_words"]

LANGUAGES = ("de", "es", "fr")


@cache
def language_words(language: str) -> frozenset[str]:
    """The common words of ``language`` (casefolded); none for a language without a list."""
    if language not in LANGUAGES:
        return frozenset()
    folder = files(__package__).joinpath("data", "common-words")
    return frozenset(folder.joinpath(f"{language}.txt").read_text(encoding="utf-8").split())


_ELIDED = ("c'", "d'", "j'", "l'", "m'", "n'", "qu'", "s'", "t'")


def is_common(word: str, language: str) -> bool:
    """Whether ``word`` is one of ``language``'s common words; in French, also with an
    elided article or pronoun before it ("c'est", "qu'elle", "l'idéal" of "idéal")."""
    folded = word.casefold().replace("\u2019", "'")
    words = language_words(language)
    if folded in words:
        return True
    if language == "fr":
        for prefix in _ELIDED:
            if folded.startswith(prefix) and folded[len(prefix) :] in words:
                return True
    return False


@cache
def _english_words() -> frozenset[str]:
    text = files(__package__).joinpath("data", "common-words", "en-words.txt").read_text("utf-8")
    return frozenset(text.split())


def is_english_word(word: str) -> bool:
    """Whether ``word`` is an English word of four letters or more used at least about 3 times
    per million words: "blown", "brain" (a shopper who types one means it, not "brown");
    "sliver" and "waterprof" are not."""
    return word.casefold() in _english_words()
