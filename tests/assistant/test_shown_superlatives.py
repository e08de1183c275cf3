"""Superlatives about the shown results, answered from their options or said unknown."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant.cards import ProductCard
from cartagent.assistant.shown_superlatives import answer_superlative, find_superlative


def _card(rank: int, price: str = "10", **options: str) -> ProductCard:
    return ProductCard("bag", "Backpack", f"v{rank}", Decimal(price), "USD", True, rank, options)


BAGS = [
    _card(1, "193.38", color="green", size="small", capacity="20 L"),
    _card(2, "198.00", color="black", size="large", capacity="35 L"),
    _card(3, "200.48", color="grey", size="large", capacity="30 L"),
]


@pytest.mark.parametrize(
    ("text", "word", "stem"),
    [
        ("which one is the lightest?", "lightest", "light"),
        ("Which is bigger?", "bigger", "big"),
        ("which of them is the most powerful", "most powerful", "powerful"),
        ("so which one is the warmest?", "warmest", None),
        ("which one's the brightest", "brightest", "bright"),
        ("whatever. the biggest one", "biggest", "big"),
        ("ok, i'll take the lightest one", "lightest", "light"),
    ],
)
def test_superlatives_about_the_list_are_found(text: str, word: str, stem: str | None) -> None:
    asked = find_superlative(text)
    assert asked is not None and (asked.word, asked.stem) == (word, stem)


@pytest.mark.parametrize(
    "text",
    [
        "which one is cheaper?",  # the references' own
        "which one is the best rated?",
        "which one is the other?",
        "which one is waterproof?",
        "show me the lightest backpack",  # a search, not a question about the list
        "the lightest backpack you have",
        "the best one",  # no measure of its own
    ],
)
def test_other_questions_are_not_superlatives_here(text: str) -> None:
    assert find_superlative(text) is None


def test_a_size_answers_big_and_small_ties_included() -> None:
    biggest = find_superlative("which is the biggest?")
    smallest = find_superlative("which one is the smallest?")
    assert biggest is not None and smallest is not None
    assert answer_superlative(biggest, BAGS) == (
        "#2 and #3 are the biggest (size large).",
        (BAGS[1], BAGS[2]),
    )
    assert answer_superlative(smallest, BAGS) == ("#1 is the smallest (size small).", (BAGS[0],))
    # Letters and numbers compare as sizes and amounts: S < XL; 20 L < 35 L.
    shirts = [_card(1, size="XL"), _card(2, size="S")]
    assert answer_superlative(smallest, shirts)[1] == (shirts[1],)


def test_what_the_options_cannot_tell_is_said_with_what_differs() -> None:
    lightest = find_superlative("which one is the lightest?")
    warmest = find_superlative("which one is the warmest?")
    assert lightest is not None and warmest is not None
    assert answer_superlative(lightest, BAGS) == (
        "The catalog does not give their weight, so I cannot tell which is lightest. They "
        "differ in capacity, color, size, price.",
        (),
    )
    assert answer_superlative(warmest, BAGS)[0].startswith(
        "The catalog does not say which is warmest."
    )
    same = [_card(1, size="large"), _card(2, size="large")]
    big = find_superlative("which is bigger?")
    assert big is not None
    assert answer_superlative(big, same) == (
        "They all have the same size, large. They are alike.",
        (),
    )


def test_levels_rank_and_values_that_do_not_are_named() -> None:
    lamps = [_card(1, brightness="medium"), _card(2, brightness="low"), _card(3, brightness="high")]
    brightest = find_superlative("which one is the brightest?")
    assert brightest is not None
    assert answer_superlative(brightest, lamps) == (
        "#3 is the brightest (brightness high).",
        (lamps[2],),
    )
    odd = [_card(1, brightness="warm glow"), _card(2, brightness="daylight")]
    assert answer_superlative(brightest, odd) == (
        "Their brightness is daylight, warm glow, which I cannot rank. They differ in brightness.",
        (),
    )


def test_the_most_of_an_option_named_is_read_from_that_option() -> None:
    most = find_superlative("which one has the most capacity?")
    least = find_superlative("which of them has the least capacity")
    assert most is not None and (most.option, most.more) == ("capacity", True)
    assert least is not None and (least.option, least.more) == ("capacity", False)
    assert answer_superlative(most, BAGS) == (
        "#2 has the most capacity (capacity 35 L).",
        (BAGS[1],),
    )
    assert answer_superlative(least, BAGS)[1] == (BAGS[0],)
    assert find_superlative("which one has the lowest price?") is None  # the references' own


def test_an_option_named_that_no_result_has_cannot_tell() -> None:
    longest = find_superlative("which one has the longest battery life?")
    assert longest is not None and (longest.option, longest.more) == ("battery life", True)
    assert answer_superlative(longest, BAGS)[0].startswith(
        "The catalog does not give their battery life, so I cannot tell which has the longest "
        "battery life."
    )


def test_when_one_shown_result_gives_the_option_it_is_said() -> None:
    most = find_superlative("which one has the most capacity?")
    assert most is not None
    mixed = [_card(1, color="red"), _card(2, capacity="30 L")]
    assert answer_superlative(most, mixed) == ("Only #2 gives its capacity: 30 L.", (mixed[1],))
