"""The assistant's turn: screening, routing, the specialist, one stored transaction, timings."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from cartagent.assistant import (
    STAGES,
    Assistant,
    ConversationStore,
    Domain,
    EmbeddingRouter,
    ProductCard,
    Reply,
    Specialist,
    TurnContext,
    UnknownSession,
)
from cartagent.assistant.router import Example, Route, RouteContext
from cartagent.assistant.specialists import SPECIALISTS
from cartagent.errors import ModelError
from cartagent.retrieval.search import Searcher
from cartagent.testing import HashingEmbedder, ScriptedModel

pytest.importorskip("numpy")
pytestmark = pytest.mark.anyio

EXAMPLES = [
    Example("show me t-shirts", Domain.DISCOVERY),
    Example("find a coffee mug", Domain.DISCOVERY),
    Example("where is my order", Domain.ORDERS),
    Example("what's in my cart", Domain.CART_CHECKOUT),
    Example("tell me a joke", Domain.OUT_OF_SCOPE),
]


def _assistant(store: ConversationStore, searcher: Searcher, **options: object) -> Assistant:
    router = EmbeddingRouter(HashingEmbedder(256), EXAMPLES, k=1)
    return Assistant(router, store, searcher=searcher, **options)  # type: ignore[arg-type]


async def test_a_search_then_a_pick_then_adding_it_to_the_cart(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    found = await assistant.turn(sid, "show me t-shirts in blue")
    assert found.domain is Domain.DISCOVERY
    assert [c.variant_id for c in found.cards] == ["tee-blue-m", "tee-blue-s", "tee-blue-poly"]
    picked = await assistant.turn(sid, "the second one")
    assert [c.variant_id for c in picked.cards] == ["tee-blue-s"] and "53.43" in picked.text
    added = await assistant.turn(sid, "add the first to my cart")
    assert "Added 1 x T-Shirt" in added.text
    state = memory_store.load(sid)
    assert [(line.variant_id, line.quantity, line.unit_price) for line in state.cart] == [
        ("tee-blue-m", 1, Decimal("50.88"))
    ]
    assert len(state.messages) == 6 and state.last_domain is Domain.DISCOVERY


async def test_it_and_make_it_n_follow_the_conversation_across_turns(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    await assistant.turn(sid, "the second one")
    added = await assistant.turn(sid, "add it to my cart")
    assert "Added 1 x T-Shirt" in added.text and "53.43" in added.text
    # Whatever the router would say of "make it 3", a cart holding something takes it.
    changed = await assistant.turn(sid, "make it 3")
    assert changed.domain is Domain.CART_CHECKOUT and changed.text.startswith("Now 3 x T-Shirt")
    state = memory_store.load(sid)
    assert [(line.variant_id, line.quantity) for line in state.cart] == [("tee-blue-s", 3)]


async def _a_blue_tee_in_the_cart(
    store: ConversationStore, searcher: Searcher
) -> tuple[Assistant, str]:
    """An assistant and a session whose cart holds the blue T-shirt in M, just added."""
    assistant = _assistant(store, searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    await assistant.turn(sid, "add the first to my cart")
    return assistant, sid


async def test_greetings_thanks_and_goodbyes_are_answered_as_such(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    hello = await assistant.turn(sid, "hi")
    assert hello.text.startswith("Hello! I am this store's shopping assistant")
    assert "What are you looking for?" in hello.text and "can't help" not in hello.text
    merchant = await assistant.turn(assistant.open_session(), "hello", merchant=True)
    assert "the store's sales" in merchant.text
    asking = await assistant.turn(sid, "hey, do you have t-shirts in blue?")
    assert asking.domain is Domain.DISCOVERY and asking.cards

    shopper, with_cart = await _a_blue_tee_in_the_cart(memory_store, shop_searcher)
    before = memory_store.load(with_cart)
    thanks = await shopper.turn(with_cart, "thanks!")
    assert thanks.text == "You're welcome! Your cart holds 1 item. Anything else I can help with?"
    bye = await shopper.turn(with_cart, "bye")
    assert (
        bye.text == "Goodbye, and thank you! Your cart holds 1 item, kept for when you come back."
    )
    after = memory_store.load(with_cart)
    assert after.cart == before.cart and after.results == before.results


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("sweet, thanks", "You're welcome!"),
        ("danke, tschüss", "Auf Wiedersehen, und danke!"),  # in the shopper's language
        ("merci beaucoup, au revoir", "Au revoir, et merci !"),
        ("\U0001f44b", "Hello!"),
        ("are you a bot?", "I am this store's shopping assistant, a computer program"),
    ],
)
async def test_small_talk_is_answered_whatever_the_router_would_say(
    memory_store: ConversationStore, shop_searcher: Searcher, text: str, starts: str
) -> None:
    assistant = Assistant(_Always(Domain.DISCOVERY), memory_store, searcher=shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    reply = await assistant.turn(sid, text)
    assert reply.domain is Domain.OUT_OF_SCOPE and reply.text.startswith(starts)
    assert not reply.cards and len(reply.text) <= 300 and "sorry" not in reply.text.casefold()
    asking = await assistant.turn(sid, "thanks, now show me red ones")
    assert asking.domain is Domain.DISCOVERY and asking.cards


async def test_a_declined_turn_that_names_what_to_show_refines_the_shown_results(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = Assistant(_Always(Domain.DISCOVERY), memory_store, searcher=shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    assistant.router = _Always(Domain.OUT_OF_SCOPE)
    refined = await assistant.turn(sid, "hmm ok, not polyester then tho")
    assert refined.domain is Domain.DISCOVERY and refined.cards
    assert all(card.options["material"] != "polyester" for card in refined.cards)
    shown = memory_store.load(sid).results
    for text in ("tell me a joke about cats", "what's the weather like", "write me a poem"):
        declined = await assistant.turn(sid, text)
        assert declined.domain is Domain.OUT_OF_SCOPE and "can't help" in declined.text, text
    assert memory_store.load(sid).results == shown
    # Nothing shown: nothing to refine, the router's word stands.
    fresh = await assistant.turn(assistant.open_session(), "not polyester then")
    assert fresh.domain is Domain.OUT_OF_SCOPE


async def test_a_question_about_the_results_in_any_language_is_not_declined(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = Assistant(_Always(Domain.DISCOVERY), memory_store, searcher=shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    assistant.router = _Always(Domain.OUT_OF_SCOPE)
    price = await assistant.turn(sid, "Was kostet das zweite?")
    assert price.domain is Domain.DISCOVERY and price.text.startswith("Nr. 2, ")
    which = await assistant.turn(sid, "¿cuál es más barato?")
    assert which.domain is Domain.DISCOVERY and "más barato" in which.text
    # Sent to an empty cart by the router, a turn with no word of the cart is about the list.
    assistant.router = _Always(Domain.CART_CHECKOUT)
    red = await assistant.turn(sid, "in red?")
    assert red.domain is Domain.DISCOVERY and red.cards
    cart = await assistant.turn(sid, "what's in my cart")
    assert cart.domain is Domain.CART_CHECKOUT
    # Sent to orders or returns when none was placed, it is about the list too.
    for domain in (Domain.ORDERS, Domain.RETURNS_REFUNDS):
        assistant.router = _Always(domain)
        blue = await assistant.turn(sid, "ok then in blue, size doesn't matter")
        assert blue.domain is Domain.DISCOVERY and blue.cards, domain
        asked = await assistant.turn(sid, "where is my order?")
        assert asked.domain is domain


@pytest.mark.parametrize(
    "text", ["this bot is useless. a t-shirt. is that so hard", "tshirts pls", "camisetas azules"]
)
async def test_a_declined_turn_that_names_a_kind_the_store_has_is_a_search(
    memory_store: ConversationStore, shop_searcher: Searcher, text: str
) -> None:
    assistant = Assistant(_Always(Domain.OUT_OF_SCOPE), memory_store, searcher=shop_searcher)
    reply = await assistant.turn(assistant.open_session(), text)
    assert reply.domain is Domain.DISCOVERY and reply.cards, text
    assert all(card.id == "tee" for card in reply.cards if not card.breaks)


async def test_a_superlative_about_the_list_is_answered_from_it_not_searched(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")  # M, S, S
    shown = memory_store.load(sid).results
    smallest = await assistant.turn(sid, "which one is the smallest?")
    assert smallest.domain is Domain.DISCOVERY
    assert smallest.text == "#2 and #3 are the smallest (size S)."
    assert [c.variant_id for c in smallest.cards] == ["tee-blue-s", "tee-blue-poly"]
    lightest = await assistant.turn(sid, "which is the lightest?")
    assert lightest.text.startswith("The catalog does not give their weight")
    assert memory_store.load(sid).results == shown  # nothing was searched


async def test_does_it_come_in_is_answered_then_taken_at_its_word(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    await assistant.turn(sid, "the first one")
    answer = await assistant.turn(sid, "does it come in red?")
    assert answer.domain is Domain.DISCOVERY
    # Red comes only in L: said, since the shirt in focus is an M.
    assert answer.text == (
        "Not like this one (M, cotton): T-Shirt in red comes as: red, L, cotton (46.66 USD). Say "
        "'add red' to put it in your cart."
    )
    added = await assistant.turn(sid, "add red")
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-red-l"]
    assert "Added 1 x T-Shirt (red, L, cotton)" in added.text


async def test_something_similar_shows_other_products_of_the_same_kind_first(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    similar = await assistant.turn(sid, "show me something similar to the first one")
    assert similar.domain is Domain.DISCOVERY and similar.text == "Like T-Shirt:"
    assert [c.id for c in similar.cards][:1] == ["hoodie"] and "tee" not in {
        c.id for c in similar.cards
    }
    assert [c.rank for c in similar.cards] == list(range(1, len(similar.cards) + 1))
    assert memory_store.load(sid).results == list(similar.cards)  # "the first one" is these
    focused = await assistant.turn(sid, "anything similar?")  # the one card just shown
    assert focused.text == "Like Hoodie:"
    several = assistant.open_session()
    await assistant.turn(several, "show me t-shirts in blue")
    which = await assistant.turn(several, "anything similar?")
    assert which.text.startswith("Similar to which one?")
    # Nothing shown is meant: a search like any other.
    fresh = assistant.open_session()
    searched = await assistant.turn(fresh, "something similar to a hoodie")
    assert [c.id for c in searched.cards][:1] == ["hoodie"]


async def test_adding_a_kind_of_product_finds_it_then_asks_which_one(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant, sid = await _a_blue_tee_in_the_cart(memory_store, shop_searcher)
    found = await assistant.turn(sid, "also add a red hoodie to my cart too")
    assert found.domain is Domain.DISCOVERY
    assert found.text == (
        "1 exact match for red hoodie. Which one should I add? Say, e.g., 'add the first one':"
    )
    assert [c.variant_id for c in found.cards] == ["hoodie-red"]
    added = await assistant.turn(sid, "add the first one")
    assert "Added 1 x Hoodie (red, M, cotton)" in added.text
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-blue-m", "hoodie-red"]


async def test_the_x_one_points_at_the_shown_result_that_is_x(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")  # M and S cotton, S polyester
    one = await assistant.turn(sid, "the polyester one")
    assert one.domain is Domain.DISCOVERY and one.text.startswith(
        "#3: T-Shirt (blue, S, polyester)"
    )
    several = await assistant.turn(sid, "the cotton ones")
    assert several.text == "Which one? 2 of those shown are cotton:"
    assert [c.rank for c in several.cards] == [1, 2]
    # None shown is red: a refinement, as before.
    refined = await assistant.turn(sid, "the red one")
    assert [c.variant_id for c in refined.cards] == ["tee-red-l"]


async def test_a_shown_result_is_added_by_the_option_named(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    shop = _assistant(memory_store, shop_searcher)
    cart = Assistant(_Always(Domain.CART_CHECKOUT), memory_store, searcher=shop_searcher)
    sid = shop.open_session()
    await shop.turn(sid, "show me t-shirts in blue")  # blue M and S cotton, S polyester

    several = await cart.turn(sid, "add the cotton one")
    assert several.text == "Which one? 2 of those shown are cotton:"
    assert [c.variant_id for c in several.cards] == ["tee-blue-m", "tee-blue-s"]
    never = await cart.turn(sid, "add the green one")
    assert never.text.startswith("None of those shown is green. T-Shirt: color ")
    assert memory_store.load(sid).cart == []
    added = await cart.turn(sid, "add the small cotton one")
    assert added.text.startswith("Added 1 x T-Shirt (blue, S, cotton)")
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-blue-s"]
    sold_out = await cart.turn(sid, "add the polyester one")
    assert "out of stock, so I did not add it" in sold_out.text
    taken_out = await cart.turn(sid, "take the small cotton one out")  # a removal, not an add
    assert taken_out.text.startswith("Removed T-Shirt.") and memory_store.load(sid).cart == []
    # Not shown: the product in focus (the sold-out one just shown) in red is added.
    unshown = await cart.turn(sid, "I'll take the red one")
    assert unshown.text.startswith("In red it comes only with size L, material cotton. Added")


async def test_a_size_or_colour_named_adds_that_version_of_the_product_in_focus(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    await assistant.turn(sid, "the first one")  # blue, M, cotton
    # Whatever the router says of it, "add size XL" with a list shown is the cart's.
    added = await assistant.turn(sid, "add size XL")
    assert added.domain is Domain.CART_CHECKOUT
    assert added.text.startswith(
        "In size XL it comes only with color black, material polyester. Added 1 x T-Shirt "
        "(black, XL, polyester)"
    )
    again = assistant.open_session()
    await assistant.turn(again, "show me t-shirts in blue")
    await assistant.turn(again, "the second one")  # blue, S, cotton
    red = await assistant.turn(again, "add it in red")
    assert red.text.startswith("In red it comes only with size L. Added 1 x T-Shirt (red, L")
    assert [line.variant_id for line in memory_store.load(again).cart] == ["tee-red-l"]


async def test_a_cart_line_changes_size_or_colour_whatever_the_router_says(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant, sid = await _a_blue_tee_in_the_cart(memory_store, shop_searcher)
    changed = await assistant.turn(sid, "change it to size S")
    assert changed.domain is Domain.CART_CHECKOUT
    assert changed.text.startswith("Changed to 1 x T-Shirt (blue, S, cotton) - 53.43 USD.")
    recoloured = await assistant.turn(sid, "actually, in red instead")
    assert "(red, L, cotton) - 46.66 USD (it comes only with size L)" in recoloured.text
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-red-l"]
    # A new search is not a change of the line, and "in red instead" then refines it.
    searched = await assistant.turn(sid, "show me coffee mugs")
    assert searched.domain is Domain.DISCOVERY
    refined = await assistant.turn(sid, "in red instead")
    assert refined.domain is Domain.DISCOVERY
    assert [c.variant_id for c in refined.cards] == ["mug-red"]
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-red-l"]


async def test_a_sold_out_version_is_offered_in_stock_and_taken_with_a_yes(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant, sid = await _a_blue_tee_in_the_cart(memory_store, shop_searcher)
    offered = await assistant.turn(sid, "make it polyester")
    assert "is sold out. T-Shirt (black, XL, polyester) - 49.52 USD is in stock" in offered.text
    taken = await assistant.turn(sid, "yes please")
    assert taken.domain is Domain.CART_CHECKOUT and taken.text.startswith("Changed to 1 x")
    assert [line.variant_id for line in memory_store.load(sid).cart] == ["tee-black-xl"]


async def test_every_reply_has_the_latency_breakdown(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    reply = await assistant.turn(sid, "show me t-shirts")
    assert set(reply.timings) == {*STAGES, "total"}
    assert reply.timings["retrieve"] > 0 and reply.timings["route"] > 0
    assert reply.timings["total"] >= sum(reply.timings[s] for s in STAGES) - 0.01
    stored = memory_store.load(sid).messages[-1]
    assert set(stored.timings) == {*STAGES, "total"} and stored.payload["cards"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "What are you looking for?"),
        ("   ", "What are you looking for?"),
        ("x" * 10_000, "10,000 characters"),
    ],
)
async def test_unusable_input_gets_a_clear_answer_and_stores_nothing(
    memory_store: ConversationStore, shop_searcher: Searcher, text: str, says: str
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    reply = await assistant.turn(sid, text)
    assert says in reply.text and reply.domain is None and not reply.cards
    assert memory_store.load(sid).messages == []


async def test_gibberish_gets_a_clear_answer_and_no_side_effect(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    before = memory_store.load(sid)
    reply = await assistant.turn(sid, "asdfghjkl qwrtzpxcv")
    assert "could not make sense" in reply.text and reply.domain is None
    after = memory_store.load(sid)
    assert after.version == before.version and after.results == before.results


async def test_out_of_scope_and_order_questions_answer_honestly_without_side_effects(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    shown = memory_store.load(sid).results
    joke = await assistant.turn(sid, "tell me a joke")
    assert joke.domain is Domain.OUT_OF_SCOPE and "can't help with that" in joke.text
    order = await assistant.turn(sid, "where is my order")
    assert order.domain is Domain.ORDERS and "I don't see any order" in order.text
    state = memory_store.load(sid)
    assert state.results == shown and state.cart == [] and state.pending is None


async def test_the_merchants_order_and_refund_questions_go_to_the_back_office(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    merchant = assistant.open_session()
    shopper = assistant.open_session()
    # The back office answers without a payment backend that it is not configured.
    store_order = await assistant.turn(merchant, "where is my order", merchant=True)
    assert store_order.domain is Domain.BACK_OFFICE and "not configured" in store_order.text
    own_order = await assistant.turn(shopper, "where is my order")
    assert own_order.domain is Domain.ORDERS
    # Products and the cart are the same for both.
    found = await assistant.turn(merchant, "show me t-shirts", merchant=True)
    assert found.domain is Domain.DISCOVERY
    refunds = Assistant(_Always(Domain.RETURNS_REFUNDS), memory_store, searcher=shop_searcher)
    refund = await refunds.turn(merchant, "refund the last order", merchant=True)
    assert refund.domain is Domain.BACK_OFFICE
    returned = await refunds.turn(shopper, "refund the last order")
    assert returned.domain is Domain.RETURNS_REFUNDS


async def test_the_merchants_sales_questions_go_to_the_back_office_whatever_the_router_says(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = Assistant(_Always(Domain.DISCOVERY), memory_store, searcher=shop_searcher)
    merchant = assistant.open_session()
    shopper = assistant.open_session()
    for text in ("top 3 products", "best sellers", "how many orders today?", "ok, send it"):
        reply = await assistant.turn(merchant, text, merchant=True)
        assert reply.domain is Domain.BACK_OFFICE, text
    # A shopper asking for the best products is searching.
    assert (await assistant.turn(shopper, "top 3 products")).domain is Domain.DISCOVERY


async def test_a_bare_value_after_a_search_is_read_among_the_products_on_screen(
    memory_store: ConversationStore, tau_grounded_searcher: Searcher
) -> None:
    # The router takes "bump it to 32" for the (empty) cart; on screen are 16GB laptops, and
    # among them 32 is RAM: a follow-up of the search.
    router = _Always(Domain.DISCOVERY)
    assistant = Assistant(router, memory_store, searcher=tau_grounded_searcher)
    session = assistant.open_session()
    first = await assistant.turn(session, "13 inch laptop with 16gb ram")
    assert first.domain is Domain.DISCOVERY and first.cards
    router.domain = Domain.CART_CHECKOUT
    bumped = await assistant.turn(session, "ok and if i bump it to 32?")
    assert bumped.domain is Domain.DISCOVERY and "32GB" in bumped.text
    # A turn that changes nothing of the search stays where the router sent it.
    idle = await assistant.turn(session, "ok")
    assert idle.domain is Domain.CART_CHECKOUT


class _Always:
    """A router with one answer."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain

    async def route(self, text: str, context: RouteContext | None = None) -> Route:
        return Route(self.domain, 1.0, "rules")


class _Exploding:
    """Changes the conversation, then fails: as a crash halfway through a turn would."""

    name = "exploding"
    domain = Domain.DISCOVERY
    tools: tuple[str, ...] = ()
    prompt: str | None = None

    async def handle(self, turn: TurnContext) -> Reply:
        turn.conversation.results = []
        turn.conversation.add_to_cart(ProductCard("p", "P", "v", Decimal("1.00"), "USD", True, 1))
        raise RuntimeError("crashed midway")


async def test_a_turn_that_fails_midway_stores_nothing(
    conversations: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(conversations, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    before = conversations.load(sid)
    broken = [s for s in SPECIALISTS if s.domain is not Domain.DISCOVERY] + [_Exploding()]
    crashing = _assistant(conversations, shop_searcher, specialists=broken)
    with pytest.raises(RuntimeError, match="crashed midway"):
        await crashing.turn(sid, "show me t-shirts in red")
    after = conversations.load(sid)
    assert after == before


async def test_a_capable_model_reaches_the_specialist(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    seen: list[object] = []

    class Recording(_Exploding):
        async def handle(self, turn: TurnContext) -> Reply:
            seen.append(turn.model)
            return Reply("ok", self.domain)

    model = ScriptedModel([])
    specialists = [s for s in SPECIALISTS if s.domain is not Domain.DISCOVERY] + [Recording()]
    assistant = _assistant(memory_store, shop_searcher, specialists=specialists, model=model)
    await assistant.turn(assistant.open_session(), "show me t-shirts")
    assert seen == [model]


async def test_an_unknown_session_is_an_error_and_open_session_resumes_or_creates(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = _assistant(memory_store, shop_searcher)
    with pytest.raises(UnknownSession):
        await assistant.turn("nope", "show me t-shirts")
    assert assistant.open_session("mine") == "mine"
    await assistant.turn("mine", "show me t-shirts")
    assert assistant.open_session("mine") == "mine"
    assert len(memory_store.load("mine").messages) == 2


class _Stalling(_Exploding):
    """Changes the conversation, then waits on a backend that never answers."""

    async def handle(self, turn: TurnContext) -> Reply:
        turn.conversation.results = []
        turn.conversation.add_to_cart(ProductCard("p", "P", "v", Decimal("1.00"), "USD", True, 1))
        await asyncio.sleep(30)
        return Reply("never", self.domain)


class _ModelDown(_Exploding):
    async def handle(self, turn: TurnContext) -> Reply:
        turn.conversation.results = []
        raise ModelError("could not reach http://127.0.0.1:9/v1: connection refused")


@pytest.mark.parametrize("broken", [_Stalling(), _ModelDown()], ids=["slow", "down"])
async def test_a_slow_or_down_backend_gets_an_apology_and_changes_nothing(
    conversations: ConversationStore, shop_searcher: Searcher, broken: Specialist
) -> None:
    assistant = _assistant(conversations, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts")
    before = conversations.load(sid)
    others = [s for s in SPECIALISTS if s.domain is not Domain.DISCOVERY]
    failing = _assistant(conversations, shop_searcher, specialists=[*others, broken])
    failing.turn_timeout = 0.2
    reply = await failing.turn(sid, "show me t-shirts in red")
    assert "Sorry, I could not answer that" in reply.text and "Nothing was changed" in reply.text
    after = conversations.load(sid)
    assert (after.results, after.cart, after.pending) == (before.results, [], None)
    assert [m.text for m in after.messages[-2:]] == ["show me t-shirts in red", reply.text]


class _StoreQuestionsRouter:
    """Sends every turn but the first search to the store's questions, as a router may send
    "how long does it last?"."""

    def __init__(self) -> None:
        self.turns = 0

    async def route(self, text: str, context: RouteContext | None = None) -> Route:
        self.turns += 1
        domain = Domain.DISCOVERY if self.turns == 1 else Domain.STORE_QUESTIONS
        return Route(domain, 1.0, "embedding")


async def test_a_question_about_an_option_of_the_products_on_screen_is_answered_from_them(
    memory_store: ConversationStore, shop_searcher: Searcher
) -> None:
    assistant = Assistant(_StoreQuestionsRouter(), memory_store, searcher=shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    asked = await assistant.turn(sid, "what material are they made of?")
    assert asked.domain is Domain.DISCOVERY
    assert "cotton" in asked.text and "polyester" in asked.text
    policy = await assistant.turn(sid, "how long does shipping take?")
    assert policy.domain is Domain.STORE_QUESTIONS
