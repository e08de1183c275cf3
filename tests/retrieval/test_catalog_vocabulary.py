"""The catalog's vocabulary: a query placed on the options and values a catalog really has.

The store here is invented for these tests (not the demo store): what is learnt comes from its
products, with no word list written for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from cartagent.catalog import Product, Variant
from cartagent.retrieval.catalog_vocabulary import CatalogVocabulary, GroundedUnderstander
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
