"""Asking for more of the list shown."""

from __future__ import annotations

import pytest

from cartagent.assistant.more_results import wants_more


@pytest.mark.parametrize(
    "text",
    [
        "show me more",
        "Any others?",
        "more please",
        "what else do you have?",
        "anything else?",
        "ok, show me the next ones",
        "are there any other ones",
        "can I see more options?",
        "next page",
    ],
)
def test_asking_for_more_is_read(text: str) -> None:
    assert wants_more(text)


@pytest.mark.parametrize(
    "text",
    ["more expensive", "show me more like the red one in size L", "any other colours?",
     "more red ones", "what else should I buy for camping", "the other one"],
)  # fmt: skip
def test_other_requests_are_not(text: str) -> None:
    assert not wants_more(text)
