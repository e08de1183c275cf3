"""Questions about the results on screen, in the shopper's words, answered from the catalog."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from cartagent.assistant.cards import ProductCard, card_from_variant
from cartagent.assistant.language import messages
from cartagent.assistant.shown_questions import (
    ShownQuestion,
    answer_shown_question,
    answer_value_question,
    read_shown_question,
)
from cartagent.catalog import Product, Variant

FLASK = Product(
    id="flask",
    title="Flask",
    variants=(
        Variant(id="f1", price=Decimal("30"), options={"capacity": "1000ml", "material": "steel"}),
        Variant(
            id="f2", price=Decimal("25"), options={"capacity": "1.5 liters", "material": "glass"}
        ),
        Variant(id="f3", price=Decimal("20"), options={"capacity": "500ml", "material": "glass"}),
    ),
)
SHOWN = [card_from_variant(FLASK, variant, rank) for rank, variant in enumerate(FLASK.variants, 1)]
BOOTS = Product(
    id="boots",
    title="Sneakers",
    variants=(
        Variant(id="s6", price=Decimal("90"), options={"size": "6", "color": "black"}),
        Variant(id="s10", price=Decimal("95"), options={"size": "10", "color": "white"}),
    ),
)
BOOT_CARDS = [card_from_variant(BOOTS, BOOTS.variants[0], 1)]


def _read(text: str, shown: list[ProductCard] = SHOWN) -> ShownQuestion | None:
    return read_shown_question(text, shown, [FLASK])


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("which one holds more water?", ShownQuestion("capacity", "max", None)),
        ("which is the smallest capacity?", ShownQuestion("capacity", "min", None)),
        ("lowest price out of those?", ShownQuestion("price", "min", None)),
        ("¿cuál sale más barato?", ShownQuestion("price", "min", None)),
        ("welche ist am teuersten?", ShownQuestion("price", "max", None)),
        ("lequel est le plus cher ?", ShownQuestion("price", "max", None)),
        ("lequel est le moins cher ?", ShownQuestion("price", "min", None)),
        ("whats the price of the second one", ShownQuestion("price", None, 2)),
        ("what would the first one set me back?", ShownQuestion("price", None, 1)),
        ("i'll take whichever is less money", ShownQuestion("price", "min", None)),
        ("which one's gonna hurt my wallet less", ShownQuestion("price", "min", None)),
        ("which is easier on the wallet?", ShownQuestion("price", "min", None)),
        ("wie heißt der hersteller?", None),  # no word the reader knows: not guessed
        ("what's the second one made of?", ShownQuestion("material", None, 2)),
        ("how many ml is the first one?", ShownQuestion("capacity", None, 1)),
    ],
)
def test_the_question_is_read_against_the_shown_products_options(
    text: str, question: ShownQuestion | None
) -> None:
    assert _read(text) == question


@pytest.mark.parametrize(
    "text",
    ["what about a sleeping bag?", "show me kettles", "red ones", "do you carry dog food too?",
     "cheaper than 210?", "anything more expensive than $50?",
     "got anything cheaper than that?", "something bigger?"],
)  # fmt: skip
def test_a_new_search_is_not_a_question_about_the_shown_cards(text: str) -> None:
    assert _read(text) is None


def test_the_most_is_found_across_units_and_the_winner_shown_first() -> None:
    question = ShownQuestion("capacity", "max", None)
    text, cards = answer_shown_question(question, SHOWN, messages("en"))
    assert text == "#2, Flask, has the most capacity: 1.5 liters."
    assert cards[0].variant_id == "f2" and len(cards) == 3
    cheapest, cards = answer_shown_question(
        ShownQuestion("price", "min", None), SHOWN, messages("es")
    )
    assert cheapest == "El n.º 3, Flask, es el más barato: 20 USD."
    assert cards[0].variant_id == "f3"


def test_what_a_card_is_is_its_own_value_or_each_cards() -> None:
    one, cards = answer_shown_question(ShownQuestion("material", None, 1), SHOWN, messages("en"))
    assert one == "#1, Flask, has material steel." and [c.rank for c in cards] == [1]
    every, _ = answer_shown_question(ShownQuestion("material", None, None), SHOWN, messages("en"))
    assert every == "material of each one shown: #1 steel; #2 glass; #3 glass."
    german, _ = answer_shown_question(ShownQuestion("material", None, 2), SHOWN, messages("de"))
    assert german == "Nr. 2, Flask, hat material glass."
    missing, _ = answer_shown_question(ShownQuestion("material", None, 9), SHOWN, messages("en"))
    assert missing.startswith("I showed 3 results")


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("Was kostet der zweite?", ShownQuestion("price", None, 2)),
        ("le deuxième est en quelle matière ?", ShownQuestion("material", None, 2)),
        ("Welche Farbe hat die erste?", None),  # the flasks have no colour
        ("¿de qué material es la primera?", ShownQuestion("material", None, 1)),
        ("¿la primera está disponible?", ShownQuestion("available", None, 1)),
        ("la dernière est en stock ?", ShownQuestion("available", None, 3)),
        ("which of those are in stock?", None),  # of them all: the search's filter
        # A pick at one end, said as a request: the size held, as "big" or "small" asks.
        ("le plus grand flacon possible", ShownQuestion("capacity", "max", None)),
        ("la plus petite, s'il vous plaît", ShownQuestion("capacity", "min", None)),
        ("el más barato", ShownQuestion("price", "min", None)),
        ("le plus grand", ShownQuestion("capacity", "max", None)),
    ],
)
def test_questions_in_german_french_and_spanish_are_read_too(
    text: str, question: ShownQuestion | None
) -> None:
    assert _read(text) == question


def test_an_option_named_whole_wins_over_one_it_is_part_of() -> None:
    board = Product(
        id="board",
        title="Skateboard",
        category=("Sports", "Skateboards"),
        description="A board.",
        variants=(Variant(id="b1", price=Decimal(50), options={"deck material": "maple"}),),
    )
    shown = [*SHOWN, card_from_variant(board, board.variants[0], 4)]
    question = read_shown_question("¿de qué material es?", shown, [FLASK, board])
    assert question == ShownQuestion("material", None, None)


def test_whether_one_card_is_in_stock_is_answered_in_the_shoppers_language() -> None:
    sold_out = [replace(SHOWN[0], available=False), *SHOWN[1:]]
    question = ShownQuestion("available", None, 1)
    text, cards = answer_shown_question(question, sold_out, messages("es"))
    assert text == "El n.º 1, Flask, está agotado." and len(cards) == 1
    text, _ = answer_shown_question(ShownQuestion("available", None, 2), SHOWN, messages("fr"))
    assert text == "Le n° 2, Flask, est en stock."


def test_values_that_are_a_name_and_a_rank_are_ranked_by_it() -> None:
    laptops = [
        ProductCard("l", "Laptop", f"l{n}", Decimal(900), "USD", True, rank, {"processor": cpu})
        for rank, (n, cpu) in enumerate([(1, "i7"), (2, "i5"), (3, "i9")], 1)
    ]
    text, cards = answer_shown_question(
        ShownQuestion("processor", "max", None), laptops, messages("en")
    )
    assert text == "#3, Laptop, has the most processor: i9." and cards[0].rank == 3


def test_values_that_are_no_amounts_of_one_kind_are_not_ranked() -> None:
    mixed = [
        *SHOWN[:1],
        ProductCard("cup", "Cup", "c1", Decimal("5"), "USD", True, 4, {"capacity": "2 cups"}),
    ]
    text, _ = answer_shown_question(ShownQuestion("capacity", "max", None), mixed, messages("en"))
    assert text == "I cannot rank them by capacity: #1 1000ml; #4 2 cups."


def test_a_number_beside_its_options_name_is_a_value_said() -> None:
    # "size 10?" asks for size 10 (a refinement); "what size is it?" asks about the card.
    assert read_shown_question("size 10?", BOOT_CARDS, [BOOTS]) is None
    assert read_shown_question("what size is it?", BOOT_CARDS, [BOOTS]) == ShownQuestion(
        "size", None, 1
    )


def test_a_value_said_makes_it_a_refinement_not_a_question() -> None:
    assert _read("what about glass ones then?") is None
    assert _read("and in steel?") is None
    assert _read("how many ml is the first one?") is not None  # "ml" is a unit, no value


def test_which_of_those_have_a_yes_or_no_option_is_a_filter_not_a_question() -> None:
    boots = Product(
        id="boots",
        title="Hiking Boots",
        variants=(
            Variant(id="b1", price=Decimal("90"), options={"waterproof": "yes"}),
            Variant(id="b2", price=Decimal("80"), options={"waterproof": "no"}),
        ),
    )
    shown = [card_from_variant(boots, v, rank) for rank, v in enumerate(boots.variants, 1)]
    assert read_shown_question("which of those are waterproof?", shown, [boots]) is None


@pytest.mark.parametrize(
    ("text", "language", "answer"),
    [
        ("is the first one glass?", "en", "No: #1, Flask, has material steel, not glass."),
        ("is the first one 1000 ml?", "en", "Yes: #1, Flask, has capacity 1000ml."),
        ("steel or glass on the first one?", "en", "#1, Flask, has material steel."),
        ("¿la primera es de vidrio?", "es", "No: el n.º 1, Flask, tiene material steel, no glass."),
        ("Ist die erste aus Glas?", "de", "Nein: Nr. 1, Flask, hat material steel, nicht glass."),
        ("is the first one titanium?", "en", None),  # no value it comes in: not guessed
        ("the first one", "en", None),  # no question
        ("is the first one in stock?", "en", None),  # no value of it named
    ],
)
def test_a_question_about_a_cards_values_is_answered_with_its_own(
    text: str, language: str, answer: str | None
) -> None:
    assert answer_value_question(text, SHOWN[0], FLASK, messages(language)) == answer


def test_is_it_in_stock_is_asked_of_the_one_match_among_alternatives() -> None:
    alternatives = [SHOWN[0], *(replace(card, breaks=("not steel",)) for card in SHOWN[1:])]
    assert _read("¿está disponible?", alternatives) == ShownQuestion("available", None, 1)
    assert _read("is it in stock?", alternatives) == ShownQuestion("available", None, 1)
    # Of them all, or with several matches: the search is filtered instead.
    assert _read("are they in stock?", alternatives) is None
    assert _read("is it in stock?", SHOWN) is None


def test_what_holds_more_is_the_option_named_for_holding_not_one_that_contains_its_word() -> None:
    small = {"screen size": "8-inch", "storage": "8GB"}
    large = {"screen size": "7-inch", "storage": "32GB"}
    reader = Product(
        id="er",
        title="E-Reader",
        variants=(
            Variant(id="r8", price=Decimal("90"), options=small),
            Variant(id="r32", price=Decimal("95"), options=large),
        ),
    )
    cards = [card_from_variant(reader, v, rank) for rank, v in enumerate(reader.variants, 1)]
    question = read_shown_question("which one holds more books", cards, [reader])
    assert question == ShownQuestion("storage", "max", None)
