"""The common-word lists of the other languages cartagent reads."""

from __future__ import annotations

import pytest

from cartagent.retrieval.common_words import LANGUAGES, is_common, is_english_word, language_words


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_a_list_of_thousands_of_casefolded_words(language: str) -> None:
    words = language_words(language)
    assert 2000 < len(words) < 4000
    assert all(word == word.casefold() for word in words)


@pytest.mark.parametrize(
    ("word", "language", "common"),
    [("dazu", "de", True), ("Entonces", "es", True), ("possible", "fr", True),
     ("kabellose", "de", False), ("argenté", "fr", False), ("termo", "es", False),
     ("dazu", "fr", False), ("the", "en", False)],
)  # fmt: skip
def test_chat_words_are_common_and_requirements_are_not(
    word: str, language: str, common: bool
) -> None:
    assert is_common(word, language) is common


def test_an_english_word_is_one_used_often_enough_that_typing_it_is_no_typo() -> None:
    assert is_english_word("blown") and is_english_word("Brain") and is_english_word("lighting")
    # Rare words and misspellings are not: they may be a value typed wrong.
    assert not is_english_word("sliver") and not is_english_word("waterprof")
    assert not is_english_word("the")  # four letters or more only


def test_a_french_word_with_an_elided_article_is_as_common_as_the_word() -> None:
    assert is_common("c'est", "fr") and is_common("qu'elle", "fr") and is_common("l\u2019est", "fr")
    assert not is_common("l'appart", "fr") and not is_common("c'est", "de")
