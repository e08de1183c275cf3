"""Searcher over the tau-bench catalog: shopper requests in, sensible hits and timings out."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from cartagent.catalog import tau_catalog
from cartagent.retrieval.embeddings import MiniLMEmbedder
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.query import SearchQuery
from cartagent.retrieval.rules import parse
from cartagent.retrieval.search import Searcher, SearchResult, hit_summary
from tests.conftest import TAU


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(LexicalIndex.build(tau_catalog(TAU)), understand=parse)


def titles(result: SearchResult) -> list[str]:
    return [h.product.title for h in result.hits]


def test_red_t_shirt_under_a_price(searcher: Searcher) -> None:
    result = searcher.search("red t-shirt under 50")
    assert titles(result) == ["T-Shirt"]
    variant = result.hits[0].variant
    assert variant is not None
    assert variant.options["color"] == "red" and variant.price <= 50
    # No tau-bench t-shirt costs under 20: nothing rather than something wrong.
    assert searcher.search("red t-shirt under 20").hits == []


def test_every_hit_satisfies_the_understood_constraints(searcher: Searcher) -> None:
    result = searcher.search("t-shirt size XL not polyester")
    assert titles(result) == ["T-Shirt"]
    variant = result.hits[0].variant
    assert variant is not None
    assert variant.options["size"] == "XL" and variant.options["material"] != "polyester"


@pytest.mark.parametrize(
    ("request_text", "title"),
    [
        ("coffee maker", "Coffee Maker"),
        ("leather hiking boots size 10", "Hiking Boots"),
        ("running shoes size 9 yellow", "Running Shoes"),
        ("1000ml water bottle", "Water Bottle"),
        ("office chair mesh", "Office Chair"),
        ("wireless earbuds in stock", "Wireless Earbuds"),
        ("skateboard", "Skateboard"),
    ],
)
def test_requests_find_the_product(searcher: Searcher, request_text: str, title: str) -> None:
    result = searcher.search(request_text, 5)
    assert result.hits, result.query
    assert result.hits[0].product.title == title


def test_sorting_by_price(searcher: Searcher) -> None:
    cheapest = searcher.search("cheapest laptop", 1).hits[0]
    laptop = cheapest.product
    assert cheapest.variant is not None
    assert cheapest.variant.price == min(v.price for v in laptop.variants if v.available)
    everything = searcher.search_query(SearchQuery(sort="price_asc"), 10).hits
    prices = [h.variant.price for h in everything if h.variant is not None]
    assert prices == sorted(prices) and len(prices) == 10


def test_free_text_ranks_by_bm25(searcher: Searcher) -> None:
    result = searcher.search_query(SearchQuery(text="wireless bluetooth speaker"), 5)
    assert result.hits[0].product.title == "Bluetooth Speaker"
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_timings_cover_every_stage(searcher: Searcher) -> None:
    result = searcher.search("blue backpack")
    assert {"understand", "lexical", "filter", "total"} <= set(result.timings)
    assert all(ms >= 0 for ms in result.timings.values())
    assert result.timings["total"] >= result.timings["understand"]


def test_follow_up_context_reaches_the_understander() -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    def understand(request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        seen.append((request, tuple(context)))
        return SearchQuery(text=request)

    index = LexicalIndex.build(tau_catalog(TAU))
    result = Searcher(index, understand=understand).search("in blue instead", context=["backpack"])
    assert seen == [("in blue instead", ("backpack",))]
    assert isinstance(result, SearchResult)


def test_default_understander_is_the_rule_parser() -> None:
    assert Searcher(LexicalIndex.build([])).understand is parse


def test_hit_summary_is_compact_json(searcher: Searcher) -> None:
    hit = searcher.search("red t-shirt under 50").hits[0]
    summary = hit_summary(hit)
    assert summary["id"] == hit.product.id
    assert summary["title"] == "T-Shirt"
    assert Decimal(summary["price"]) <= 50
    assert summary["currency"] == "USD"
    assert summary["variant"]["options"]["color"] == "red"
    assert "color=red" in summary["matched"]
    assert "variants" not in summary


# -------------------------------------------------------------------- hybrid (lexical + dense)


@pytest.fixture(scope="module")
def hybrid(minilm: MiniLMEmbedder) -> Searcher:
    from cartagent.retrieval.dense import DenseIndex

    products = tau_catalog(TAU)
    dense = DenseIndex.build(products, minilm)
    return Searcher(LexicalIndex.build(products), understand=parse, dense=dense)


@pytest.mark.parametrize(
    ("request_text", "title"),
    [("trainers for jogging", "Running Shoes"), ("photo camera", "Digital Camera")],
)
def test_hybrid_finds_what_other_words_name(
    searcher: Searcher, hybrid: Searcher, request_text: str, title: str
) -> None:
    assert searcher.search(request_text, 5).hits == []  # lexical: no shared words
    result = hybrid.search(request_text, 5)
    assert result.hits and result.hits[0].product.title == title
    assert {"understand", "lexical", "dense", "filter", "fuse", "total"} <= set(result.timings)


def test_hybrid_keeps_lexical_wins_and_filters(hybrid: Searcher) -> None:
    assert hybrid.search("coffee maker", 5).hits[0].product.title == "Coffee Maker"
    result = hybrid.search("red t-shirt under 50", 5)
    assert result.hits[0].product.title == "T-Shirt"
    for hit in result.hits:  # dense candidates obey the same price filter
        assert hit.variant is not None and hit.variant.price <= 50
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_hybrid_price_sort(hybrid: Searcher) -> None:
    hits = hybrid.search_query(SearchQuery(text="shoes", sort="price_asc"), 5).hits
    prices = [h.variant.price for h in hits if h.variant is not None]
    assert prices == sorted(prices) and len(prices) == len(hits) > 0
