"""What the store sells, from its catalog."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant import Assistant, ConversationStore, Domain, EmbeddingRouter
from cartagent.assistant.catalog_overview import CATALOG_QUESTION, CatalogOverview
from cartagent.assistant.router import RouteContext, rule_route
from cartagent.assistant.specialists import default_specialists
from cartagent.catalog import Product, Variant
from cartagent.retrieval.search import Searcher
from cartagent.testing import HashingEmbedder

from .conftest import SHOP

pytestmark = pytest.mark.anyio


def _product(pid: str, *category: str, title: str = "Thing") -> Product:
    return Product(
        id=pid,
        title=title,
        category=category,
        variants=(Variant(id=f"{pid}-v", price=Decimal("1.00")),),
    )


def test_departments_come_largest_first_with_their_most_stocked_kinds() -> None:
    products = [
        *(_product(f"t{n}", "Clothing", "Tops", "T-Shirts") for n in range(3)),
        _product("j", "Clothing", "Jackets"),
        *(_product(f"k{n}", "Kitchen", "Mugs") for n in range(2)),
        _product("x", title="Gift Card"),
        *(_product(f"c{n}", "Clothing", f"Kind {n}") for n in range(6)),
    ]
    assert CatalogOverview.of(products).describe().splitlines() == [
        "The store has 13 products:",
        "- Clothing: T-Shirts, Jackets, Kind 0, Kind 1, Kind 2, Kind 3 and 2 more",
        "- Kitchen: Mugs",
        "- Other: Gift Card",
        "Tell me what you are looking for ('a blue t-shirt under $60').",
    ]
    assert not CatalogOverview.of([])
    assert CatalogOverview().describe().startswith("I can search the store for you")


@pytest.mark.parametrize(
    "text",
    [
        "what do you sell?",
        "What does the store carry",
        "what kinds of products do you have",
        "what's in your shop?",
        "show me your categories",
    ],
)
def test_the_question_is_recognised_and_routed_to_discovery(text: str) -> None:
    assert CATALOG_QUESTION.search(text) is not None
    routed = rule_route(text, RouteContext(Domain.CART_CHECKOUT))
    assert routed is not None and routed.domain is Domain.DISCOVERY


async def test_a_shopper_asking_what_the_store_sells_gets_its_departments(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    router = EmbeddingRouter(HashingEmbedder(256), k=1)
    specialists = default_specialists(HashingEmbedder(256), catalog=SHOP)
    assistant = Assistant(router, memory_store, searcher=shop_searcher, specialists=specialists)
    sid = assistant.open_session()

    reply = await assistant.turn(sid, "what do you sell?")

    assert reply.domain is Domain.DISCOVERY and not reply.cards
    assert reply.text.splitlines()[:3] == [
        "The store has 3 products:",
        "- Clothing: Hoodies, T-Shirts",
        "- Home & Kitchen: Mugs",
    ]
    assert CATALOG_QUESTION.search("a red t-shirt") is None
    # A request for some products is a search.
    assert CATALOG_QUESTION.search("what do you have for camping") is None


async def test_a_kind_of_product_the_store_does_not_sell_is_said_so(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    overview = CatalogOverview.of(SHOP)
    assert overview.sells("hoodie") and overview.sells("t-shirt") and overview.sells("mugs")
    assert overview.sells("tent") is False and CatalogOverview().sells("tent") is None
    router = EmbeddingRouter(HashingEmbedder(256), k=1)
    specialists = default_specialists(HashingEmbedder(256), catalog=SHOP)
    assistant = Assistant(router, memory_store, searcher=shop_searcher, specialists=specialists)
    sid = assistant.open_session()

    boots = await assistant.turn(sid, "red hiking boots")
    shirt = await assistant.turn(sid, "a purple t-shirt")

    assert boots.text == (
        "No products match red hiking boots, and this store has no hiking boots at all. "
        "Its departments: Clothing, Home & Kitchen."
    )
    assert "this store has no" not in shirt.text


def test_examples_name_the_stores_own_kinds_with_prices_most_of_them_are_under() -> None:
    examples = CatalogOverview.of(SHOP).examples()
    assert examples == [
        "What do you sell?",
        "Show me t-shirts",
        "Hoodies under $36",  # the hoodie's cheapest variant costs 35.00
        "Mugs under $13",
        "What is your return policy?",
    ]
    assert CatalogOverview().examples() == ["What do you sell?", "What is your return policy?"]
