"""Which shown results a sentence naming option values picks."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from cartagent.assistant.cards import ProductCard
from cartagent.assistant.conversation import Conversation
from cartagent.assistant.option_pick import find_option_pick


def _card(rank: int, **options: str) -> ProductCard:
    return ProductCard("tee", "T-Shirt", f"v{rank}", Decimal("10"), "USD", True, rank, options)


SHOWN = [
    _card(1, color="red", size="L"),
    _card(2, color="red", size="XXL"),
    _card(3, color="black", size="XXL"),
]


def _shown(cards: list[ProductCard]) -> Conversation:
    conversation = Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))
    conversation.results = cards
    return conversation


def _picked(text: str) -> list[int] | None:
    pick = find_option_pick(text, _shown(list(SHOWN)))
    return None if pick is None else [card.rank for card in pick.cards]


def test_cards_having_every_value_named_are_picked() -> None:
    assert _picked("add the red one") == [1, 2]
    assert _picked("I'll take the red XXL one") == [2]
    assert _picked("add the large one") == [1]  # a size word, whatever the option's name
    assert _picked("put the black one in my cart") == [3]
    assert _picked("add the purple one") == []


def test_no_pick_without_adding_a_value_or_a_list() -> None:
    assert _picked("the red one") is None  # shows, does not add: discovery's
    assert _picked("add it to my cart") is None
    assert _picked("add a red hoodie") is None  # another kind of product: a search
    assert find_option_pick("add the red one", _shown([])) is None
