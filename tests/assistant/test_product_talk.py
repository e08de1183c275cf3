"""Whether a turn says something about products: constraints said in so many words, not
ones spelling correction made of other words."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from cartagent.assistant.product_talk import names_a_kind, names_constraints, said_constraints
from cartagent.errors import ModelError
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery
from cartagent.retrieval.search import Searcher
from tests.assistant.conftest import SHOP


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("ok fair point. bagless then", SearchQuery(options={"bagged/bagless": ["bagless"]})),
        ("nothing too hard tho, she's no expert", SearchQuery(exclude=[Exclusion(value="expert")])),
        ("she's really into puzzles", SearchQuery(category="jigsaw puzzle")),
        ("wifi, there's no cable where it goes", SearchQuery(options={"connectivity": ["Wi-Fi"]})),
        ("in Schwarz bitte", SearchQuery(options={"color": ["black"]})),  # the word lists' German
        ("ugh ok, up to 2200", SearchQuery(price=PriceRange(max=Decimal(2200)))),
        ("only what you have in stock", SearchQuery(available_only=True)),
    ],
)
def test_a_constraint_the_turn_says_counts(text: str, query: SearchQuery) -> None:
    assert said_constraints(text, query)


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("what's the weather", SearchQuery(text="weather", options={"material": ["leather"]})),
        ("write me a poem", SearchQuery(text="poem", options={"color": ["white"]})),
        ("who won the game last night", SearchQuery(options={"skin tone": ["light"]})),
        ("tell me a joke about cats", SearchQuery(text="tell joke cats")),
        ("cheaper than what?", SearchQuery(price=PriceRange(max=Decimal(10)))),  # no number
    ],
)
def test_a_constraint_spelling_correction_made_of_another_word_does_not(
    text: str, query: SearchQuery
) -> None:
    assert not said_constraints(text, query)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("hmm ok, not polyester then tho", True),
        ("fine, a red one i guess", True),
        ("tell me a joke about cats", False),
        ("write me a poem", False),  # the rule parser reads "write" as white
        ("what's the weather like", False),
    ],
)
def test_the_searchers_understanding_of_the_turn_alone_is_judged(
    shop_searcher: Searcher, text: str, names: bool
) -> None:
    assert names_constraints(text, shop_searcher) is names


def test_the_catalogs_vocabulary_counts_only_what_was_said(tau_grounded_searcher: Searcher) -> None:
    assert names_constraints("ok fair point. a corded upright then, bagless", tau_grounded_searcher)
    assert not names_constraints("what's the weather", tau_grounded_searcher)
    assert not names_constraints("who won the game last night", tau_grounded_searcher)


def test_an_understander_whose_model_fails_reads_nothing() -> None:
    def failing(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        raise ModelError("the model did not answer")

    assert not names_constraints("in red", Searcher(LexicalIndex.build(SHOP), failing))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Hallo, ich suche einen Wasserkocher mit 1,5 Liter", True),  # German for kettle
        ("labtop with i9 procesor", True),  # one letter off a kind's long word
        ("sunglases polarised, brwn frame", True),
        # no kind named, but values only one kind offers, said word for word
        ("ok fair point. a corded upright then, bagless", True),
        ("i'd like a french press", True),
        ("salut, je voudrais une cafetière à piston", True),  # French, through the glosses
        ("it is warm today", False),  # "warm" is only part of a value ("warm white")
        ("what's the weather", False),
    ],
)
def test_a_kind_is_named_only_in_the_shoppers_own_words(
    tau_grounded_searcher: Searcher, text: str, names: bool
) -> None:
    assert names_a_kind(text, tau_grounded_searcher) is names


def test_a_kind_an_understander_cannot_read_is_no_kind() -> None:
    def failing(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        raise ModelError("the model did not answer")

    assert not names_a_kind("t-shirt", Searcher(LexicalIndex.build(SHOP), failing))
