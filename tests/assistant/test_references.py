"""References to the shown results: which rank, show or add, how many."""

from __future__ import annotations

import pytest

from cartagent.assistant.references import (
    CHEAPEST,
    DEAREST,
    FOCUS,
    LAST,
    Reference,
    find_reference,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the second one", Reference(2)),
        ("show me #2", Reference(2)),
        ("number two please", Reference(2)),
        ("option 3", Reference(3)),
        ("3", Reference(3)),
        ("second please", Reference(2)),
        ("tell me more about the first one", Reference(1)),
        ("the last one", Reference(LAST)),
        ("add the first to my cart", Reference(1, "add")),
        ("I'll take the second one", Reference(2, "add")),
        ("stick the second one in my basket", Reference(2, "add")),
        ("add 2 of the third one", Reference(3, "add", 2)),
        ("add two of the first to my basket", Reference(1, "add", 2)),
        ("add it to my cart", Reference(FOCUS, "add")),
        ("ok put that in my basket please", Reference(FOCUS, "add")),
        ("I'll take it", Reference(FOCUS, "add")),
        ("add 2 of them", Reference(FOCUS, "add", 2)),
        ("add it, the second one", Reference(2, "add")),
        ("the cheapest one", Reference(CHEAPEST)),
        ("which is the least expensive?", Reference(CHEAPEST)),
        ("add the cheapest to my cart", Reference(CHEAPEST, "add")),
        ("show me the most expensive of them", Reference(DEAREST)),
        ("which is cheaper?", Reference(CHEAPEST)),
        ("which of the two costs less", Reference(CHEAPEST)),
        ("so which one is more expensive?", Reference(DEAREST)),
    ],
)
def test_a_reference_is_read(text: str, expected: Reference) -> None:
    assert find_reference(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "take the second one out of the cart",
        "remove the first one",
        "order #2378156",
        "size 10",
        "first time here",
        "blue t-shirt under 60",
        "the first thing I need for the trip is a tent for four people",
        "is it waterproof?",
        "when will I get it",
        "does that come in red",
        "add that it is a gift",
        "the cheapest tent you have",
        "which is more comfortable?",
        "which is cheaper, the red or the blue one?",
    ],
)
def test_other_messages_are_not_references(text: str) -> None:
    assert find_reference(text) is None
