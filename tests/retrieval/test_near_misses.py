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
        attributes={"features": ["noise cancelling"]},
        options={"color": ["green"]},
        exclude=[Exclusion(field="material", value="cotton")],
        min_rating=4.5,
        available_only=True,
        price=PriceRange(min=Decimal("60"), currency="USD"),
    )
    hit = Hit(product=SHIRT, score=0.0, variant=SHIRT.variants[1])
    assert what_it_breaks(query, hit, words) == [
        "without noise cancelling",
        "color is red, not green",
        "rated 3.9, under 4.5 stars",
        "out of stock",
        "30 USD under your minimum of 60 USD",
    ]
    in_euros = SearchQuery(price=PriceRange(max=Decimal("50"), currency="EUR"))
    assert what_it_breaks(in_euros, hit, words) == ["priced in USD, not EUR"]
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
    # The category stops filtering and is searched for as words.
    assert steps[-1] == SearchQuery(text="shirt t-shirt")
    assert list(relaxations(SearchQuery(category="wallet", options={"size": ["44"]}))) == [
        SearchQuery(category="wallet"),
        SearchQuery(text="wallet"),
    ]
    # Free text alone has nothing to relax.
    assert list(relaxations(SearchQuery(text="mug"))) == []


def test_nothing_near_when_nothing_is_left_to_relax(searcher: Searcher) -> None:
    assert searcher.search("leather wallet size 44").near_misses == []


def test_a_dense_neighbour_that_shares_nothing_with_the_request_is_not_near() -> None:
    from cartagent.retrieval.dense import DenseIndex
    from cartagent.testing import HashingEmbedder

    products = [SHIRT, MUG]
    searcher = Searcher(
        LexicalIndex.build(products),
        understand=parse,
        dense=DenseIndex.build(products, HashingEmbedder()),
    )
    # Dense search ranks both products for any words; neither is a wallet or leather.
    assert len(searcher.search_query(SearchQuery(text="wallet"), 10).hits) == 2
    assert searcher.search("leather wallet size 44").near_misses == []


EARBUDS = Product(
    id="earbuds",
    title="Wireless Earbuds",
    category=("Electronics", "Earbuds"),
    variants=(Variant(id="buds-1", price=Decimal("99"), options={"color": "white"}),),
)
HEADPHONES = Product(
    id="headphones",
    title="Headphones",
    category=("Electronics", "Headphones"),
    variants=(
        Variant(id="over-ear", price=Decimal("80"), options={"type": "over-ear"}),
        Variant(
            id="in-ear",
            price=Decimal("120"),
            options={"type": "in-ear", "connectivity": "wireless"},
        ),
    ),
)


def test_too_few_matches_are_followed_by_near_misses_up_to_k() -> None:
    searcher = Searcher(LexicalIndex.build([EARBUDS, HEADPHONES, MUG]), understand=parse)
    query = SearchQuery(text="wireless", category="earbuds", price=PriceRange(max=Decimal("110")))
    result = searcher.search_query(query, 10)
    assert [h.product.id for h in result.hits] == ["earbuds"]
    # The match is not offered again; the mug says nothing of "wireless" and is not near.
    [near] = result.near_misses
    assert near.hit.product.id == "headphones"
    assert near.hit.variant is not None and near.hit.variant.id == "in-ear"
    assert near.breaks == ["not earbuds", "10 USD over your limit of 110 USD"]
    assert "near_misses" in result.timings
    # Only as many as asked for in all: one match and k=1 leaves no room.
    assert searcher.search_query(query, 1).near_misses == []


def test_beside_matches_a_near_miss_is_from_their_department() -> None:
    # A wireless charging mat shares "wireless" but sits in another department.
    mat = Product(
        id="mat",
        title="Charging Mat",
        category=("Home", "Chargers"),
        variants=(Variant(id="mat-1", price=Decimal("20"), options={"connectivity": "wireless"}),),
    )
    searcher = Searcher(LexicalIndex.build([EARBUDS, HEADPHONES, mat]), understand=parse)
    query = SearchQuery(text="wireless", category="earbuds")
    result = searcher.search_query(query, 10)
    assert [h.product.id for h in result.hits] == ["earbuds"]
    assert [n.hit.product.id for n in result.near_misses] == ["headphones"]
    # With no match at all there is no department to keep to.
    alone = Searcher(LexicalIndex.build([HEADPHONES, mat]), understand=parse)
    nearest = alone.search_query(query, 10).near_misses
    assert {n.hit.product.id for n in nearest} == {"headphones", "mat"}


def _two_earbuds_over_budget() -> tuple[Searcher, SearchQuery]:
    """A store of two earbuds and the headphones, and a request none of them matches."""
    dearer_buds = EARBUDS.model_copy(
        update={
            "id": "buds-2",
            "variants": (Variant(id="buds-2", price=Decimal("150"), options={"color": "black"}),),
        }
    )
    searcher = Searcher(LexicalIndex.build([HEADPHONES, dearer_buds, EARBUDS]), understand=parse)
    query = SearchQuery(text="wireless", category="earbuds", price=PriceRange(max=Decimal("50")))
    return searcher, query


def test_near_misses_come_from_the_nearest_relaxation_first() -> None:
    searcher, query = _two_earbuds_over_budget()
    result = searcher.search_query(query, 3)
    assert result.hits == []
    # Both earbuds only break the price (the first relaxation); the headphones break the
    # category too (the last) and come after them.
    ids = [n.hit.product.id for n in result.near_misses]
    assert ids[2] == "headphones" and set(ids[:2]) == {"earbuds", "buds-2"}
    assert result.near_misses[2].breaks[0] == "not earbuds"


@pytest.mark.parametrize(
    ("category", "said"),
    [
        ("t-shirt", "not a t-shirt"),
        ("e-reader", "not an e-reader"),
        ("wireless earbuds", "not wireless earbuds"),
        ("dress", "not a dress"),
        ("cactus", "not a cactus"),
    ],
)
def test_the_category_broken_is_said_with_its_article(category: str, said: str) -> None:
    mug = Hit(product=MUG, score=0.0, variant=MUG.variants[0])
    assert what_it_breaks(SearchQuery(category=category), mug, Words(analyzer())) == [said]


def test_a_caller_may_want_fewer_near_misses_than_room_is_left() -> None:
    searcher, query = _two_earbuds_over_budget()
    assert len(searcher.search_query(query, 10).near_misses) == 3
    assert len(searcher.search_query(query, 10, near=1).near_misses) == 1
    assert searcher.search_query(query, 10, near=0).near_misses == []
