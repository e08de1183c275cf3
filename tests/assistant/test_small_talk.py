"""Greetings, thanks and goodbyes told apart from messages that ask for something."""

from __future__ import annotations

import pytest

from cartagent.assistant.small_talk import small_talk


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("hi", "greeting"),
        ("Hello there!", "greeting"),
        ("good morning :)", "greeting"),
        ("Thanks!", "thanks"),
        ("ok, thank you so much", "thanks"),
        ("great, thanks, that's all", "thanks"),
        ("thanks for your help", "thanks"),
        ("cheers mate", "thanks"),
        ("bye", "goodbye"),
        ("That\u2019s all for now", "goodbye"),
        ("nothing else, thanks", "goodbye"),
        ("see you later!", "goodbye"),
    ],
)
def test_small_talk_alone_is_told_by_kind(text: str, kind: str) -> None:
    assert small_talk(text) == kind


@pytest.mark.parametrize(
    "text",
    [
        "hey, can you help me find a backpack?",
        "hi, I need running shoes",
        "thanks for the help finding boots",
        "no thanks",  # answers a question: not small talk
        "thank you, now show me hoodies",
        "hello kitty backpack",
        "",
        "hi " * 40,
    ],
)
def test_a_message_that_asks_for_something_is_not_small_talk(text: str) -> None:
    assert small_talk(text) is None
