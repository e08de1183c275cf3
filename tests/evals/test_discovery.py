"""The discovery set's scorer: loading and validation, gold sets, units, the judges, the figures,
a real assistant played on hand-written conversations, and ``cartagent eval discovery``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cartagent.assistant import Assistant, ConversationStore, Domain, EmbeddingRouter
from cartagent.assistant.cards import ProductCard
from cartagent.assistant.reply import Reply
from cartagent.catalog import Product, Variant, tau_catalog
from cartagent.cli.main import cli
from cartagent.errors import ConfigurationError
from cartagent.evals.discovery import (
    STOPWORDS,
    BestExpect,
    Catalog,
    FactExpect,
    Figures,
    SearchExpect,
    SearchOutcome,
    Turn,
    TurnResult,
    check_against_catalog,
    describe_failure,
    figures_by_split,
    gold_set,
    judge_best,
    judge_clarify,
    judge_fact,
    judge_phrases,
    judge_search,
    judge_smalltalk,
    judge_turn,
    load_conversations,
    magnitudes,
    packaged_set,
    parse_conversations,
    play_all,
    quantities,
    reply_language,
    same_value,
    select,
)
from cartagent.retrieval.embeddings import MiniLMEmbedder
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.search import Searcher
from tests.conftest import TAU


def _variant(vid: str, price: str, available: bool = True, **options: str) -> Variant:
    return Variant(
        id=vid,
        options={k.replace("_", " "): v for k, v in options.items()},
        price=Decimal(price),
        available=available,
    )


SHOP = [
    Product(
        id="bottle",
        title="Water Bottle",
        variants=(
            _variant("b500", "20.00", capacity="500ml", color="blue"),
            _variant("b750", "25.00", capacity="750ml", color="black"),
            _variant("b1000", "30.00", False, capacity="1000ml", color="blue"),
        ),
    ),
    Product(
        id="speaker",
        title="Bluetooth Speaker",
        variants=(
            _variant("s10", "80.00", color="red", battery_life="10 hours", water_resistance="no"),
            _variant(
                "s20", "120.00", color="blue", battery_life="20 hours", water_resistance="yes"
            ),
        ),
    ),
    Product(
        id="boots",
        title="Hiking Boots",
        variants=(
            _variant("h-wp", "150.00", size="10", waterproof="yes"),
            _variant("h-dry", "110.00", size="10", waterproof="no"),
        ),
    ),
    Product(
        id="lamp",
        title="Desk Lamp",
        variants=(
            _variant("l-low", "30.00", brightness="low"),
            _variant("l-high", "45.00", brightness="high"),
            _variant("l-mid", "40.00", brightness="medium"),
        ),
    ),
]
CATALOG = Catalog.of(SHOP)


def _card(product: str, vid: str, rank: int, *breaks: str) -> ProductCard:
    item, variant = CATALOG.variants[(product, vid)]
    return ProductCard(
        item.id,
        item.title,
        variant.id,
        variant.price,
        variant.currency,
        variant.available,
        rank,
        dict(variant.options),
        tuple(breaks),
    )


def _reply(text: str, *cards: ProductCard) -> Reply:
    return Reply(text, Domain.DISCOVERY, cards)


def _search(**fields: Any) -> SearchExpect:
    return SearchExpect.model_validate({"kind": "search", **fields})


def _turn(expect: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "text": "something",
        "lang": "en",
        "patterns": ["plain"],
        "follow_up": False,
        "expect": expect,
    } | fields


def _line(cid: str = "c1", split: str = "dev", *turns: dict[str, Any]) -> str:
    chosen = list(turns) or [_turn({"kind": "smalltalk"})]
    return json.dumps({"id": cid, "split": split, "note": "n", "turns": chosen})


# --- loading and validation -------------------------------------------------------------------


def test_a_valid_set_loads_with_every_kind_of_expectation() -> None:
    search = {
        "kind": "search",
        "products": ["Water Bottle"],
        "options": {"capacity": ["1000ml"]},
        "exclude": {"color": ["black"]},
        "price": {"min": None, "max": "210"},
        "available": False,
        "says_any": ["bottle"],
        "not_says": ["sorry"],
    }
    turns = [
        _turn(search),
        _turn({"kind": "fact", "rank": 1, "option": "capacity"}, follow_up=True),
        _turn({"kind": "best", "option": "capacity", "order": "max", "among": [1, 2]}),
        _turn({"kind": "clarify"}, lang="fr", patterns=["vague", "language"]),
        _turn({"kind": "search", "any_of": [{"products": ["Hiking Boots"]}]}),
    ]
    text = _line("c1", "dev", *turns) + "\n\n" + _line("c2", "test")
    loaded = parse_conversations(text)
    assert [c.id for c in loaded] == ["c1", "c2"]
    assert [t.expect.kind for t in loaded[0].turns] == [
        "search",
        "fact",
        "best",
        "clarify",
        "search",
    ]
    first = loaded[0].turns[0].expect
    assert isinstance(first, SearchExpect) and first.price is not None
    assert first.price.max == Decimal("210")
    assert [c.id for c in select(loaded, "test")] == ["c2"]
    assert [c.id for c in select(loaded, "all", limit=1)] == ["c1"]


@pytest.mark.parametrize(
    ("turn", "says"),
    [
        (_turn({"kind": "smalltalk"}, lang="it"), "turn 2: lang"),
        (_turn({"kind": "smalltalk"}, patterns=["funny"]), "turn 2: patterns.0"),
        ({k: v for k, v in _turn({"kind": "smalltalk"}).items() if k != "follow_up"}, "turn 2"),
        (_turn({"kind": "guess"}), "turn 2: expect"),
        (_turn({"kind": "search"}), "a search needs products"),
        (
            _turn({"kind": "search", "products": ["Grill"], "any_of": [{"products": ["Grill"]}]}),
            "not both",
        ),
        (_turn({"kind": "search", "products": [], "price": {"max": "cheap"}}), "price.max"),
        (_turn({"kind": "fact", "rank": 0, "option": "price"}), "turn 2: expect.fact.rank"),
        (_turn({"kind": "best", "option": "price", "order": "most"}), "expect.best.order"),
        (_turn({"kind": "smalltalk", "extra": 1}), "turn 2: expect.smalltalk.extra"),
    ],
)
def test_a_bad_turn_is_named_by_conversation_and_turn(turn: dict[str, Any], says: str) -> None:
    text = _line("ok") + "\n" + _line("c7", "dev", _turn({"kind": "smalltalk"}), turn)
    with pytest.raises(ConfigurationError) as raised:
        parse_conversations(text)
    assert "conversations.jsonl:2 (c7)" in str(raised.value)
    assert says in str(raised.value)


def test_bad_conversations_are_refused_with_their_line() -> None:
    cases = {
        "not json": "conversations.jsonl:1: not JSON",
        "[1]": "a conversation is a JSON object",
        _line("c1", "train"): "(c1): split",
        json.dumps({"id": "c1", "split": "dev", "turns": []}): "turns",
        _line("c1", "dev", _turn({"kind": "smalltalk"}, follow_up=True)): "nothing came before",
        _line("c1", "dev", _turn({"kind": "fact", "rank": 1, "option": "price"})): "needs cards",
    }
    for text, says in cases.items():
        with pytest.raises(ConfigurationError) as raised:
            parse_conversations(text)
        assert says in str(raised.value), text
    with pytest.raises(ConfigurationError, match="id 'c1' already used at line 1"):
        parse_conversations(_line("c1") + "\n" + _line("c1"))


def test_the_catalog_check_refuses_unknown_names_and_warns_on_doubtful_values() -> None:
    def conversation(*turns: dict[str, Any]) -> list[Any]:
        return parse_conversations(_line("c3", "dev", *turns))

    with pytest.raises(ConfigurationError, match="c3 turn 1: no product is named 'Bottle'"):
        check_against_catalog(
            conversation(_turn({"kind": "search", "products": ["Bottle"]})), CATALOG
        )
    fact = _turn({"kind": "fact", "rank": 1, "option": "wattage"}, follow_up=True)
    with pytest.raises(ConfigurationError, match="c3 turn 2: no product has an option 'wattage'"):
        check_against_catalog(conversation(_turn({"kind": "smalltalk"}), fact), CATALOG)
    doubtful = _turn(
        {
            "kind": "search",
            "products": ["Water Bottle"],
            "options": {"capacity": ["2L"], "material": ["glass"]},
        }
    )
    assert check_against_catalog(conversation(doubtful), CATALOG) == [
        "c3 turn 1: options: 'capacity' is never '2L'",
        "c3 turn 1: options: no product named has an option 'material'",
    ]


def test_a_missing_set_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"missing\.jsonl"):
        load_conversations(tmp_path / "missing.jsonl")


# --- gold sets ----------------------------------------------------------------------------------


def _gold(**fields: Any) -> set[str]:
    return {vid for _, vid in gold_set(_search(**fields), CATALOG)}


def test_gold_is_every_variant_of_the_named_products_without_constraints() -> None:
    assert _gold(products=["Water Bottle"]) == {"b500", "b750", "b1000"}
    assert _gold(products=[]) == set()
    assert _gold(products=["water bottle"]) == set()  # names are exact


def test_gold_options_exclude_price_and_stock() -> None:
    bottle = ["Water Bottle"]
    assert _gold(products=bottle, options={"capacity": ["500ml", "1000ml"]}) == {"b500", "b1000"}
    assert _gold(products=bottle, options={"capacity": ["1000ml"]}, available=True) == set()
    assert _gold(products=bottle, exclude={"color": ["black"]}) == {"b500", "b1000"}
    assert _gold(products=bottle, price={"min": "25", "max": 30}) == {"b750", "b1000"}
    assert _gold(products=bottle, price={"max": 24.99}) == {"b500"}
    assert _gold(products=bottle, available=True) == {"b500", "b750"}
    assert _gold(products=bottle, price={"min": 30, "max": 20}) == set()  # contradictory
    # a product without the option key has no gold variants; exclude on a missing key admits
    assert _gold(products=bottle, options={"waterproof": ["yes"]}) == set()
    assert _gold(products=bottle, exclude={"waterproof": ["no"]}) == {"b500", "b750", "b1000"}


def test_gold_any_of_is_the_union_of_its_specs() -> None:
    water = _gold(
        any_of=[
            {"products": ["Bluetooth Speaker"], "options": {"water resistance": ["yes"]}},
            {"products": ["Hiking Boots"], "options": {"waterproof": ["yes"]}},
        ]
    )
    assert water == {"s20", "h-wp"}


# --- units --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1000ml", "1 L"),
        ("1.5 liters", "1500 ml"),
        ("2L", "2000ml"),
        ("1 liter", "1L"),
        ("1,5 l", "1.5L"),
        ("128GB", "0.128 TB"),
        ("1TB SSD", "1000GB"),
        ("10 hours", "600 minutes"),
        ("13-inch", "13 inches"),
        ("6 ft", "72 inch"),
        ("10000mAh", "10,000 mAh"),
        ("4K", "2160p"),
        ("stainless steel", "Stainless-Steel"),
    ],
)
def test_amounts_in_one_unit_per_dimension_compare_equal(a: str, b: str) -> None:
    assert same_value(a, b)


@pytest.mark.parametrize(
    ("a", "b"), [("1000ml", "1000GB"), ("1L", "1.5L"), ("10 hours", "10 inches"), ("M", "L")]
)
def test_different_amounts_or_dimensions_differ(a: str, b: str) -> None:
    assert not same_value(a, b)


def test_quantities_read_ranges_and_skip_model_numbers() -> None:
    (weights,) = quantities("30-50 lbs")
    assert weights.dimension == "mass" and weights.low < weights.high
    assert quantities("an i7 with 16gb") == [quantities("16GB")[0]]


def test_magnitudes_order_prices_amounts_and_worded_scales() -> None:
    def order(values: list[Any]) -> list[float]:
        return [m.magnitude if m else -1 for m in magnitudes(values)]

    assert order(["1.5L", "1000ml", "2 liters"]) == [1500, 1000, 2000]
    assert order([Decimal("3.5"), Decimal("2")]) == [3.5, 2]
    assert order(["low", "high", "medium"]) == [0, 2, 1]
    assert order(["small", "medium", "large"]) == [0, 1, 2]  # "medium" is on two scales
    assert order(["glass", "plastic"]) == [-1, -1]


# --- the judges ---------------------------------------------------------------------------------


def test_search_passes_gold_claims_and_near_misses() -> None:
    expect = _search(products=["Water Bottle"], options={"capacity": ["500ml", "750ml"]})
    reply = _reply(
        "2 matches", _card("bottle", "b500", 1), _card("bottle", "b1000", 2, "capacity is 1000ml")
    )
    assert judge_search(expect, reply, CATALOG) == SearchOutcome((), 1, 1, 2)


def test_search_fails_a_claimed_card_outside_the_gold_set() -> None:
    expect = _search(products=["Water Bottle"], options={"capacity": ["500ml"]})
    reply = _reply("2 matches", _card("bottle", "b500", 1), _card("bottle", "b750", 2))
    outcome = judge_search(expect, reply, CATALOG)
    assert (outcome.claimed, outcome.claimed_in_gold) == (2, 1)
    assert outcome.why == (
        "claims #2 Water Bottle [b750] (capacity=750ml, color=black), not in the gold set",
    )


def test_search_fails_a_claim_when_nothing_fits_and_silence_when_something_does() -> None:
    honest_none = _search(products=[])
    near = _reply("No exact match; closest:", _card("bottle", "b500", 1, "not a kettle"))
    assert judge_search(honest_none, near, CATALOG).why == ()
    claimed = judge_search(honest_none, _reply("1 match", _card("bottle", "b500", 1)), CATALOG)
    assert claimed.why[0] == "nothing fits, but it claims 1 matches"
    missed = judge_search(_search(products=["Hiking Boots"]), near, CATALOG)
    assert missed.why == ("claims no match, but 2 variants fit",)


LIST = (
    _card("bottle", "b500", 1),
    _card("bottle", "b1000", 2),
    _card("speaker", "s10", 3),
    _card("speaker", "s20", 4),
)


def _fact(rank: int, option: str) -> FactExpect:
    return FactExpect(kind="fact", rank=rank, option=option)


@pytest.mark.parametrize(
    ("rank", "option", "right", "wrong"),
    [
        (2, "capacity", "It holds 1 liter.", "It holds 500ml."),
        (2, "capacity", "That one is 1000 ml", "That one is 100 ml"),
        (1, "price", "It costs 20.00 USD.", "It costs 30.00 USD."),
        (2, "available", "Sorry, that one is out of stock.", "Yes, it is in stock."),
        (1, "available", "It is available now.", "It is currently unavailable."),
        (4, "water resistance", "Yes, it is water resistant.", "No, it is not."),
        (3, "water resistance", "No, it is not water resistant.", "It is water resistant."),
        (3, "water resistance", "Nope.", "I don't know."),
        (3, "battery life", "About 10 hours on a charge.", "About 20 hours on a charge."),
        # the card's options named in parentheses, or a quoted example, state nothing
        (1, "capacity", "#1 holds 500ml.", "Yes: Water Bottle (500ml, blue) holds 1L."),
        (1, "available", "#1 is in stock.", "Which one? Ask, e.g., 'is the first in stock?'"),
        (4, "water resistance", "Yes it is.", "It (blue, 20 hours, water resistance) may not be."),
    ],
)
def test_fact_passes_the_cards_value_and_fails_another(
    rank: int, option: str, right: str, wrong: str
) -> None:
    expect = _fact(rank, option)
    assert judge_fact(expect, _reply(right), LIST, CATALOG) == []
    assert judge_fact(expect, _reply(wrong), LIST, CATALOG) != []


def test_fact_finds_the_card_by_the_number_shown_and_reads_the_catalog() -> None:
    # the one card shown last kept its number (#2) from the list it came from: "the second
    # one" is still it, and so is "it" (rank 1 of a one-card list)
    for rank in (1, 2):
        assert judge_fact(_fact(rank, "capacity"), _reply("1000ml"), (LIST[1],), CATALOG) == []
    assert judge_fact(_fact(3, "capacity"), _reply("1000ml"), (LIST[1],), CATALOG) == [
        "the latest list has 1 cards: no #3"
    ]
    assert judge_fact(_fact(5, "price"), _reply("20.00"), LIST, CATALOG) == [
        "the latest list has 4 cards: no #5"
    ]
    assert judge_fact(_fact(1, "price"), _reply("20.00"), (), CATALOG) == [
        "no earlier reply showed cards"
    ]
    assert (
        "has no 'battery life'"
        in judge_fact(_fact(1, "battery life"), _reply("x"), LIST, CATALOG)[0]
    )


def _best(option: str, order: str, among: list[int] | None = None) -> BestExpect:
    return BestExpect.model_validate(
        {"kind": "best", "option": option, "order": order, "among": among}
    )


def test_best_passes_the_winner_first_or_named_and_fails_a_loser() -> None:
    most = _best("capacity", "max", [1, 2])
    assert judge_best(most, _reply("This one:", _card("bottle", "b1000", 2)), LIST, CATALOG) == []
    assert judge_best(most, _reply("The second holds a full liter (1L)."), LIST, CATALOG) == []
    assert judge_best(most, _reply("#2: 1000ml, #1: 500ml"), LIST, CATALOG) == []
    wrong = judge_best(most, _reply("This one:", _card("bottle", "b500", 1)), LIST, CATALOG)
    assert wrong and "max capacity" in wrong[0]
    assert judge_best(most, _reply("The first, 500ml."), LIST, CATALOG) != []
    cheapest = _best("price", "min")
    assert judge_best(cheapest, _reply("#1 at 20.00 USD"), LIST, CATALOG) == []
    assert judge_best(cheapest, _reply("#3 at 80.00 USD"), LIST, CATALOG) != []
    longest = _best("battery life", "max", [3, 4])
    assert judge_best(longest, _reply("20 hours on #4"), LIST, CATALOG) == []


def test_best_reports_lists_it_cannot_compare() -> None:
    assert judge_best(_best("capacity", "max", [1, 9]), _reply("x"), LIST, CATALOG) == [
        "the latest list has 4 cards: no #9"
    ]
    assert judge_best(_best("color", "max"), _reply("x"), LIST, CATALOG) == [
        "the cards' color values cannot be compared"
    ]
    # a list mixing kinds of amount compares the kind most of its cards have
    mixed = (_card("speaker", "s10", 1), LIST[0], _card("speaker", "s20", 2))
    assert judge_best(_best("battery life", "max"), _reply("20 hours"), mixed, CATALOG) == []
    lamps = (_card("lamp", "l-low", 1), _card("lamp", "l-high", 2), _card("lamp", "l-mid", 3))
    assert judge_best(_best("brightness", "max"), _reply("The second, high."), lamps, CATALOG) == []


def test_smalltalk_wants_a_short_card_free_reply_that_does_not_refuse() -> None:
    assert judge_smalltalk(_reply("You're welcome! Anything else?")) == []
    assert judge_smalltalk(_reply("Sorry, I can't help with that.")) == ["refuses (can't help)"]
    assert judge_smalltalk(_reply("I cannot help you there")) == ["refuses (cannot help)"]
    assert judge_smalltalk(_reply("Hi!", LIST[0])) == ["shows 1 cards"]
    assert judge_smalltalk(_reply("Hello " * 60)) == ["360 characters, over 300"]


def test_clarify_wants_a_question_and_no_claimed_match() -> None:
    assert judge_clarify(_reply("Do you mean a kettle or a bottle?")) == []
    assert judge_clarify(_reply("Is it for tea?", _card("bottle", "b500", 1, "not a kettle"))) == []
    assert judge_clarify(_reply("Here you go.", LIST[0])) == [
        "asks no question",
        "claims 1 matches instead of asking",
    ]


def test_phrases_says_any_and_not_says_ignore_case() -> None:
    expect = _search(products=[], says_any=["Red", "colour"], not_says=["lol"])
    assert judge_phrases(expect, "No red ones, sorry") == []
    assert judge_phrases(expect, "Nothing here LOL") == [
        "says none of ['Red', 'colour']",
        "says 'lol'",
    ]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Here are the matches for your request: the first one is in stock.", "en"),
        ("Estas son las botellas que tenemos para ti, pero no hay ninguna de vidrio.", "es"),
        ("Leider gibt es keine Flasche mit diesem Volumen, aber ich habe eine Alternative.", "de"),
        ("Voici les bouteilles que nous avons pour vous, mais aucune n'est en verre.", "fr"),
        ("12345 !!!", "en"),
    ],
)
def test_the_reply_language_is_told_by_function_words(text: str, lang: str) -> None:
    assert reply_language(text) == lang


def test_the_cards_titles_and_values_do_not_count_toward_the_language() -> None:
    card = ProductCard("x", "Die Hard Der Film", "v", None, None, True, 1, {"edition": "Das Boot"})
    assert reply_language("3 matches: Die Hard Der Film (Das Boot)", [card]) == "en"
    assert reply_language("3 matches: Die Hard Der Film (Das Boot)") == "de"


def test_the_shoppers_own_words_echoed_back_do_not_count_toward_the_language() -> None:
    echo = "3 exact matches for headphones hola unos inalámbricos:"
    assert reply_language(echo) == "es"
    assert reply_language(echo, asked="hola, busco unos auriculares inalámbricos") == "en"
    answer = "¡Hola! Estos son los auriculares que tenemos:"
    assert reply_language(answer, asked="hola, busco unos auriculares") == "es"


def test_an_echo_counts_when_it_is_all_the_reply_has_of_a_language() -> None:
    asked = "je cherche un parfum pour homme, plutôt boisé"
    assert reply_language("2 résultats exacts pour men woody perfume:", asked=asked) == "fr"
    assert reply_language("2 exact matches for men woody perfume pour homme", asked=asked) == "en"


def test_the_stopword_lists_are_disjoint_and_about_forty_words_each() -> None:
    for lang, words in STOPWORDS.items():
        assert 40 <= len(words) <= 60, lang
        for other, others in STOPWORDS.items():
            assert other == lang or not words & others, (lang, other, words & others)


def test_judge_turn_adds_phrases_and_language_to_the_expectation() -> None:
    turn = Turn.model_validate(_turn({"kind": "smalltalk", "not_says": ["bye"]}, lang="de"))
    why, outcome, language = judge_turn(turn, _reply("Thanks, bye!"), (), CATALOG)
    assert outcome is None and language == "en"
    assert why == ["says 'bye'", "answers in en, not de"]


# --- figures and failures -----------------------------------------------------------------------


def _result(
    cid: str,
    split: str,
    number: int,
    why: tuple[str, ...] = (),
    search: SearchOutcome | None = None,
    **turn: Any,
) -> TurnResult:
    expect = {"kind": "search", "products": []} if search else {"kind": "smalltalk"}
    return TurnResult(
        cid,
        split,
        number,
        Turn.model_validate(_turn(expect, **turn)),
        "reply",
        (),
        float(number * 10),
        "en",
        why,
        search,
    )


def test_figures_sum_precision_honesty_follow_ups_patterns_and_latency() -> None:
    results = [
        _result("a", "dev", 1, search=SearchOutcome((), 3, 3, 5), patterns=["plain"]),
        _result("a", "dev", 2, ("x",), SearchOutcome(("x",), 2, 0, 0), follow_up=True),
        _result("b", "test", 1, search=SearchOutcome((), 0, 0, 0), patterns=["honest-none"]),
        _result("b", "test", 2, follow_up=True, patterns=["greeting", "plain"]),
    ]
    all_ = Figures.of(results)
    assert (all_.turns, all_.turns_right, all_.conversations, all_.conversations_right) == (
        4,
        3,
        2,
        1,
    )
    assert (all_.claimed, all_.claimed_in_gold, all_.precision) == (5, 3, 0.6)
    assert (all_.none_turns, all_.honest_none, all_.honesty) == (2, 1, 0.5)
    assert (all_.follow_ups, all_.follow_ups_right) == (2, 1)
    assert all_.patterns == {"plain": (2, 3), "greeting": (1, 1), "honest-none": (1, 1)}
    assert all_.search_ms == (10.0, 20.0, 10.0) and all_.max_ms == 20.0
    assert all_.search_p50 == 10.0
    split = figures_by_split(results)
    assert list(split) == ["dev", "test", "all"]
    assert split["dev"].precision == 0.6 and split["test"].precision is None
    assert split["test"].to_json()["honest_when_none"] == 1.0


def test_a_failure_names_the_turn_its_reply_cards_and_why() -> None:
    card = _card("bottle", "b750", 1, "capacity is 750ml")
    failed = TurnResult(
        "c9",
        "dev",
        2,
        Turn.model_validate(_turn({"kind": "smalltalk"}, text="t" * 300)),
        "r" * 400,
        (card, _card("bottle", "b500", 2)),
        5.0,
        "en",
        ("shows 2 cards",),
    )
    text = describe_failure(failed)
    assert text.startswith("c9 turn 2 (dev, plain): " + "t" * 199 + "\u2026\n")
    assert "  replied:  " + "r" * 299 + "\u2026\n" in text
    assert "#1 Water Bottle [b750] (capacity=750ml, color=black) breaks: capacity is 750ml" in text
    assert "#2 Water Bottle [b500] (capacity=500ml, color=blue) match" in text
    assert text.endswith("  wrong: shows 2 cards")


# --- the real assistant -------------------------------------------------------------------------

PLAYED = "\n".join(
    [
        _line(
            "speakers",
            "dev",
            _turn({"kind": "search", "products": ["Bluetooth Speaker"]}, text="bluetooth speakers"),
            _turn(
                {"kind": "fact", "rank": 1, "option": "price"},
                text="how much is the first one?",
                follow_up=True,
            ),
        ),
        _line(
            "none",
            "test",
            _turn(
                {"kind": "search", "products": [], "options": {}},
                text="a purple laptop with 64gb ram under 100 dollars",
                patterns=["honest-none", "price"],
            ),
            _turn({"kind": "smalltalk"}, text="hello!", patterns=["greeting"]),
        ),
    ]
)


@pytest.fixture(scope="module")
def tau_assistant(minilm: MiniLMEmbedder) -> Iterator[Assistant]:
    """The real assistant on the demo store: rule understanding, MiniLM routing."""
    router = EmbeddingRouter(minilm)
    router.warm_up()
    store = ConversationStore.open("sqlite://")
    yield Assistant(router, store, searcher=Searcher(LexicalIndex.build(tau_catalog(TAU))))
    store.close()


@pytest.mark.anyio
async def test_the_real_assistant_plays_and_is_judged(tau_assistant: Assistant) -> None:
    catalog = Catalog.of(tau_catalog(TAU))
    conversations = parse_conversations(PLAYED)
    assert check_against_catalog(conversations, catalog) == []
    ticks: list[int] = []
    results = await play_all(tau_assistant, conversations, catalog, lambda: ticks.append(1))
    assert len(ticks) == len(results) == 4
    assert [(r.conversation, r.number) for r in results] == [
        ("speakers", 1),
        ("speakers", 2),
        ("none", 1),
        ("none", 2),
    ]
    speakers, price, laptop, hello = results
    assert speakers.right and speakers.search is not None and speakers.search.claimed >= 1
    assert all(c.title == "Bluetooth Speaker" for c in speakers.cards)
    assert price.right, price.why
    assert laptop.search is not None and laptop.search.gold == 0 and laptop.search.claimed == 0
    assert hello.search is None and hello.language == "en"
    assert all(r.ms > 0 for r in results)
    figures = Figures.of(results)
    assert figures.precision == 1.0 and figures.honesty == 1.0


# --- the command --------------------------------------------------------------------------------


@pytest.mark.model  # the command's assistant routes with MiniLM
def test_the_command_plays_a_given_set_and_writes_its_report(tmp_path: Path) -> None:
    given = tmp_path / "set.jsonl"
    given.write_text(PLAYED)
    report = tmp_path / "report.json"
    args = ["eval", "discovery", "--set", str(given), "--split", "test", "--failures", "5"]
    result = CliRunner().invoke(cli, [*args, "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "discovery set, 1 conversations, model rules" in result.output
    assert "| split | conversations | turns right " in result.output
    assert "| honest-none |" in result.output
    written = json.loads(report.read_text())
    assert list(written["figures"]) == ["test", "all"]
    assert [t["conversation"] for t in written["turns"]] == ["none", "none"]
    assert written["turns"][0]["gold"] == 0 and "gold" not in written["turns"][1]


def test_the_command_refuses_a_set_that_does_not_fit_the_catalog(tmp_path: Path) -> None:
    given = tmp_path / "set.jsonl"
    given.write_text(_line("c1", "dev", _turn({"kind": "search", "products": ["Unicorn"]})))
    result = CliRunner().invoke(cli, ["eval", "discovery", "--set", str(given)])
    assert result.exit_code == 1
    assert "c1 turn 1: no product is named 'Unicorn'" in result.output


def test_the_packaged_set_is_valid_and_fits_the_demo_store() -> None:
    conversations = load_conversations()
    assert packaged_set().name == "conversations.jsonl"
    assert {c.split for c in conversations} == {"dev", "test"}
    check_against_catalog(conversations, Catalog.of(tau_catalog(TAU)))


def test_the_packaged_set_is_as_big_and_as_consistent_as_its_readme_says() -> None:
    conversations = load_conversations()
    turns = [turn for c in conversations for turn in c.turns]
    assert len(conversations) >= 80 and len(turns) >= 300
    catalog = Catalog.of(tau_catalog(TAU))
    nothing_fits = {"honest-none", "not-sold", "contradictory"}
    texts = [turn.text for turn in turns]
    assert len(set(texts)) == len(texts), "no two turns share a text"
    for conversation in conversations:
        for number, turn in enumerate(conversation.turns, 1):
            where = f"{conversation.id} turn {number}"
            assert turn.follow_up == ("follow-up" in turn.patterns), where
            assert ("long" in turn.patterns) == (len(turn.text) > 300), where
            assert (turn.lang != "en") <= ("language" in turn.patterns), where
            if isinstance(turn.expect, SearchExpect):
                empty = not gold_set(turn.expect, catalog)
                assert empty == bool(nothing_fits & set(turn.patterns)), where
    for pattern in ("follow-up", "honest-none", "language"):
        assert sum(pattern in turn.patterns for turn in turns) >= 40, pattern
    for lang in ("es", "de", "fr"):
        assert sum(turn.lang == lang for turn in turns) >= 10, lang


@pytest.mark.model
def test_the_command_plays_the_packaged_set(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["eval", "discovery", "--limit", "3", "--json", str(report)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    written = json.loads(report.read_text())
    assert len({t["conversation"] for t in written["turns"]}) == 3
    assert written["figures"]["all"]["turns"] == len(written["turns"])
