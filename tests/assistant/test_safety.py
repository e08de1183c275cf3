"""Input screening: empty, overlong and unreadable input is answered, anything else routed."""

from __future__ import annotations

import pytest

from cartagent.assistant.safety import MAX_INPUT_CHARS, screen


@pytest.mark.parametrize(
    "text",
    [
        "a blue t-shirt under 60",
        "cheaper",
        "2",
        "10",
        "249.99",
        "XXL",
        "1TB ssd laptop",
        "quiero zapatillas rojas",
        "ich suche Kopfhörer",
        "青いTシャツ",
        "\U0001f44b",  # a wave says hello
        "just show me a damn laptop",  # rude, and a request all the same
        "WATER BOTTLE!!!!!!!!!!!! GLASS!!!!!! NOW!!!!!",
        ("red shoes " * MAX_INPUT_CHARS)[:MAX_INPUT_CHARS],
    ],
)
def test_readable_input_is_routed(text: str) -> None:
    assert screen(text) is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "What are you looking for?"),
        (" \n\t", "What are you looking for?"),
        ("x" * (MAX_INPUT_CHARS + 1), "characters long"),
        ("asdfghjkl qwrtzpxcv", "could not make sense"),
        ("zzzzzzzz", "could not make sense"),
        ("?!?! ... ***", "could not read"),
        ("\U0001f44d\U0001f44d", "could not read"),
        ("null", "could not read"),
        ("undefined", "could not read"),
        ("[object Object]", "could not read"),
        ("1234567890", "A number alone, 1234567890, does not tell me"),
        ("#4760268021", "which order do you mean?"),
    ],
)
def test_unusable_input_gets_a_clear_answer(text: str, says: str) -> None:
    answer = screen(text)
    assert answer is not None and says in answer


def test_unusable_input_is_answered_with_a_question_in_the_shoppers_language() -> None:
    from cartagent.assistant.language import messages

    for text in ("", "   ", "asdfghjkl qwrtzpxcv", "?!?! ... ***", "1234567890", "null"):
        english = screen(text)
        assert english is not None and "?" in english
        german = screen(text, messages("de"))
        assert german is not None and german != english and "?" in german
