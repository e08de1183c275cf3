"""The assistant on embedded defaults, for real: MiniLM routing, the tau-bench store."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant import Assistant, ConversationStore, Domain, EmbeddingRouter
from cartagent.retrieval.search import Searcher

pytestmark = pytest.mark.anyio


@pytest.fixture
def assistant(
    minilm_router: EmbeddingRouter, tau_searcher: Searcher, memory_store: ConversationStore
) -> Assistant:
    return Assistant(minilm_router, memory_store, searcher=tau_searcher)


async def test_a_blue_t_shirt_then_the_second_one_then_cheaper(assistant: Assistant) -> None:
    sid = assistant.open_session()
    found = await assistant.turn(sid, "a blue t-shirt under 60")
    assert found.domain is Domain.DISCOVERY and len(found.cards) >= 2
    for card in found.cards:
        assert card.title == "T-Shirt" and card.options["color"] == "blue"
        assert card.price is not None and card.price <= 60
    picked = await assistant.turn(sid, "the second one")
    assert picked.cards == (found.cards[1],)
    # 50.88 is the store's cheapest blue t-shirt: nothing is cheaper, and it says so
    cheaper = await assistant.turn(sid, "cheaper")
    assert cheaper.domain is Domain.DISCOVERY and cheaper.cards == ()
    assert "Nothing cheaper than 50.88 USD matches blue t-shirt" in cheaper.text
    assert (await assistant.turn(sid, "add the first to my cart")).domain is Domain.DISCOVERY
    assert [line.unit_price for line in assistant.store.load(sid).cart] == [Decimal("50.88")]


async def test_cheaper_shows_only_cheaper_products(assistant: Assistant) -> None:
    sid = assistant.open_session()
    first = await assistant.turn(sid, "electronics")
    assert first.cards
    lowest = min(c.price for c in first.cards if c.price is not None)
    cheaper = await assistant.turn(sid, "cheaper")
    assert cheaper.domain is Domain.DISCOVERY and cheaper.cards
    assert all(c.price is not None and c.price < lowest for c in cheaper.cards)
    second = await assistant.turn(sid, "show me #2")
    assert second.cards == (cheaper.cards[1],)


async def test_other_domains_route_and_answer_without_touching_the_results(
    assistant: Assistant,
) -> None:
    sid = assistant.open_session()
    await assistant.turn(sid, "wireless earbuds")
    shown = assistant.store.load(sid).results
    order = await assistant.turn(sid, "where is my order #W2378156")
    assert order.domain is Domain.ORDERS and "I don't see any order" in order.text
    joke = await assistant.turn(sid, "tell me a joke about cats")
    assert joke.domain is Domain.OUT_OF_SCOPE
    assert assistant.store.load(sid).results == shown
