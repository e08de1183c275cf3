"""The assistant on embedded defaults, for real: MiniLM routing, the tau-bench store."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant import Assistant, ConversationStore, Domain, EmbeddingRouter
from cartagent.assistant.cards import ProductCard
from cartagent.assistant.reply import Reply
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


@pytest.fixture
def grounded(
    minilm_router: EmbeddingRouter, tau_grounded_searcher: Searcher, memory_store: ConversationStore
) -> Assistant:
    return Assistant(minilm_router, memory_store, searcher=tau_grounded_searcher)


def _claimed(reply: Reply) -> list[ProductCard]:
    return [card for card in reply.cards if not card.breaks]


async def test_no_laptop_has_everything_asked_for_and_the_reply_says_so(
    grounded: Assistant,
) -> None:
    reply = await grounded.turn(grounded.open_session(), "13 inch laptop with 16gb ram and an i7")
    wanted = {"screen size": "13-inch", "ram": "16GB", "processor": "i7"}
    for card in _claimed(reply):
        assert {k: card.options.get(k) for k in wanted} == wanted, card
    if not _claimed(reply):  # the store has none: the closest, each saying how it differs
        assert reply.text.startswith("No exact match for 13-inch 16GB i7 laptop")
        assert reply.cards and all(card.breaks for card in reply.cards)
        laptops = [card for card in reply.cards if card.title == "Laptop"]
        assert laptops and all("not" in b for card in laptops for b in card.breaks)


async def test_only_polarized_ones_never_claims_a_non_polarized_pair(grounded: Assistant) -> None:
    sid = grounded.open_session()
    await grounded.turn(sid, "sunglasses")
    reply = await grounded.turn(sid, "only polarized ones")
    assert _claimed(reply)
    assert {card.options["lens type"] for card in _claimed(reply)} == {"polarized"}
    other = await grounded.turn(sid, "non-polarized ones")
    assert {card.options["lens type"] for card in _claimed(other)} == {"non-polarized"}


async def test_a_laptop_compartment_is_not_a_camera_compartment(grounded: Assistant) -> None:
    reply = await grounded.turn(
        grounded.open_session(), "leather backpack with a laptop compartment"
    )
    for card in _claimed(reply):
        assert (card.options["material"], card.options["compartment"]) == ("leather", "laptop")
    for card in reply.cards:
        if card.options.get("compartment") == "camera":
            assert "compartment is camera, not laptop" in card.breaks


async def test_waterproof_is_the_catalogs_water_resistance(grounded: Assistant) -> None:
    reply = await grounded.turn(
        grounded.open_session(), "waterprof bluetooth speaker between 250 and 300"
    )
    assert _claimed(reply), reply.text
    for card in _claimed(reply):
        assert card.title == "Bluetooth Speaker" and card.options["water resistance"] == "yes"
        assert card.price is not None and Decimal(250) <= card.price <= Decimal(300)
