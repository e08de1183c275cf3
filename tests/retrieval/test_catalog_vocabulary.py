"""The catalog's vocabulary: a query placed on the options and values a catalog really has.

The store here is invented for these tests (not the demo store): what is learnt comes from its
products, with no word list written for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from cartagent.catalog import Product, Variant
from cartagent.retrieval.amounts import amount
from cartagent.retrieval.catalog_vocabulary import (
    CatalogVocabulary,
    GroundedUnderstander,
    Leftover,
    asks_nothing,
)
from cartagent.retrieval.filters import Plan, Words, analyzer, matching_variants
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.query import Exclusion, SearchQuery
from cartagent.retrieval.rules import parse
from cartagent.retrieval.search import Searcher


def _product(pid: str, title: str, *variants: dict[str, str]) -> Product:
    return Product(
        id=pid,
        title=title,
        category=("Outdoors", f"{title}s"),
        description=f"A {title.lower()}.",
        variants=tuple(
            Variant(id=f"{pid}-{n}", price=Decimal(100 + n), options=options)
            for n, options in enumerate(variants)
        ),
    )


LANTERN = _product(
    "lantern",
    "Camping Lantern",
    {"splash protection": "none", "brightness": "300 lumens", "power": "AA batteries"},
    {"splash protection": "IPX4", "brightness": "600 lumens", "power": "USB-C"},
    {"splash protection": "IPX8", "brightness": "600 lumens", "power": "solar"},
)
GOGGLES = _product(
    "goggles",
    "Ski Goggles",
    {"lens coating": "anti-fog", "lens tint": "amber"},
    {"lens coating": "non-anti-fog", "lens tint": "smoke"},
)
TENT = _product(
    "tent",
    "Dome Tent",
    {"sleeps": "2 people", "pole material": "aluminium", "pack size": "2.5 liters"},
    {"sleeps": "4 people", "pole material": "fibreglass", "pack size": "6 liters"},
)
CATALOG = [LANTERN, GOGGLES, TENT]


@pytest.fixture(scope="module")
def vocabulary() -> CatalogVocabulary:
    return CatalogVocabulary(CATALOG)


def test_a_word_of_the_text_that_is_an_option_value_becomes_that_constraint(
    vocabulary: CatalogVocabulary,
) -> None:
    grounded = vocabulary.ground(SearchQuery(category="lantern", text="solar powered"))
    assert grounded.options == {"power": ["solar"]}
    assert grounded.text == "solar powered"  # the words still rank


def test_a_constraint_under_a_name_the_products_lack_moves_to_the_option_holding_it(
    vocabulary: CatalogVocabulary,
) -> None:
    query = SearchQuery(category="goggles", attributes={"features": ["anti-fog"]})
    assert vocabulary.ground(query).options == {"lens coating": ["anti-fog"]}
    assert vocabulary.ground(query).attributes == {}


def test_an_options_name_in_the_shoppers_words_means_any_value_but_none(
    vocabulary: CatalogVocabulary,
) -> None:
    for said in ("splash protected lantern", "lantern, splashproof", "splash resistant lantern"):
        grounded = vocabulary.ground(parse(said))
        assert grounded.options == {"splash protection": ["IPX4", "IPX8"]}, said


def test_a_typo_of_a_value_is_placed_when_nothing_matches_exactly(
    vocabulary: CatalogVocabulary,
) -> None:
    grounded = vocabulary.ground(SearchQuery(category="lantern", text="sollar"))
    assert grounded.options == {"power": ["solar"]}
    # Short words are too close to too many others to guess at.
    assert vocabulary.ground(SearchQuery(category="tent", text="pol")).options == {}


def test_quantities_are_written_the_catalogs_way(vocabulary: CatalogVocabulary) -> None:
    grounded = vocabulary.ground(SearchQuery(category="tent", options={"pack size": ["6 l"]}))
    assert grounded.options == {"pack size": ["6 liters"]}


def test_values_are_looked_up_only_in_the_products_of_the_category(
    vocabulary: CatalogVocabulary,
) -> None:
    # "amber" is a lens tint of goggles; a tent has none, so nothing is placed.
    assert vocabulary.ground(SearchQuery(category="tent", text="amber")).options == {}
    # Without a category, every product's values count.
    assert vocabulary.ground(SearchQuery(text="amber")).options == {"lens tint": ["amber"]}


def test_an_exclusion_is_placed_on_the_option_holding_the_value(
    vocabulary: CatalogVocabulary,
) -> None:
    query = SearchQuery(category="goggles", exclude=[Exclusion(value="anti-fog")])
    assert vocabulary.ground(query).exclude == [Exclusion(field="lens coating", value="anti-fog")]


def test_ruling_out_a_colour_rules_out_its_shades() -> None:
    bag = _product(
        "bag", "Backpack", {"color": "navy"}, {"color": "light blue"}, {"color": "black"}
    )
    vocabulary = CatalogVocabulary([bag, TENT])
    named = vocabulary.ground(
        SearchQuery(category="backpack", exclude=[Exclusion(field="color", value="blue")])
    )
    assert {e.value for e in named.exclude} == {"blue", "navy", "light blue"}
    # The colour itself unsold: its shades are ruled out all the same.
    navy = CatalogVocabulary([_product("bag", "Backpack", {"color": "navy"}, {"color": "red"})])
    blue = Exclusion(field="color", value="blue")
    bare = navy.ground(SearchQuery(category="backpack", exclude=[blue]))
    assert bare.exclude == [blue, Exclusion(field="color", value="navy")]
    assert parse("ein Rucksack, nichts Blaues").exclude == [Exclusion(field="color", value="blue")]


def test_what_cannot_be_placed_is_left_as_it_was(vocabulary: CatalogVocabulary) -> None:
    query = SearchQuery(category="tent", attributes={"features": ["bug net"]}, text="for festivals")
    assert vocabulary.ground(query) == query


def test_a_negated_value_is_not_its_opposite() -> None:
    """ "anti-fog" must not match "non-anti-fog", nor the other way round."""
    words = Words(analyzer())
    for wanted, expected in (("anti-fog", ["goggles-0"]), ("non-anti-fog", ["goggles-1"])):
        plan = Plan.of(SearchQuery(options={"lens coating": [wanted]}), words)
        assert [v.id for v in matching_variants(plan, GOGGLES, words)] == expected


def test_the_grounded_understander_keeps_a_follow_ups_own_value() -> None:
    """However the inner understander merged the turns, the follow-up's own value wins."""

    def merging(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        powers = ["USB-C", "solar"] if context else ["solar"]
        return SearchQuery(category="lantern" if context else None, options={"power": powers})

    grounded = GroundedUnderstander(merging, CatalogVocabulary(CATALOG))
    again = grounded("solar instead", context=["lantern with usb-c power"])
    assert (again.category, again.options) == ("lantern", {"power": ["solar"]})
    assert grounded("solar").options == {"power": ["solar"]}


def test_a_product_speaks_of_an_option_it_has_or_names_a_value_of() -> None:
    phones = _product(
        "phones", "Headphones", {"connectivity": "wired"}, {"connectivity": "wireless"}
    )
    buds = _product("buds", "Wireless Earbuds", {"color": "black"})
    vocabulary = CatalogVocabulary([phones, buds, TENT])
    assert vocabulary.speaks_of(phones, "connectivity")
    assert vocabulary.speaks_of(buds, "Connectivity")  # "Wireless" in its name
    assert not vocabulary.speaks_of(TENT, "connectivity")


def test_values_no_product_of_the_kind_has_are_misfits() -> None:
    vocabulary = CatalogVocabulary(CATALOG)
    assert vocabulary.misfits(SearchQuery(category="lantern", options={"power": ["solar"]})) == 0
    lost = SearchQuery(category="lantern", options={"power": ["solar"], "size": ["5'1"]})
    assert vocabulary.misfits(lost) == 1
    both = SearchQuery(
        category="lantern",
        options={"power": ["solar"]},
        exclude=[Exclusion(field="power", value="solar")],
    )
    assert vocabulary.misfits(both) == 1


def test_the_check_reading_is_kept_where_the_models_asks_for_values_the_kind_lacks() -> None:
    def filing(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return SearchQuery(category="lantern", options={"power": [request]})  # all of it

    grounded = GroundedUnderstander(filing, CatalogVocabulary(CATALOG), check=parse)
    assert grounded("lantern, solar").options == {"power": ["solar"]}  # the rules'
    assert grounded("solar").options == {"power": ["solar"]}  # the model's fits
    unchecked = GroundedUnderstander(filing, CatalogVocabulary(CATALOG))
    assert unchecked("lantern, solar").options != {"power": ["solar"]}


def test_a_value_the_model_adds_that_no_product_has_goes_back_to_the_text() -> None:
    # Both readings miss the catalog as often, so the model's is kept: less what it added that
    # no lantern has (shown as met, it would be a match nobody checked).
    def rules(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return SearchQuery(category="lantern", options={"size": ["XL"], "colour": ["plaid"]})

    def model(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return SearchQuery(
            text="tall",
            category="lantern",
            options={"size": ["XL"], "power": ["solar"]},
            attributes={"glow": ["moon light"]},
        )

    grounded = GroundedUnderstander(model, CatalogVocabulary(CATALOG), check=rules)
    query = grounded("a tall solar lantern in XL with a moon light glow")
    assert query.options == {"size": ["XL"], "power": ["solar"]}
    assert query.attributes == {}
    assert query.text == "tall moon light"


def test_a_search_through_the_vocabulary_finds_only_exact_matches() -> None:
    searcher = Searcher(
        LexicalIndex.build(CATALOG),
        understand=GroundedUnderstander(parse, CatalogVocabulary(CATALOG)),
    )
    found = searcher.search("splashproof lantern with 600 lumens")
    assert [(h.product.id, h.variant.id if h.variant else None) for h in found.hits] == [
        ("lantern", "lantern-1")
    ]
    words = Words(analyzer())
    plan = Plan.of(found.query, words)
    assert [v.id for v in matching_variants(plan, LANTERN, words)] == ["lantern-1", "lantern-2"]


def test_leftover_words_the_catalog_uses_must_be_the_cards_and_others_are_said(
    vocabulary: CatalogVocabulary,
) -> None:
    said = SearchQuery(category="tent", text="aluminium poles for my festival trip 12")
    left = vocabulary.leftover(vocabulary.ground(said))
    # "aluminium" is a value: its constraint checks it; "poles" names that option
    assert left == Leftover(known=[], unknown=["festival", "trip", "12"], unplaced=[], graded=[])
    # the same words with no constraint placed: "poles" asks for something no one checked
    assert vocabulary.leftover(said).unplaced == ["poles"]
    query = SearchQuery(category="tent", text="smoke")  # a goggles tint, said of a tent
    assert vocabulary.leftover(query) == Leftover(["smoke"], [], [], [])
    two_person = TENT.variants[0]
    assert vocabulary.lacks(["smoke"], TENT, two_person) == ["smoke"]
    assert vocabulary.lacks(["outdoors", "dome"], TENT, two_person) == []


def test_a_category_is_placed_on_the_kinds_the_catalog_has(
    vocabulary: CatalogVocabulary,
) -> None:
    assert vocabulary.ground(SearchQuery(category="camping tent")).category == "tent"
    assert vocabulary.ground(SearchQuery(category="lanturn")).category == "lantern"
    assert vocabulary.ground(SearchQuery(category="kayak")).category == "kayak"


def test_a_word_that_tells_a_value_apart_and_a_bare_amount_mean_that_value() -> None:
    bottles = _product(
        "bottle",
        "Water Bottle",
        {"material": "stainless steel", "capacity": "750ml"},
        {"material": "carbon steel", "capacity": "1000ml"},
        {"material": "glass", "capacity": "1000ml"},
    )
    vocabulary = CatalogVocabulary([bottles, TENT])
    grounded = vocabulary.ground(SearchQuery(category="bottle", text="stainless 750"))
    assert grounded.options == {"material": ["stainless steel"], "capacity": ["750ml"]}
    # "steel" is in two values: it tells neither apart
    assert vocabulary.ground(SearchQuery(category="bottle", text="steel")).options == {}
    # a bare number two options could mean is placed nowhere
    assert vocabulary.ground(SearchQuery(text="2")).options == {}


def test_a_trade_name_of_a_values_word_means_that_value_and_checks_it() -> None:
    reader = _product(
        "reader",
        "E-Reader",
        {"connectivity": "Wi-Fi", "screen size": "6-inch"},
        {"connectivity": "Wi-Fi + Cellular", "screen size": "6-inch"},
    )
    vocabulary = CatalogVocabulary([reader, TENT])
    grounded = vocabulary.ground(SearchQuery(category="e-reader", text="with 4g"))
    assert grounded.options == {"connectivity": ["Wi-Fi + Cellular"]}
    assert vocabulary.held("4g", grounded) and not vocabulary.held("4g", SearchQuery())
    assert "4g" not in vocabulary.leftover(grounded).unknown
    # A number nothing took stays unchecked.
    assert "5000" in vocabulary.leftover(SearchQuery(category="e-reader", text="5000")).unknown


def test_a_follow_up_the_inner_reads_as_new_refines_the_search_before_it() -> None:
    def forgetful(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return parse(request)  # reads every turn as a new search

    grounded = GroundedUnderstander(forgetful, CatalogVocabulary(CATALOG))
    earlier = ["dome tent for 4 people"]
    refined = grounded("under 150, aluminium", context=earlier)
    assert refined.category == "tent"
    assert refined.options == {"sleeps": ["4 people"], "pole material": ["aluminium"]}
    assert refined.price is not None and refined.price.max == 150
    # A kind the catalog does not know, or one of its own, is a new search.
    assert grounded("a sleeping bag", context=earlier).category != "tent"
    assert grounded("ski goggles", context=earlier).category == "goggles"


def test_a_value_replaced_by_a_follow_up_takes_its_words_from_the_search() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    shown = SearchQuery(category="lantern", text="bright solar", options={"power": ["solar"]})
    refined = grounded.refine("usb-c instead", shown)
    assert refined.options == {"power": ["USB-C"]}
    assert "solar" not in refined.text.split() and "bright" in refined.text.split()


def test_only_the_head_of_a_title_names_a_kind_in_free_text() -> None:
    bottle = _product("bottle", "Water Bottle", {"capacity": "750ml"})
    kettle = _product("kettle", "Tea Kettle", {"capacity": "1 liter"})
    vocabulary = CatalogVocabulary([bottle, kettle])
    # "water" and "tea" describe a use here, not a bottle or a kettle
    assert vocabulary.ground(SearchQuery(text="something to boil water for tea")).category is None
    assert vocabulary.ground(SearchQuery(text="a kettel for tea")).category == "kettle"


def test_a_unit_as_people_say_it_is_the_catalogs() -> None:
    laptop = _product("laptop", "Laptop", {"ram": "16GB"}, {"ram": "32GB"})
    vocabulary = CatalogVocabulary([laptop])
    grounded = vocabulary.ground(SearchQuery(category="laptop", text="16 gigs of ram"))
    assert grounded.options == {"ram": ["16GB"]}
    assert vocabulary.leftover(grounded) == Leftover([], [], [], [])


def test_a_letter_size_is_said_in_words() -> None:
    helmet = _product("helmet", "Cycling Helmet", {"size": "S"}, {"size": "L"})
    vocabulary = CatalogVocabulary([helmet])
    grounded = vocabulary.ground(SearchQuery(category="helmet", text="for my son, he's a small"))
    assert grounded.options == {"size": ["S"]}


def test_any_of_an_option_lets_go_of_it() -> None:
    shelf = _product("shelf", "Bookshelf", {"height": "5 ft", "color": "white"})

    def merging(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        said = {"color": ["white"]}
        return SearchQuery(
            category="bookshelf", options={"height": ["6 ft"], **said} if context else said
        )

    grounded = GroundedUnderstander(merging, CatalogVocabulary([shelf]))
    again = grounded("white at any height then", context=["a 6 ft bookshelf"])
    assert again.options == {"color": ["white"]}
    assert grounded("white", context=["a 6 ft bookshelf"]).options["height"] == ["6 ft"]


def test_a_long_message_is_read_for_the_sentences_that_ask_for_something(
    vocabulary: CatalogVocabulary,
) -> None:
    story = (
        "So we finally booked the festival for August, my sister is coming too. "
        "It was a long drive last year and the weather was awful! "
        "We need a dome tent for 4 people; aluminium poles if possible. "
        "Budget is under 300 dollars.\n"
        "Anyway, thanks for reading all this."
    )
    assert vocabulary.need(story) == (
        "We need a dome tent for 4 people; aluminium poles if possible. "
        "Budget is under 300 dollars."
    )
    assert vocabulary.need("just chatting, nothing to buy") == "just chatting, nothing to buy"
    # Of a sentence that asks, only its clauses that do: the story around them is left out.
    chatty = (
        "My brother kept the old one after the divorce, and I need a dome tent for 4 people. "
        "The last one leaked all night, so aluminium poles this time, because fibreglass snapped."
    )
    assert vocabulary.need(chatty) == (
        "and I need a dome tent for 4 people. so aluminium poles this time, because fibreglass "
        "snapped."
    )


def test_of_two_kinds_named_the_one_asked_for_last_is_the_request(
    vocabulary: CatalogVocabulary,
) -> None:
    spilled = "sorry, my dog chewed the lantern. looking for a tent, 2 people"
    assert vocabulary.asked_kind(spilled) == "looking for a tent, 2 people"
    fed_up = "if you show me one more lantern i will scream. i want a tent. solar? no. 4 people."
    assert vocabulary.asked_kind(fed_up) == "i want a tent. solar? no. 4 people."
    # One kind, or no sentence that asks: nothing is left out.
    assert vocabulary.asked_kind("a tent. for 4 people.") == "a tent. for 4 people."
    assert vocabulary.asked_kind("the lantern broke. the tent too.") == (
        "the lantern broke. the tent too."
    )


def test_the_opposite_of_a_less_value_excludes_it() -> None:
    vacuum = _product(
        "vacuum", "Vacuum Cleaner", {"features": "cordless"}, {"features": "pet hair removal"}
    )
    vocabulary = CatalogVocabulary([vacuum])
    grounded = vocabulary.ground(SearchQuery(category="vacuum", text="a corded one"))
    assert grounded.exclude == [Exclusion(field="features", value="cordless")]
    assert vocabulary.ground(SearchQuery(category="vacuum", text="cordless")).exclude == []


def test_chat_around_a_refinement_does_not_make_it_a_new_search() -> None:
    def forgetful(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return parse(request)

    grounded = GroundedUnderstander(forgetful, CatalogVocabulary(CATALOG))
    refined = grounded("ugh, typo, i meant under 150", context=["dome tent for 4 people"])
    assert refined.category == "tent" and refined.price is not None
    assert refined.price.max == 150


@pytest.mark.parametrize(
    ("request_text", "values"),
    [
        ("lantern, at least 400 lumens", ["600 lumens"]),
        ("a lantern of 300 lumens or more", ["300 lumens", "600 lumens"]),
        ("lantern, höchstens 300 lumens", ["300 lumens"]),
        ("a lantern, 400 lumens at least", ["600 lumens"]),
    ],
)
def test_a_bounded_amount_is_every_value_within_the_bound(
    request_text: str, values: list[str]
) -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    query = grounded(request_text)
    assert query.options["brightness"] == values
    assert query.price is None  # "at least 400" was no price


def test_amounts_compare_across_the_ways_they_are_written() -> None:
    assert amount("1.5 liters") == ("ml", 1500.0) and amount("2L") == ("ml", 2000.0)
    assert amount("1TB") == ("gb", 1000.0) and amount("25ft") == ("inch", 300.0)
    assert amount("i7") is None and amount("IPX7") is None and amount("waterproof") is None


def test_the_adjective_of_a_quality_is_a_requirement_nothing_checked() -> None:
    mat = _product("mat", "Yoga Mat", {"thickness": "4mm"}, {"thickness": "6mm"})
    vocabulary = CatalogVocabulary([mat])
    left = vocabulary.leftover(SearchQuery(category="mat", text="the thick kind"))
    assert left.graded == ["thick"] and left.unplaced == ["thick"]
    named = vocabulary.leftover(SearchQuery(category="mat", text="any thickness"))
    assert named.graded == []


def test_a_follow_up_refines_the_query_on_screen_and_keeps_what_its_turn_settled() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    shown = grounded("a lantern with at least 400 lumens")
    assert shown.options == {"brightness": ["600 lumens"]} and shown.price is None
    earlier = ["a lantern with at least 400 lumens"]
    # Read again from the earlier words, "at least 400" would be a price from 400.
    refined = grounded.refine("solar ones, in stock", shown, context=earlier)
    assert refined.category == shown.category
    assert refined.options == {"brightness": ["600 lumens"], "power": ["solar"]}
    assert refined.price is None and refined.available_only


def test_a_follow_ups_own_words_replace_exclude_or_let_go_of_what_was_shown() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    shown = SearchQuery(
        category="tent",
        options={"sleeps": ["4 people"], "pole material": ["fibreglass"]},
        exclude=[Exclusion(field="pack size", value="2.5 liters")],
    )
    # Read among tents: a bare "2 people" is what a tent sleeps.
    two = grounded.refine("2 people then", shown)
    assert two.options == {"sleeps": ["2 people"], "pole material": ["fibreglass"]}
    assert not grounded.refine("not fibreglass", shown).options.get("pole material")
    back = grounded.refine("2.5 liters is fine after all", shown)
    assert back.exclude == [] and back.options["pack size"] == ["2.5 liters"]
    assert "pole material" not in grounded.refine("any pole material", shown).options
    # "just ... then": of that kind, only what this turn says.
    just = grounded.refine("ok just 2 people then", shown)
    assert (just.category, just.options) == ("tent", {"sleeps": ["2 people"]})
    # So after no exact match: "2 people anything then", "what has 2 people then", "any 2
    # people one then"; not a turn that names no option ("any cheaper ones then").
    for only in (
        "2 people anything then",
        "what has 2 people then",
        "any 2 people one then",
        "ok whats in stock in 2 people",
    ):
        refined = grounded.refine(only, shown)
        assert (refined.category, refined.options) == ("tent", {"sleeps": ["2 people"]}), only
    assert grounded.refine("any cheaper ones then", shown).options == shown.options


@pytest.mark.parametrize(
    "request_text",
    [
        "forget the fibreglass thing",
        "pole material doesn't matter",
        "any pole material",
        "egal welches Material",  # glossed: "egal welches material"
        "peu importe le material",
        "el material me da igual",
        "doesn't have to be fibreglass",
        "no need for fibreglass",
    ],
)
def test_a_turn_that_only_lets_go_of_an_option_refines_the_search_without_it(
    request_text: str,
) -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    shown = SearchQuery(
        category="tent", options={"sleeps": ["4 people"], "pole material": ["fibreglass"]}
    )
    refined = grounded.refine(request_text, shown)
    assert refined.category == "tent" and refined.options == {"sleeps": ["4 people"]}


def test_letting_go_of_an_option_lets_go_of_its_exclusions_and_words_too() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    shown = SearchQuery(
        text="tent fibreglass",
        category="tent",
        options={"sleeps": ["4 people"]},
        exclude=[Exclusion(field="pole material", value="aluminium")],
    )
    refined = grounded.refine("pole material doesn't matter", shown)
    assert refined.exclude == [] and refined.options == {"sleeps": ["4 people"]}
    unworded = grounded.refine("doesn't have to be fibreglass", shown)
    assert "fibreglass" not in unworded.text.split()


def test_letting_go_of_an_option_by_another_word_for_it_lets_go_of_its_value_and_words() -> None:
    watches = _product("watch", "Smart Watch", {"display": "AMOLED"}, {"display": "LCD"})
    grounded = GroundedUnderstander(parse, CatalogVocabulary([watches, TENT]))
    shown = SearchQuery(text="amoled", category="smart watch", options={"display": ["AMOLED"]})
    refined = grounded.refine("whatever screen then", shown)
    assert refined.options == {} and "amoled" not in refined.text.split()


def test_a_value_read_under_another_name_is_found_by_its_other_words() -> None:
    vacuum = _product(
        "vac", "Vacuum Cleaner", {"features": "cordless"}, {"features": "HEPA filter"}
    )
    suitcase = _product("case", "Luggage Set", {"material": "hardshell"}, {"material": "softshell"})
    vocabulary = CatalogVocabulary([vacuum, suitcase])
    # The word lists read "cordless" as wireless connectivity; these vacuums say "cordless".
    cordless = vocabulary.ground(parse("cordless vacuum cleaner"))
    assert cordless.options == {"features": ["cordless"]}
    # Two words the catalog writes as one: "hard shell" is hardshell, and nothing is left over.
    hard = vocabulary.ground(parse("a hard shell luggage set"))
    assert hard.options == {"material": ["hardshell"]}
    assert vocabulary.leftover(hard) == Leftover([], [], [], [])


def test_a_follow_up_is_read_among_the_kind_on_screen_and_keeps_what_was_settled() -> None:
    boots = _product(
        "boots",
        "Hiking Boots",
        {"size": "10", "waterproof": "yes"},
        {"size": "10", "waterproof": "no"},
        {"size": "12", "waterproof": "yes"},
    )
    speakers = [
        _product(f"spk{n}", "Speaker", {"features": "waterproof"}, {"features": "none"})
        for n in range(2)
    ]
    grounded = GroundedUnderstander(parse, CatalogVocabulary([boots, *speakers]))
    shown = SearchQuery(category="hiking boots", options={"size": ["10"]})
    # Read alone, "waterproof" is the speakers' feature, which no boot has; among boots it is
    # their option, and size 10 stays.
    refined = grounded.refine("which of those are waterproof", shown, context=["size 10 boots"])
    assert refined.category == "hiking boots"
    assert refined.options == {"size": ["10"], "waterproof": ["yes"]}


def test_a_word_naming_another_kind_beside_a_value_of_this_one_is_the_shoppers_story() -> None:
    purifier = _product(
        "air", "Air Purifier", {"features": "quiet operation"}, {"features": "night mode"}
    )
    bulb = _product("bulb", "LED Light Bulb", {"color temperature": "warm white"})
    grounded = GroundedUnderstander(parse, CatalogVocabulary([purifier, bulb]))
    shown = SearchQuery(category="air purifier")
    quiet = grounded.refine("it has to be quiet, i'm a super light sleeper", shown)
    assert quiet.category == "air purifier" and quiet.options == {"features": ["quiet operation"]}
    # With nothing of theirs said, the other kind's word is another search.
    assert grounded.refine("a light please", shown).category != "air purifier"


def test_a_count_and_a_maker_are_read_as_the_catalog_writes_them() -> None:
    puzzle = _product("jig", "Jigsaw Puzzle", {"pieces": "1000"}, {"pieces": "500"})
    thermostat = _product(
        "therm",
        "Smart Thermostat",
        {"compatibility": "Google Assistant"},
        {"compatibility": "Amazon Alexa"},
    )
    vocabulary = CatalogVocabulary([puzzle, thermostat])
    # "1000 pieces" under an option named "pieces" whose values are bare counts
    assert vocabulary.ground(parse("1000 piece puzzle")).options == {"pieces": ["1000"]}
    # A maker no product is by, but a value the thermostats have
    google = vocabulary.ground(parse("a smart thermostat that works with google"))
    assert google.brand is None and google.options == {"compatibility": ["Google Assistant"]}


def test_a_follow_up_for_another_kind_is_a_new_search_and_a_kind_answers_which_kind() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    tents = SearchQuery(category="tent", options={"sleeps": ["4 people"]})
    goggles = grounded.refine("ski goggles", tents)
    assert goggles.category == "goggles" and goggles.options == {}
    # After "which kind do you mean?" (no kind shown), naming the kind keeps the rest.
    which = SearchQuery(options={"sleeps": ["4 people"]})
    assert grounded.refine("the dome tent", which).options == {"sleeps": ["4 people"]}


def test_a_value_only_another_kind_offers_is_no_refinement_of_the_kind_shown(
    vocabulary: CatalogVocabulary,
) -> None:
    power = SearchQuery(options={"power": ["solar"]})
    assert vocabulary.fits(power, "lantern") and vocabulary.refines(power, "lantern")
    # "tint" is an option of goggles only; "amber" among lanterns names nothing they have.
    assert not vocabulary.fits(SearchQuery(options={"lens tint": ["amber"]}), "lantern")
    # The same option name, a value the kind shown does not offer: a search for another kind.
    other = SearchQuery(options={"pack size": ["9 liters"]})
    assert not vocabulary.fits(other, "tent") and not vocabulary.refines(other, "tent")
    assert vocabulary.kinds_offering({"power": ["solar"]}) == {"Camping Lantern"}
    assert vocabulary.kinds_offering({"power": ["solar"], "sleeps": ["2 people"]}) == set()


def test_a_searcher_refines_only_through_an_understander_that_can() -> None:
    vocabulary = CatalogVocabulary(CATALOG)
    shown = SearchQuery(category="tent", options={"sleeps": ["4 people"]})
    index = LexicalIndex.build(CATALOG)
    grounded = Searcher(index, GroundedUnderstander(parse, vocabulary), vocabulary=vocabulary)
    assert grounded.understand_turn("aluminium", shown=shown).options == {
        "sleeps": ["4 people"],
        "pole material": ["aluminium"],
    }
    plain = Searcher(index, parse)
    assert plain.understand_turn("aluminium", shown=shown) == parse("aluminium")


def test_a_word_whose_measure_is_an_option_asks_for_its_highest_value() -> None:
    mats = [
        _product("mat1", "Yoga Mat", {"thickness": "4mm", "color": "blue"}),
        _product("mat2", "Yoga Mat", {"thickness": "6mm", "color": "pink"}),
        _product("mat3", "Yoga Mat", {"thickness": "6mm", "color": "green"}),
    ]
    vocabulary = CatalogVocabulary([*mats, LANTERN])
    thick = vocabulary.ground(SearchQuery(category="yoga mat", text="the thick kind"))
    assert thick.options == {"thickness": ["6mm"]}
    said = vocabulary.ground(
        SearchQuery(category="yoga mat", text="thick", options={"thickness": ["4mm"]})
    )
    assert said.options == {"thickness": ["4mm"]}  # a value said outright wins
    # Of no kind (every product), or of a kind without the measure: nothing is chosen.
    assert vocabulary.ground(SearchQuery(text="thick")).options == {}
    assert vocabulary.ground(SearchQuery(category="lantern", text="thick")).options == {}


def test_non_a_yes_no_option_rules_it_out_and_an_unknown_word_rules_out_nothing() -> None:
    boots = _product(
        "boots",
        "Hiking Boots",
        {"waterproof": "yes", "size": "11"},
        {"waterproof": "no", "size": "11"},
    )
    vocabulary = CatalogVocabulary([boots, LANTERN])
    grounded = vocabulary.ground(
        SearchQuery(
            category="hiking boots",
            text="non-waterproof",
            exclude=[Exclusion(value="sense")],  # "that made no sense"
        )
    )
    assert grounded.exclude == [Exclusion(field="waterproof", value="yes")]
    left = vocabulary.leftover(grounded)
    assert "non-waterproof" not in left.unknown  # the exclusion checks it
    # An option's own name ruled out is kept: it rules something out.
    said = vocabulary.ground(
        SearchQuery(category="hiking boots", exclude=[Exclusion(value="waterproof")])
    )
    assert said.exclude == [Exclusion(field="waterproof", value="yes")]


def test_a_short_typo_is_a_value_of_the_kind_with_one_letter_dropped() -> None:
    shades = _product("shades", "Sunglasses", {"frame color": "brown"}, {"frame color": "black"})
    weights = _product("weights", "Dumbbell Set", {"weight range": "30-50 lbs"})
    vocabulary = CatalogVocabulary([shades, weights, TENT])
    typo = vocabulary.ground(SearchQuery(category="sunglasses", text="brwn frame"))
    assert typo.options == {"frame color": ["brown"]}
    assert typo.text == "frame"  # the misspelt word is not said back beside its correction
    # Not without a kind (too many short words are one letter from a value), nor a first
    # letter changed.
    assert vocabulary.ground(SearchQuery(text="brwn")).options == {}
    assert vocabulary.ground(SearchQuery(category="sunglasses", text="rown")).options == {}
    # A range's unit, however it is written.
    ranged = vocabulary.ground(
        SearchQuery(category="dumbbell set", options={"weight": ["30-50 lb"]})
    )
    assert ranged.options == {"weight range": ["30-50 lbs"]}


def test_an_exclusion_of_an_option_the_kind_lacks_beside_one_it_has_still_refines() -> None:
    keyboards = _product(
        "kb", "Mechanical Keyboard", {"backlight": "RGB", "size": "80%"},
        {"backlight": "white", "size": "80%"},
    )  # fmt: skip
    kits = _product("kit", "Makeup Kit", {"skin tone": "light"}, {"skin tone": "dark"})
    shirts = _product("tee", "T-Shirt", {"color": "multicolor"}, {"color": "red"})
    bulbs = _product("bulb", "LED Light Bulb", {"color temperature": "warm white"})
    catalog = [keyboards, kits, shirts, bulbs]
    grounded = GroundedUnderstander(parse, CatalogVocabulary(catalog))
    shown = SearchQuery(category="mechanical keyboard", options={"size": ["80%"]})
    refined = grounded.refine(
        "no RGB stuff, i hate rainbow lighting", shown, context=["80% mechanical keyboard"]
    )
    assert refined.category == "mechanical keyboard"
    assert refined.options == {"size": ["80%"]}  # no makeup kit's skin tone from "lighting"
    assert {(e.field, e.value) for e in refined.exclude} >= {("backlight", "RGB")}


def test_a_measure_in_another_unit_is_the_catalogs_value_as_it_rounds_it() -> None:
    clocks = _product("clock", "Wall Clock", {"diameter": "14 inches"}, {"diameter": "10 inches"})
    vocabulary = CatalogVocabulary([clocks, TENT])
    about = vocabulary.ground(parse("wall clock, about 35 cm across"))
    assert about.price is None  # a measure, not a price
    assert about.options == {"diameter": ["14 inches"]}  # 35.6 cm
    # Nothing within 3%: left as it was said.
    assert vocabulary.ground(parse("wall clock 30 cm")).options == {"length": ["30 cm"]}


def test_a_bound_with_no_unit_is_read_on_the_values_holding_the_word_after_it() -> None:
    laptops = _product(
        "laptop", "Laptop", {"storage": "256GB SSD"}, {"storage": "512GB SSD"},
        {"storage": "1TB SSD"},
    )  # fmt: skip
    grounded = GroundedUnderstander(parse, CatalogVocabulary([laptops, TENT]))
    query = grounded("laptop, at least a 512 ssd")
    assert sorted(query.options["storage"]) == ["1TB SSD", "512GB SSD"]
    assert query.price is None


def test_an_amount_filed_by_its_unit_is_the_option_of_the_kind_that_has_it() -> None:
    laptop = _product(
        "lap",
        "Laptop",
        {"ram": "16GB", "storage": "512GB SSD"},
        {"ram": "32GB", "storage": "1TB SSD"},
    )
    tablet = _product("tab", "Tablet", {"storage": "32GB"}, {"storage": "64GB"})
    grounded = GroundedUnderstander(parse, CatalogVocabulary([laptop, tablet]))
    shown = SearchQuery(category="laptop", options={"ram": ["16GB"]})
    # The parser files a bare "32 GB" as storage; a laptop's 32GB is its RAM, which replaces 16GB.
    refined = grounded.refine("und mit 32 GB?", shown)
    assert refined.category == "laptop" and refined.options == {"ram": ["32GB"]}
    # A tablet's 32GB is its storage.
    assert grounded("a 32 GB tablet").options == {"storage": ["32GB"]}


def test_a_step_from_the_amount_on_screen_is_every_value_past_it() -> None:
    charger = _product(
        "chg",
        "Power Bank",
        {"capacity": "5000mAh", "output": "wireless"},
        {"capacity": "10000mAh", "output": "wireless"},
        {"capacity": "20000mAh", "output": "USB-C"},
    )
    grounded = GroundedUnderstander(parse, CatalogVocabulary([charger, TENT]))
    shown = SearchQuery(
        category="power bank", options={"capacity": ["5000mAh"], "output": ["wireless"]}
    )
    bigger = grounded.refine("bigger capacity is fine", shown)
    assert bigger.category == "power bank"
    assert bigger.options == {"capacity": ["10000mAh", "20000mAh"], "output": ["wireless"]}
    big = SearchQuery(category="power bank", options={"capacity": ["20000mAh"]})
    assert grounded.refine("a smaller capacity", big).options == {
        "capacity": ["5000mAh", "10000mAh"]
    }
    # Past the largest there is nothing to step to, and an option not on screen is no step.
    assert grounded.refine("bigger capacity", big).options.get("capacity") in (None, ["20000mAh"])
    assert grounded.refine("more output", shown).options.get("output") in (None, ["wireless"])


def test_an_english_word_is_never_read_as_a_typo_of_a_value() -> None:
    boots = _product("boots", "Hiking Boots", {"color": "brown"}, {"color": "black"})
    vocabulary = CatalogVocabulary([boots])
    assert vocabulary.terms("browm", ["boots"]) != []
    assert vocabulary.terms("blown", ["boots"]) == []


def test_a_common_word_of_the_turns_language_is_no_kind_the_store_does_not_sell() -> None:
    vocabulary = CatalogVocabulary(CATALOG)
    german = frozenset({"hat", "mich", "ein", "tent"})
    said = "Meine Freundin hat mich mitgeschleppt, ein Dome Tent bitte"
    # German "hat" (has) would be read as a hat, which this store does not sell; "tent" is
    # a kind it sells, so it stays even where it is a common word.
    assert parse(said).category == "hat"
    assert vocabulary.without_unsold_kinds(said, german) == (
        "Meine Freundin mich mitgeschleppt, ein Dome Tent bitte"
    )
    assert vocabulary.without_unsold_kinds(said, frozenset()) == said


def test_an_option_named_beside_one_of_its_values_is_that_value() -> None:
    keyboard = _product(
        "kb",
        "Mechanical Keyboard",
        {"backlight": "RGB", "size": "full size"},
        {"backlight": "white", "size": "full size"},
        {"backlight": "none", "size": "60%"},
    )
    vocabulary = CatalogVocabulary([keyboard])
    # "backlight" alone is any backlight; beside "RGB" (or "white", which the parser reads as
    # a colour) it is that one.
    assert vocabulary.ground(parse("a keyboard with backlight")).options == {
        "backlight": ["RGB", "white"]
    }
    assert vocabulary.ground(parse("a keyboard with RGB backlight")).options == {
        "backlight": ["RGB"]
    }
    assert vocabulary.ground(parse("white backlight is fine, a keyboard")).options == {
        "backlight": ["white"]
    }


def test_after_which_kind_more_of_what_is_wanted_adds_to_what_was_said() -> None:
    grounded = GroundedUnderstander(parse, CatalogVocabulary(CATALOG))
    # No kind on screen ("which kind do you mean?"), in stock asked for.
    shown = SearchQuery(options={"power": ["USB-C"]}, available_only=True)
    more = grounded.refine("fine, 600 lumens then", shown)
    assert more.available_only and more.options == {
        "power": ["USB-C"],
        "brightness": ["600 lumens"],
    }
    # A kind named is a search for it, with what was said.
    assert grounded.refine("a camping lantern", shown).category == "lantern"


def test_a_department_named_alone_is_the_kinds_filed_under_it() -> None:
    def filed(pid: str, title: str, *path: str) -> Product:
        return Product(
            id=pid,
            title=title,
            category=path,
            variants=(Variant(id=f"{pid}-1", price=Decimal(10), options={"color": "red"}),),
        )

    products = [
        filed("cm", "Coffee Maker", "Home & Kitchen", "Kitchen Appliances", "Coffee Makers"),
        filed("ek", "Electric Kettle", "Home & Kitchen", "Kitchen Appliances", "Kettles"),
        filed("wc", "Wall Clock", "Home & Kitchen", "Home Decor", "Clocks"),
        filed("th", "Thermostat", "Electronics", "Smart Home", "Thermostats"),
        filed("pb", "Pet Bed", "Pet Supplies", "Beds", "Pet Beds"),
    ]
    grounded = GroundedUnderstander(parse, CatalogVocabulary(products))
    kitchen = grounded("whatever you've got for the kitchen")
    assert kitchen.category == "kitchen appliances"
    assert grounded.vocabulary.products_of(kitchen.category) == {"cm", "ek"}
    assert grounded("what do you have for pets").category == "pet supplies"
    # "home" is a word of departments on two paths: no one of them is meant.
    assert grounded("something for my home").category is None


def test_a_question_another_sentence_answers_is_not_what_is_wanted() -> None:
    maker = _product(
        "cm", "Coffee Maker", {"type": "espresso", "features": "timer"}, {"type": "drip"}
    )
    grounded = GroundedUnderstander(parse, CatalogVocabulary([maker, TENT]))
    shown = SearchQuery(category="coffee maker", options={"features": ["timer"]})
    drip = grounded.refine("wait are those espresso ones? i want normal drip coffee", shown)
    assert drip.options == {"features": ["timer"], "type": ["drip"]}
    # A question alone is still read ("are those espresso ones?").
    assert grounded.vocabulary.answered("are those espresso ones?") == "are those espresso ones?"


def test_the_most_of_an_option_asked_is_its_largest_value() -> None:
    tablet = _product(
        "tab",
        "Tablet",
        {"screen size": "8-inch", "color": "silver"},
        {"screen size": "10-inch", "color": "gold"},
    )
    grounded = GroundedUnderstander(parse, CatalogVocabulary([tablet, TENT]))
    for said in ("a tablet, the bigger the screen the better", "tablet with the largest screen"):
        assert grounded(said).options == {"screen size": ["10-inch"]}, said
    # In a long message, the clause that asks for it is part of the need.
    story = (
        "umm hi so like... i guess i'm looking for, like, a tablet? it's for my grandma, she's "
        "82 so, you know, the bigger the screen the better i think. she only does video calls."
    )
    assert "the bigger the screen the better" in grounded.vocabulary.need(story)


def test_an_adverb_in_ally_asks_nothing() -> None:
    assert asks_nothing("basically") and asks_nothing("Literally") and not asks_nothing("basic")


def test_a_value_word_of_the_option_asked_for_asks_nothing_more() -> None:
    umbrella = _product(
        "umb", "Patio Umbrella", {"material": "sunbrella"}, {"material": "polyester"}
    )
    chair = _product("chair", "Office Chair", {"material": "fabric"}, {"material": "mesh"})
    vocabulary = CatalogVocabulary([umbrella, chair])
    # "fabric" is only ever a material: beside the material asked for, it is checked by it.
    asked = SearchQuery(
        text="sunbrella fabric", category="patio umbrella", options={"material": ["sunbrella"]}
    )
    assert vocabulary.leftover(asked).known == []
    # Without a material asked for, it is a word the umbrellas lack.
    bare = SearchQuery(text="fabric", category="patio umbrella")
    assert vocabulary.leftover(bare).known == ["fabric"]


def test_an_options_other_name_beside_its_value_is_placed() -> None:
    watch = _product("w", "Smart Watch", {"display": "AMOLED"}, {"display": "LCD"})
    tablet = _product("t", "Tablet", {"screen size": "8-inch"}, {"screen size": "10-inch"})
    vocabulary = CatalogVocabulary([watch, tablet])
    # "screen" (of "pantalla AMOLED") is what shoppers call the display asked for.
    asked = SearchQuery(text="screen", category="smart watch", options={"display": ["AMOLED"]})
    assert vocabulary.leftover(asked).unplaced == []
    assert vocabulary.leftover(SearchQuery(text="screen", category="smart watch")).unplaced == [
        "screen"
    ]


@pytest.mark.parametrize(
    ("words", "request_text", "backs"),
    [
        ("she's into", "she's really into puzzles", False),  # nothing the catalog has
        ("ok then", "ok then", False),  # chat
        ("", "a lantern", False),
        ("solar", "a solar one", True),  # a value the catalog has
        ("solr", "a solr one", True),  # a typo of one
        ("fibreglas", "fibreglas poles", True),
        ("brwn", "a brwn tent", True),  # a typo of a listed colour
        ("32", "bump it to 32", True),  # a number may be a price or a size
        ("Fjallraven", "a Fjallraven tent", True),  # written as a name: a maker
        ("fjallraven", "a fjallraven tent", False),  # not so written, and not a listed one
        ("cheapest", "which is the cheapest", True),  # a cue
    ],
)
def test_a_leftover_word_could_back_a_value_only_if_the_catalog_or_the_lists_know_it(
    words: str, request_text: str, backs: bool
) -> None:
    assert CatalogVocabulary(CATALOG).could_back(words, request_text) is backs


def test_a_rules_first_model_is_not_asked_where_no_word_left_could_back_a_value() -> None:
    from cartagent.llm import Message
    from cartagent.retrieval.understanding import ModelUnderstander
    from cartagent.testing import ScriptedModel

    model = ScriptedModel([Message("assistant", "* | power:solar")] * 2)
    with ModelUnderstander(model, style="patch", rules_first=True) as inner:
        assert inner.fills_gaps_of is parse
        grounded = GroundedUnderstander(inner, CatalogVocabulary(CATALOG), check=parse)
        story = "my daughter is really into stargazing"
        assert grounded(story) == grounded.vocabulary.ground(parse(story))
        assert model.calls == []  # "daughter", "stargazing": nothing a product here could be
        assert grounded("one that runs on solar").options == {"power": ["solar"]}
        assert len(model.calls) == 1
    whole = ModelUnderstander(model, style="full")  # reads the request itself: always asked
    assert whole.fills_gaps_of is None
    GroundedUnderstander(whole, CatalogVocabulary(CATALOG), check=parse)(story)
    assert len(model.calls) == 2


def test_each_request_is_read_once_in_the_same_context(monkeypatch: pytest.MonkeyPatch) -> None:
    from cartagent.retrieval import catalog_vocabulary

    asked: list[tuple[str, tuple[str, ...]]] = []

    def counting(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        asked.append((request, tuple(context)))
        return parse(request, context=context)

    grounded = GroundedUnderstander(counting, CatalogVocabulary(CATALOG))
    # A follow-up with nothing before it but the search on screen is read alone, then "with the
    # earlier requests" (none): one question.
    grounded.refine("the solar ones", SearchQuery(text="lantern"))
    assert asked == [("the solar ones", ())]
    grounded("the solar ones")
    grounded("the solar ones", context=["a lantern"])  # another context: read again
    assert asked[1:] == [("the solar ones", ("a lantern",))]
    monkeypatch.setattr(catalog_vocabulary, "_READINGS_KEPT", 2)
    grounded("a tent")
    grounded("ski goggles")  # the oldest reading is let go
    grounded("the solar ones")
    assert asked[-1] == ("the solar ones", ())
