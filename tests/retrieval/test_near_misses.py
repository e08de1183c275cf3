"""Near misses: when nothing matches, the nearest products and what each breaks."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.catalog import Product, Variant
from cartagent.retrieval.filters import Hit, Words, analyzer
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.near_misses import relaxations, what_it_breaks
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery
from cartagent.retrieval.rules import parse
from cartagent.retrieval.search import Searcher

SHIRT = Product(
    id="shirt",
    title="T-Shirt",
    category=("Clothing", "T-Shirts"),
    rating=3.9,
    variants=(
        Variant(
            id="blue-m",
            price=Decimal("50.88"),
            options={"color": "blue", "size": "M", "material": "cotton"},
        ),
        Variant(
            id="red-l",
            price=Decimal("30.00"),
            available=False,
            options={"color": "red", "size": "L", "material": "polyester"},
        ),
    ),
)
MUG = Product(id="mug", title="Coffee Mug", variants=(Variant(id="mug-1", price=Decimal("9")),))


@pytest.fixture
def searcher() -> Searcher:
    return Searcher(LexicalIndex.build([SHIRT, MUG]), understand=parse)


def test_the_issues_example_says_how_far_over_the_limit_it_is(searcher: Searcher) -> None:
    result = searcher.search("a blue t-shirt under $50, not polyester")
    assert result.hits == []
    [near] = result.near_misses
    assert (near.hit.product.id, near.hit.variant and near.hit.variant.id) == ("shirt", "blue-m")
    assert near.breaks == ["0.88 USD over your limit of 50 USD"]
    assert "near_misses" in result.timings


def test_a_search_that_matches_has_no_near_misses(searcher: Searcher) -> None:
    result = searcher.search("blue t-shirt under 60")
    assert [h.product.id for h in result.hits] == ["shirt"] and result.near_misses == []


def test_options_exclusions_rating_and_stock_are_named() -> None:
    words = Words(analyzer())
    query = SearchQuery(
        category="t-shirt",
        options={"color": ["green"]},
        exclude=[Exclusion(field="material", value="cotton")],
        min_rating=4.5,
        available_only=True,
        price=PriceRange(min=Decimal("60"), currency="USD"),
    )
    hit = Hit(product=SHIRT, score=0.0, variant=SHIRT.variants[1])
    assert what_it_breaks(query, hit, words) == [
        "color is not green",
        "rated 3.9, under 4.5 stars",
        "out of stock",
        "30 USD under your minimum of 60 USD",
    ]
    mug = Hit(product=MUG, score=0.0, variant=MUG.variants[0])
    assert what_it_breaks(SearchQuery(category="t-shirt", brand="Acme"), mug, words) == [
        "not a t-shirt",
        "not by Acme",
    ]


def test_a_product_no_single_variant_of_which_fits_says_so() -> None:
    # Blue exists (M) and size L exists (red), but not blue in L.
    query = SearchQuery(options={"color": ["blue"], "size": ["L"]})
    hit = Hit(product=SHIRT, score=0.0)
    assert what_it_breaks(query, hit, Words(analyzer())) == [
        "no single variant has everything asked for"
    ]


def test_relaxing_drops_ever_more_and_never_everything() -> None:
    query = SearchQuery(
        text="shirt",
        category="t-shirt",
        options={"color": ["blue"]},
        exclude=[Exclusion(value="polyester")],
        price=PriceRange(max=Decimal("50")),
    )
    steps = list(relaxations(query))
    assert [s.price for s in steps] == [None] * 4
    assert [bool(s.options) for s in steps] == [True, False, False, False]
    assert [bool(s.exclude) for s in steps] == [True, True, False, False]
    assert steps[-1] == SearchQuery(text="shirt")
    # Without free text, dropping the category would leave nothing: the relaxing stops first.
    assert list(relaxations(SearchQuery(category="wallet", options={"size": ["44"]}))) == [
        SearchQuery(category="wallet")
    ]
    assert list(relaxations(SearchQuery(text="mug"))) == []


def test_nothing_near_when_nothing_is_left_to_relax(searcher: Searcher) -> None:
    assert searcher.search("leather wallet size 44").near_misses == []
