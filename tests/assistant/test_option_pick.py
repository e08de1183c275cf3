"""Which shown results a sentence naming option values picks."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

from cartagent.assistant.cards import ProductCard
from cartagent.assistant.conversation import Conversation
from cartagent.assistant.option_pick import Unshown, find_option_pick, unshown
from cartagent.catalog import Product, Variant


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


TEE = Product(
    id="tee",
    title="T-Shirt",
    variants=(
        Variant(id="v1", options={"color": "red", "size": "L"}, price=Decimal("10")),
        Variant(id="v2", options={"color": "red", "size": "XXL"}, price=Decimal("10")),
        Variant(id="v3", options={"color": "black", "size": "XXL"}, price=Decimal("10")),
        Variant(id="p-s", options={"color": "purple", "size": "S"}, price=Decimal("12")),
        Variant(id="p-xl", options={"color": "purple", "size": "XL"}, price=Decimal("13")),
        Variant(
            id="g-m", options={"color": "green", "size": "M"}, price=Decimal("9"), available=False
        ),
    ),
)


def _unshown(text: str) -> Unshown:
    conversation = _shown(list(SHOWN))
    pick = find_option_pick(text, conversation)
    assert pick is not None and not pick.cards
    return unshown(pick, conversation, {"tee": TEE}.get)


def test_a_version_not_shown_of_the_only_product_shown_is_offered_or_added() -> None:
    several = _unshown("add the purple one")
    assert several.text == "The T-Shirt comes in purple in these versions:"
    assert [(c.variant_id, c.rank) for c in several.cards] == [("p-s", 1), ("p-xl", 2)]
    assert several.add is None
    one = _unshown("add the purple XL one")
    assert one.add is not None and one.add.variant_id == "p-xl" and one.text == ""
    assert _unshown("add the green one").text == "The T-Shirt in green is sold out."
    never = _unshown("add the orange one")
    assert never.text.startswith("None of those shown is orange. T-Shirt: color ")
    assert never.add is None and never.cards == ()


def test_without_a_product_meant_nothing_is_looked_up() -> None:
    conversation = _shown([*SHOWN, replace(SHOWN[0], id="hoodie", title="Hoodie", rank=4)])
    pick = find_option_pick("add the purple one", conversation)
    assert pick is not None
    assert unshown(pick, conversation, {"tee": TEE}.get) == Unshown(
        "None of those shown is purple."
    )
