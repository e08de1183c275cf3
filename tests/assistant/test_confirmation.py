"""Reading yes, no and done: only short, unambiguous answers count."""

from __future__ import annotations

import pytest

from cartagent.assistant.confirmation import read_answer


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("yes", "yes"),
        ("Yes please", "yes"),
        ("ok, go ahead!", "yes"),
        ("yep, pay now", "yes"),
        ("confirm", "yes"),
        ("no", "no"),
        ("No thanks.", "no"),
        ("cancel", "no"),
        ("not now", "no"),
        ("done", "done"),
        ("I've approved it", "done"),
        ("I\u2019ve approved it", "done"),
        ("approved", "done"),
    ],
)
def test_plain_answers_are_read(text: str, answer: str) -> None:
    assert read_answer(text) == answer


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yes, but in red",
        "no, show me hoodies",
        "what is my order status",
        "yes " * 9,
        "yesterday",
        "nobody",
        "okay so what about the blue one",
    ],
)
def test_anything_else_is_not_an_answer(text: str) -> None:
    assert read_answer(text) is None
