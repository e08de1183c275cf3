"""UCP's catalog over the tau store: search (cartagent's lexical index), batch lookup and
product detail with option selection, every answer checked against the release's schemas."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cartagent.commerce import Agents, Merchant
from cartagent.money import Money
from tests.commerce.test_ucp_checkout import UcpClient, conforms, create, lines, serve

NOTEBOOK = "2892623495"  # A4/A5/A6 x hard/soft cover; the A6 ones are out of stock
A4_HARD, A6_HARD, A6_SOFT, A5_SOFT, A4_SOFT = (
    "1199058591",
    "6574183535",
    "9421195098",
    "9799386954",
    "7579176349",
)


@pytest.fixture
def ucp(merchant: Merchant, agents: Agents, agent_token: str) -> Iterator[UcpClient]:
    with serve(merchant, agents) as http:
        yield UcpClient(http, agent_token)


def search(client: UcpClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.search(body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    conforms("search", found)
    return found


def lookup(client: UcpClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/catalog/lookup", body, key=False)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    conforms("lookup", found)
    return found


def product(client: UcpClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/catalog/product", body, key=False)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    conforms("product", found)
    return found


def test_a_text_search_ranks_the_matching_product_first(ucp: UcpClient) -> None:
    found = search(ucp, {"query": "running shoes"})
    assert found["products"][0]["title"] == "Running Shoes"
    assert found["ucp"]["capabilities"] == {
        "dev.ucp.shopping.catalog.search": [{"version": "2026-04-08"}]
    }
    first = found["products"][0]
    assert first["categories"] == [
        {"value": "Shoes > Athletic > Running Shoes", "taxonomy": "merchant"}
    ]
    prices = [v["price"]["amount"] for v in first["variants"]]
    assert first["price_range"]["min"] == {"amount": min(prices), "currency": "USD"}
    assert all(isinstance(amount, int) for amount in prices)  # minor units
    assert search(ucp, {"query": "zzzzqqq"})["products"] == []


def test_filters_narrow_by_price_and_category(ucp: UcpClient) -> None:
    cheap = search(ucp, {"query": "notebook", "filters": {"price": {"max": 2900}}})
    [notebook] = cheap["products"]
    assert {v["id"] for v in notebook["variants"]} == {A6_HARD, A5_SOFT}
    assert notebook["variants"][0]["availability"]["available"]  # the featured variant first
    browse = search(ucp, {"filters": {"categories": ["electronics > audio"]}})
    titles = {p["title"] for p in browse["products"]}
    assert {p["categories"][0]["value"] for p in browse["products"]} == {
        "Electronics > Audio > Earbuds",
        "Electronics > Audio > Headphones",
        "Electronics > Audio > Speakers",
    }
    top = search(ucp, {"filters": {"categories": ["Electronics"]}, "pagination": {"limit": 50}})
    assert titles < {p["title"] for p in top["products"]}
    assert all(p["categories"][0]["value"].startswith("Electronics") for p in top["products"])


def test_a_price_filter_in_another_currency_is_ignored_with_a_warning(ucp: UcpClient) -> None:
    found = search(
        ucp, {"query": "notebook", "filters": {"price": {"max": 1}}, "context": {"currency": "EUR"}}
    )
    assert [p["title"] for p in found["products"]][:1] == ["Notebook"]
    [warning] = found["messages"]
    assert (warning["type"], warning["code"]) == ("warning", "price_filter_ignored")


def test_pages_follow_the_cursor(ucp: UcpClient) -> None:
    body: dict[str, Any] = {"filters": {"price": {"min": 0}}, "pagination": {"limit": 4}}
    first = search(ucp, body)
    total = first["pagination"]["total_count"]
    assert total == 50 and first["pagination"]["has_next_page"]
    seen = [p["id"] for p in first["products"]]
    cursor = first["pagination"]["cursor"]
    while cursor is not None:
        page = search(ucp, {**body, "pagination": {"limit": 4, "cursor": cursor}})
        seen += [p["id"] for p in page["products"]]
        cursor = page["pagination"].get("cursor")
    assert len(seen) == len(set(seen)) == total
    assert len(search(ucp, {"query": "shoes", "pagination": {"limit": 500}})["products"]) <= 50


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid"),
        ({"query": "   "}, "invalid"),
        ({"query": "x" * 600}, "invalid"),
        ({"query": "shoes", "pagination": {"cursor": "bm9wZQ"}}, "invalid"),
        ({"query": "shoes", "pagination": {"limit": 0}}, "invalid"),
        ({"query": "shoes", "filters": {"price": {"min": 500, "max": 100}}}, "invalid"),
    ],
)
def test_bad_searches_are_400(ucp: UcpClient, body: dict[str, Any], code: str) -> None:
    response = ucp.search(body)
    assert (response.status_code, response.json()["code"]) == (400, code)


def test_lookup_resolves_products_and_variants_once_each(ucp: UcpClient) -> None:
    found = lookup(ucp, {"ids": [NOTEBOOK, A5_SOFT, A5_SOFT, "missing-id"]})
    [notebook] = found["products"]
    assert notebook["id"] == NOTEBOOK
    inputs = {v["id"]: v["inputs"] for v in notebook["variants"]}
    assert inputs == {
        A4_HARD: [{"id": NOTEBOOK, "match": "featured"}],
        A5_SOFT: [{"id": A5_SOFT, "match": "exact"}],
    }
    assert found["messages"] == [{"type": "info", "code": "not_found", "content": "missing-id"}]
    filtered = lookup(ucp, {"ids": [NOTEBOOK, A4_HARD], "filters": {"price": {"max": 3000}}})
    [cheap] = filtered["products"]
    assert [v["id"] for v in cheap["variants"]] == [A5_SOFT]  # the cheapest available one
    assert lookup(ucp, {"ids": [NOTEBOOK], "filters": {"categories": ["Shoes"]}})["products"] == []
    too_many = ucp.post("/catalog/lookup", {"ids": [str(i) for i in range(51)]}, key=False)
    assert (too_many.status_code, too_many.json()["code"]) == (400, "request_too_large")
    empty = ucp.post("/catalog/lookup", {"ids": []}, key=False)
    assert empty.status_code == 400


def test_a_looked_up_variant_is_what_a_checkout_sells(ucp: UcpClient) -> None:
    [found] = lookup(ucp, {"ids": [A5_SOFT]})["products"]
    [variant] = found["variants"]
    session = create(ucp, lines(variant["id"]))
    [line] = session["line_items"]
    assert line["item"]["price"] == variant["price"]["amount"]
    assert line["item"]["title"].startswith(found["title"])


def test_product_detail_by_variant_puts_it_first_with_its_selection(ucp: UcpClient) -> None:
    detail = product(ucp, {"id": A5_SOFT, "selected": [{"name": "size", "label": "A4"}]})["product"]
    assert detail["variants"][0]["id"] == A5_SOFT
    assert detail["selected"] == [
        {"name": "size", "label": "A5"},
        {"name": "cover type", "label": "soft cover"},
    ]
    sizes = {v["label"]: v for v in detail["options"][0]["values"]}
    assert sizes["A6"] == {"label": "A6", "available": False, "exists": True}
    assert sizes["A4"] == {"label": "A4", "available": True, "exists": True}


def test_product_detail_relaxes_selections_by_preference(ucp: UcpClient) -> None:
    asked = [{"name": "size", "label": "A5"}, {"name": "cover type", "label": "hard cover"}]
    keep_size = product(
        ucp, {"id": NOTEBOOK, "selected": asked, "preferences": ["size", "cover type"]}
    )
    assert keep_size["product"]["selected"] == [{"name": "size", "label": "A5"}]
    assert keep_size["product"]["variants"][0]["id"] == A5_SOFT
    keep_cover = product(
        ucp, {"id": NOTEBOOK, "selected": asked, "preferences": ["cover type", "size"]}
    )["product"]
    assert keep_cover["selected"] == [{"name": "cover type", "label": "hard cover"}]
    assert [v["id"] for v in keep_cover["variants"]] == [A4_HARD, A6_HARD]
    a6 = product(ucp, {"id": NOTEBOOK, "selected": [{"name": "size", "label": "A6"}]})["product"]
    assert {v["id"] for v in a6["variants"]} == {A6_HARD, A6_SOFT}
    covers = {v["label"]: v for v in a6["options"][1]["values"]}
    assert covers["soft cover"] == {"label": "soft cover", "available": False, "exists": True}
    default = product(ucp, {"id": NOTEBOOK})["product"]
    assert default["variants"][0]["id"] == A4_HARD
    assert default["selected"] == [
        {"name": "size", "label": "A4"},
        {"name": "cover type", "label": "hard cover"},
    ]


def test_product_detail_of_nothing_is_an_error_response(ucp: UcpClient) -> None:
    for body in (
        {"id": "nope"},
        {"id": A4_HARD, "filters": {"price": {"max": 100}}},
    ):
        missing = product(ucp, body)
        assert missing["ucp"]["status"] == "error"
        assert [(m["code"], m["severity"]) for m in missing["messages"]] == [
            ("not_found", "unrecoverable")
        ]
    twice = [{"name": "size", "label": "A4"}, {"name": "Size", "label": "A5"}]
    response = ucp.post("/catalog/product", {"id": NOTEBOOK, "selected": twice}, key=False)
    assert response.status_code == 400


def test_prices_are_the_offers_in_minor_units(ucp: UcpClient, merchant: Merchant) -> None:
    [notebook] = lookup(ucp, {"ids": [A4_SOFT]})["products"]
    offer = merchant.catalog.offer(A4_SOFT)
    assert offer is not None
    assert notebook["variants"][0]["price"] == {
        "amount": Money(offer.unit_price, "USD").minor_units,
        "currency": "USD",
    }


def test_a_price_bound_beyond_any_price_is_refused_not_a_crash(ucp: UcpClient) -> None:
    response = ucp.search({"query": "shirt", "filters": {"price": {"min": 10**30}}})
    assert response.status_code == 400, response.text
