"""Discovery: searches with context, relative prices, cards per variant, references."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from cartagent.assistant import Conversation, ProductCard, Reply, StoredMessage, TurnContext
from cartagent.assistant.specialists import DiscoverySpecialist
from cartagent.assistant.specialists.discovery import both_at_once, describe, ruled_out_too
from cartagent.catalog import Product, Variant
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.query import Exclusion, SearchQuery
from cartagent.retrieval.search import Searcher
from tests.assistant.conftest import SHOP

pytestmark = pytest.mark.anyio


def _conversation() -> Conversation:
    return Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))


async def _say(
    conversation: Conversation,
    searcher: Searcher | None,
    text: str,
    specialist: DiscoverySpecialist | None = None,
) -> tuple[TurnContext, Reply]:
    turn = TurnContext(text, conversation, searcher=searcher)
    reply = await (specialist or DiscoverySpecialist()).handle(turn)
    conversation.messages.append(StoredMessage("user", text))
    # What the assistant stores with the reply: its data and cards.
    conversation.messages.append(StoredMessage("assistant", reply.text, payload=reply.payload()))
    return turn, reply


async def test_each_matching_variant_is_a_card_in_stock_first(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    turn, reply = await _say(conversation, shop_searcher, "blue t-shirt under 60")
    cards = reply.cards
    assert [(c.variant_id, c.rank) for c in cards] == [
        ("tee-blue-m", 1),
        ("tee-blue-s", 2),
        ("tee-blue-poly", 3),
    ]
    assert cards[2].available is False
    assert conversation.results == list(cards)
    assert turn.timings["understand"] >= 0 and turn.timings["retrieve"] > 0


async def test_a_follow_up_refines_the_earlier_search(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "t-shirt")
    _, reply = await _say(conversation, shop_searcher, "not polyester")
    cards = reply.cards
    assert cards and all(c.id == "tee" and c.options["material"] == "cotton" for c in cards)


async def test_cheaper_means_cheaper_than_every_card_shown(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    two = DiscoverySpecialist(max_cards=2, per_product=1)
    await _say(conversation, shop_searcher, "most expensive clothing", two)
    shown = [c.price for c in conversation.results if c.price is not None]
    assert shown == [Decimal("79.00"), Decimal("53.43")]
    _, reply = await _say(conversation, shop_searcher, "cheaper")
    assert reply.cards and all(c.price is not None and c.price < min(shown) for c in reply.cards)
    assert [c.price for c in reply.cards] == sorted(c.price for c in reply.cards)  # cheapest first


async def test_nothing_cheaper_is_said_and_the_shown_list_kept(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    shown = list(conversation.results)
    _, reply = await _say(conversation, shop_searcher, "cheaper")
    assert reply.cards == ()
    assert "Nothing cheaper than 50.88 USD" in reply.text
    assert conversation.results == shown


async def test_cheaper_than_an_amount_is_that_bound_not_the_cards_prices(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")  # 50.88 and 53.43 USD shown
    _, reply = await _say(conversation, shop_searcher, "cheaper than 60?")
    assert "Nothing cheaper than" not in reply.text and "up to 60 USD" in reply.text
    assert reply.cards and all(c.price is not None and c.price <= 60 for c in reply.cards)
    assert any(c.price is not None and c.price > Decimal("50.88") for c in reply.cards)


async def test_more_expensive_is_dearer_than_every_card_shown(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "mug")
    _, reply = await _say(conversation, shop_searcher, "something more expensive")
    cards = reply.cards
    assert [c.variant_id for c in cards] == []
    assert "Nothing dearer than 14.50 USD" in reply.text


POLO = Product(
    id="polo",
    title="Polo Shirt",
    category=("Clothing", "Tops", "Polo Shirts"),
    variants=(Variant(id="polo-red", options={"color": "red"}, price=Decimal("30")),),
)


@pytest.fixture(scope="module")
def polo_searcher() -> Searcher:
    return Searcher(LexicalIndex.build([*SHOP, POLO]))


async def test_near_misses_follow_the_matches_saying_what_they_break(
    polo_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, reply = await _say(conversation, polo_searcher, "red t-shirt")
    assert reply.text == "1 exact match for red t-shirt, then 1 close alternative (not exact):"
    assert [(c.variant_id, c.rank, c.breaks) for c in reply.cards] == [
        ("tee-red-l", 1, ()),
        ("polo-red", 2, ("not a t-shirt",)),
    ]
    assert conversation.results == list(reply.cards)
    _, picked = await _say(conversation, polo_searcher, "add the second one to my cart")
    assert [line.variant_id for line in conversation.cart] == ["polo-red"], picked.text


async def test_with_no_match_the_near_misses_are_the_answer(polo_searcher: Searcher) -> None:
    _, reply = await _say(_conversation(), polo_searcher, "blue t-shirt under 40")
    assert (
        reply.text
        == "No exact match for blue t-shirt, up to 40 USD; the closest 2, and how each differs:"
    )
    first = reply.cards[0]
    assert (first.variant_id, first.breaks) == (
        "tee-blue-m",
        ("10.88 USD over your limit of 40 USD",),
    )
    none = DiscoverySpecialist(max_near=0)
    _, bare = await _say(_conversation(), polo_searcher, "blue t-shirt under 40", none)
    assert bare.cards == () and bare.text.startswith("No products match")


async def test_a_near_miss_card_survives_the_conversation_store() -> None:
    card = ProductCard("polo", "Polo Shirt", "polo-red", Decimal("30"), "USD", True, 2, {})
    near = replace(card, breaks=("not a t-shirt",))
    assert ProductCard.from_json(near.to_json()) == near
    assert ProductCard.from_json(card.to_json()).breaks == ()


async def test_references_resolve_against_the_last_list(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    for text, variant in [("the second one", "tee-blue-s"), ("show me #3", "tee-blue-poly")]:
        _, reply = await _say(conversation, shop_searcher, text)
        assert [c.variant_id for c in reply.cards] == [variant]
    _, last = await _say(conversation, shop_searcher, "the last one")
    assert last.cards[0].variant_id == "tee-blue-poly"
    _, missing = await _say(conversation, shop_searcher, "the fifth one")
    assert "pick a number from 1 to 3" in missing.text
    assert conversation.cart == []


async def test_shown_cards_are_compared_side_by_side(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    _, two = await _say(conversation, shop_searcher, "compare the first two")
    assert two.text.splitlines() == [
        "Comparing #1 and #2:",
        "- price: 50.88 USD vs 53.43 USD (#1 is 2.55 USD cheaper)",
        "- size: M vs S",
        "Same: color blue, material cotton.",
    ]
    assert [c.rank for c in two.cards] == [1, 2]
    _, other = await _say(conversation, shop_searcher, "what's the difference between #2 and #3?")
    assert "- material: cotton vs polyester" in other.text
    assert "- stock: in stock vs out of stock" in other.text
    _, ends = await _say(conversation, shop_searcher, "compare the first and the last")
    assert ends.text.startswith("Comparing #1 and #3:")
    _, every = await _say(conversation, shop_searcher, "compare them")
    assert every.text.startswith("Comparing #1 and #2 and #3:") and len(every.cards) == 3
    _, wrong = await _say(conversation, shop_searcher, "compare 1 and 7")
    assert wrong.text.startswith("I showed 3 results: compare numbers from 1 to 3")
    assert conversation.results == list(every.cards)  # the list shown is kept


async def test_a_question_about_options_is_answered_for_the_product_meant(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    _, sizes = await _say(conversation, shop_searcher, "what sizes does it come in?")
    # One product shown: it is meant, and the list stays (no variant was picked).
    assert sizes.text == "T-Shirt: size M, S, L, XL."
    assert len(sizes.cards) == 3
    await _say(conversation, shop_searcher, "the third one")
    _, materials = await _say(conversation, shop_searcher, "which materials are there?")
    assert materials.text == "T-Shirt: material cotton, polyester."
    assert [c.variant_id for c in materials.cards] == ["tee-blue-poly"]  # still the one meant
    assert conversation.results and conversation.cart == []
    # A near miss of another product beside the matches does not make "it" ambiguous.
    await _say(conversation, shop_searcher, "blue t-shirt")
    hoodie = ProductCard("hoodie", "Hoodie", "h", Decimal("40"), "USD", True, 4, breaks=("x",))
    conversation.results = [*conversation.results, hoodie]
    _, again = await _say(conversation, shop_searcher, "what colors does it come in?")
    assert again.text == "T-Shirt: color blue, red, black."


async def test_a_question_that_names_a_value_or_no_option_shown_is_a_search(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    _, red = await _say(conversation, shop_searcher, "what red t-shirts do you have?")
    assert red.cards and all(c.options["color"] == "red" for c in red.cards if not c.breaks)
    _, sizes = await _say(conversation, shop_searcher, "what sizes do you have?")
    assert sizes.text.startswith("T-Shirt: size")


async def test_bounds_that_cannot_both_hold_are_asked_about_and_the_answer_refines(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, clash = await _say(conversation, shop_searcher, "t-shirts under 10 but over 30")
    assert clash.text == (
        "Nothing costs more than 30 USD and less than 10 USD at once: from 30 USD, or up to 10 USD?"
    )
    assert not clash.cards
    _, answer = await _say(conversation, shop_searcher, "over 30")
    exact = [c for c in answer.cards if not c.breaks]
    assert exact and all(c.title == "T-Shirt" and (c.price or 0) >= 30 for c in exact)


async def test_a_kind_that_is_a_products_name_is_not_matched_by_where_others_are_filed() -> None:
    from cartagent.catalog import Product, Variant
    from cartagent.retrieval.catalog_search import catalog_searcher
    from cartagent.retrieval.rules import parse

    def product(pid: str, title: str, leaf: str) -> Product:
        variant = Variant(id=f"{pid}-1", price=Decimal(500), options={"color": "silver"})
        return Product(
            id=pid,
            title=title,
            category=("Electronics", "Computers & Tablets", leaf),
            variants=(variant,),
        )

    catalog = [product("lap", "Laptop", "Laptops"), product("tab", "Tablet", "Tablets")]
    searcher = catalog_searcher(catalog, parse, mode="lexical")
    _, reply = await _say(_conversation(), searcher, "a silver tablet")
    exact = [c.title for c in reply.cards if not c.breaks]
    assert exact == ["Tablet"]
    assert all(c.breaks == ("not a tablet",) for c in reply.cards if c.title == "Laptop")


async def test_a_kind_named_only_by_a_department_and_a_word_nothing_checks_is_no_match() -> None:
    from cartagent.catalog import Product, Variant
    from cartagent.retrieval.catalog_search import catalog_searcher
    from cartagent.retrieval.rules import parse

    def product(pid: str, title: str) -> Product:
        variant = Variant(id=f"{pid}-1", price=Decimal(80), options={"color": "black"})
        return Product(
            id=pid, title=title, category=("Travel", "Bags & Luggage"), variants=(variant,)
        )

    searcher = catalog_searcher(
        [product("pack", "Backpack"), product("case", "Luggage Set")], parse, mode="lexical"
    )
    _, bag = await _say(_conversation(), searcher, "a black bag")
    assert bag.cards and not any(c.breaks for c in bag.cards)  # filed under "Bags": matches
    # What a hybrid search finds for "a sleeping bag" (dense retrieval needs no word of it):
    verify = DiscoverySpecialist._verified
    asked = SearchQuery(category="bag", text="sleeping")
    sleeping, unknown = verify(list(bag.cards), asked, searcher)
    assert unknown == ["sleeping"]
    assert all(c.breaks == ("not checked: sleeping bag",) for c in sleeping)
    # A kind said in a product's name is no department's word: "a sleeping backpack" stands.
    named = SearchQuery(category="backpack", text="sleeping")
    kept, _ = verify(list(bag.cards), named, searcher)
    assert [c.title for c in kept if not c.breaks] == ["Backpack"]


async def test_a_search_whose_matches_are_all_one_kind_is_kept_as_a_search_for_it(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, reply = await _say(conversation, shop_searcher, "cotton, size L")
    assert {c.title for c in reply.cards if not c.breaks} == {"T-Shirt"}
    shown = conversation.shown_query()
    assert shown is not None and shown.category == "T-Shirt"


async def test_a_comparison_with_nothing_shown_asks_for_a_search(shop_searcher: Searcher) -> None:
    _, reply = await _say(_conversation(), shop_searcher, "compare the first two")
    assert reply.text.startswith("Search for products first")


async def test_adding_a_reference_fills_the_cart_and_refuses_out_of_stock(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt")
    await _say(conversation, shop_searcher, "add 2 of the first to my cart")
    _, again = await _say(conversation, shop_searcher, "add the first to my cart")
    assert "now 3 of it" in again.text and "152.64 USD" in again.text
    _, refused = await _say(conversation, shop_searcher, "add the third one to my cart")
    assert "out of stock" in refused.text
    assert [(line.variant_id, line.quantity) for line in conversation.cart] == [("tee-blue-m", 3)]
    assert conversation.cart[0].unit_price == Decimal("50.88")


async def test_a_reference_with_nothing_shown_asks_for_a_search(shop_searcher: Searcher) -> None:
    _, reply = await _say(_conversation(), shop_searcher, "the second one")
    assert "no list to pick from" in reply.text


async def test_a_request_with_nothing_to_search_for_asks_what_is_wanted(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, reply = await _say(conversation, shop_searcher, "cheaper")
    assert "What are you looking for" in reply.text
    assert conversation.results == []


async def test_earlier_searches_reach_the_understander_as_context(shop_searcher: Searcher) -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    def understand(request: str, *, context: tuple[str, ...] = ()) -> SearchQuery:
        seen.append((request, tuple(context)))
        return shop_searcher.understand(request, context=context)

    searcher = Searcher(shop_searcher.index, understand=understand)
    conversation = _conversation()
    await _say(conversation, searcher, "t-shirt")
    await _say(conversation, searcher, "in red")
    await _say(conversation, searcher, "cheaper")
    assert seen[1] == ("in red", ("t-shirt",))
    assert seen[2] == ("cheaper", ("t-shirt", "in red"))
    # the price the shown cards set is remembered with the request, for later follow-ups
    assert conversation.search_requests()[-1] == "in red"  # nothing was cheaper: not kept
    await _say(
        conversation, searcher, "the most expensive hoodie", DiscoverySpecialist(per_product=1)
    )
    _, cheaper = await _say(conversation, searcher, "cheaper")
    assert [c.variant_id for c in cheaper.cards] == ["hoodie-grey"]
    # the bound the shown cards set is kept with the request, for later follow-ups
    assert conversation.search_requests()[-1] == "cheaper (up to 78.99 USD)"


async def test_a_follow_up_is_read_against_the_query_on_screen(shop_searcher: Searcher) -> None:
    seen: list[tuple[str, SearchQuery | None]] = []

    class Refining:
        def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery:
            seen.append((request, None))
            return shop_searcher.understand(request, context=context)

        def refine(
            self, request: str, shown: SearchQuery, *, context: Sequence[str] = ()
        ) -> SearchQuery:
            seen.append((request, shown))
            return shop_searcher.understand(request, context=context)

    searcher = Searcher(shop_searcher.index, understand=Refining())
    conversation = _conversation()
    assert conversation.shown_query() is None
    _, first = await _say(conversation, searcher, "blue t-shirt under 60")
    await _say(conversation, searcher, "in red")
    ran = SearchQuery.model_validate(first.data["search"]["query"])
    assert seen == [("blue t-shirt under 60", None), ("in red", ran)]
    assert ran.price is not None and ran.price.max == 60
    # A query stored by a version that read queries otherwise is no query to refine.
    conversation.messages.append(
        StoredMessage("assistant", "old", payload={"search": {"query": {"price": "cheap"}}})
    )
    assert conversation.shown_query() is None


async def _exact(searcher: Searcher, request: str) -> list[ProductCard]:
    """The exact matches a first search for ``request`` shows."""
    _, shown = await _say(_conversation(), searcher, request)
    return [card for card in shown.cards if not card.breaks]


async def test_a_trade_name_of_a_value_is_checked_and_said_back_as_the_catalogs_value(
    tau_grounded_searcher: Searcher,
) -> None:
    turn = TurnContext(
        "Je cherche une liseuse avec la 4G", _conversation(), tau_grounded_searcher,
        language="fr",
    )  # fmt: skip
    reply = await DiscoverySpecialist().handle(turn)
    # This store's one e-reader is Wi-Fi only: checked against the value, not left unread.
    assert reply.cards[0].breaks == ("connectivity is Wi-Fi, not Wi-Fi + Cellular",)
    assert "Wi-Fi + Cellular" in reply.text and "4g" not in reply.text.casefold()


async def test_in_a_long_story_what_is_ruled_out_stands_over_a_mention(
    tau_grounded_searcher: Searcher,
) -> None:
    story = (
        "Right, so we finally moved into the new flat last month and the bathroom is tiny, "
        "the sink is small and my partner keeps complaining about the noise of my old brush "
        "in the mornings. I'd like an electric toothbrush, and please nothing white: the "
        "whole bathroom is white tiles and a white toothbrush would just vanish on the shelf. "
        "Something quiet would be lovely, and a long battery would help because I travel."
    )
    _, reply = await _say(_conversation(), tau_grounded_searcher, story)
    assert "cannot both hold" not in reply.text
    query = reply.data["search"]["query"]
    assert "white" not in [v.casefold() for v in query.get("options", {}).get("color", [])]
    assert {"field": "color", "value": "white"} in query["exclude"]


async def test_with_no_kind_said_ruling_out_a_value_asks_for_a_thing_with_that_option(
    tau_grounded_searcher: Searcher,
) -> None:
    # Running shoes have no connectivity to be wired: they are not what "without wires" asks.
    text = "for my morning run i want music without wires flapping around"
    _, reply = await _say(_conversation(), tau_grounded_searcher, text)
    assert not [c for c in reply.cards if not c.breaks and c.title == "Running Shoes"]
    shoes = [c for c in reply.cards if c.title == "Running Shoes"]
    assert all(c.breaks == ("no connectivity",) for c in shoes)


async def test_a_search_reply_says_where_the_turn_says_each_constraint(
    tau_grounded_searcher: Searcher,
) -> None:
    _, reply = await _say(_conversation(), tau_grounded_searcher, "a red shirt, size M")
    said = {c["field"]: (c["span"], c["how"]) for c in reply.data["constraints"]}
    assert said["option:color"] == ([2, 5], "said")
    assert said["category"][1] == "said"


async def test_a_word_in_another_language_nothing_checked_leaves_no_exact_match(
    tau_grounded_searcher: Searcher,
) -> None:
    words = "Ich suche Kopfhörer, faltbare bitte"
    german = TurnContext(words, _conversation(), tau_grounded_searcher, language="de")
    reply = await DiscoverySpecialist().handle(german)
    assert reply.cards and all(c.breaks for c in reply.cards)
    assert "Kein genauer Treffer" in reply.text and "faltbare" in reply.text
    # The same word in the catalog's language is most likely the shopper's story: still said,
    # but what fits the rest stays an exact match.
    exact = await _exact(tau_grounded_searcher, "headphones")
    query = SearchQuery(category="headphones", text="faltbare")
    verify = DiscoverySpecialist._verified
    english, unknown = verify(exact, query, tau_grounded_searcher)
    assert unknown == ["faltbare"] and exact and not any(c.breaks for c in english)
    foreign, _ = verify(exact, query, tau_grounded_searcher, foreign=words)
    assert all(c.breaks == ("not checked: faltbare",) for c in foreign)


async def test_a_common_word_of_the_turns_language_is_chat_not_a_requirement(
    tau_grounded_searcher: Searcher,
) -> None:
    exact = await _exact(tau_grounded_searcher, "headphones")
    verify = DiscoverySpecialist._verified
    query = SearchQuery(category="headphones", text="dazu")
    german, unknown = verify(exact, query, tau_grounded_searcher, foreign="Kopfhörer dazu",
                             language="de")  # fmt: skip
    assert unknown == ["dazu"] and exact and not any(c.breaks for c in german)
    # The same word is no common word of French: there it may be a requirement.
    french, _ = verify(exact, query, tau_grounded_searcher, foreign="casque dazu", language="fr")
    assert all(c.breaks == ("not checked: dazu",) for c in french)


async def test_an_option_named_in_another_language_with_no_value_leaves_no_exact_match(
    tau_grounded_searcher: Searcher,
) -> None:
    exact = await _exact(tau_grounded_searcher, "backpack")
    query = SearchQuery(category="backpack", text="compartment")
    verify = DiscoverySpecialist._verified
    english, _ = verify(exact, query, tau_grounded_searcher)
    assert exact and not any(c.breaks for c in english)
    german, _ = verify(exact, query, tau_grounded_searcher,
                            foreign="Rucksack mit Fach", language="de")  # fmt: skip
    assert not any(c.breaks for c in german)  # "Fach" is no gloss: nothing named an option
    glossed, _ = verify(exact, query, tau_grounded_searcher,
                             foreign="Rucksack mit Laptopfach", language="de")  # fmt: skip
    assert all(c.breaks == ("not checked: compartment",) for c in glossed)


async def test_without_a_searcher_it_says_search_is_not_set_up() -> None:
    _, reply = await _say(_conversation(), None, "blue t-shirt")
    assert "not set up" in reply.text


async def test_stock_price_and_features_of_the_product_meant(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt under 60")

    _, which = await _say(conversation, shop_searcher, "is it in stock?")
    _, gone = await _say(conversation, shop_searcher, "is the third one in stock?")
    _, price = await _say(conversation, shop_searcher, "how much is it?")
    _, made = await _say(conversation, shop_searcher, "is it polyester?")
    # The list shows one product: a question about the product needs no number.
    _, cotton = await _say(conversation, shop_searcher, "is the first one cotton?")

    # "It" points at none of the three cards: each is answered, as a clerk would.
    lines = which.text.splitlines()
    assert [line.split(":")[0] for line in lines] == ["#1", "#2", "#3"]
    assert lines[0] == "#1: Yes: T-Shirt (blue, M, cotton) is in stock, 50.88 USD."
    assert lines[2].startswith("#3: No: T-Shirt (blue, S, polyester) is sold out.")
    assert len(which.cards) == 3
    assert gone.text == (
        "No: T-Shirt (blue, S, polyester) is sold out. In stock: blue, M, cotton (50.88 USD); "
        "blue, S, cotton (53.43 USD); red, L, cotton (46.66 USD) and 1 more."
    )
    assert price.text.startswith("T-Shirt (blue, S, polyester) costs 54.84 USD (T-Shirt costs")
    assert price.text.endswith("it is sold out. Tax and shipping are added at checkout.")
    assert made.text == "Yes: T-Shirt (blue, S, polyester) has material polyester."
    assert cotton.text == "Yes: T-Shirt (blue, M, cotton) has material cotton."
    assert [c.variant_id for c in cotton.cards] == ["tee-blue-m"]


async def test_more_shows_the_next_matches_then_says_there_are_no_more(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, first = await _say(conversation, shop_searcher, "t-shirt")
    _, more = await _say(conversation, shop_searcher, "show me more")
    _, none = await _say(conversation, shop_searcher, "any others?")

    assert len(first.cards) == 3 and {c.id for c in first.cards} == {"tee"}
    # The other two versions of the one T-shirt, numbered from 1 for "the first one".
    assert more.text == "2 more matches for t-shirt:"
    assert [c.rank for c in more.cards] == [1, 2]
    every = {c.variant_id for c in (*first.cards, *more.cards)}
    assert every == {v.id for v in SHOP[0].variants}
    assert none.text.startswith("That is every match for t-shirt.")
    assert conversation.results == list(more.cards)
    _, picked = await _say(conversation, shop_searcher, "the first one")
    assert picked.cards[0].variant_id == more.cards[0].variant_id


async def test_more_without_a_search_asks_what_for(shop_searcher: Searcher) -> None:
    _, reply = await _say(_conversation(), shop_searcher, "show me more")
    assert reply.text == "More of what? Tell me what you are looking for."


# ------------------------------------------------------------------ honest matches

_LAPTOP = Product(
    id="laptop",
    title="Laptop",
    category=("Electronics", "Laptops"),
    variants=(
        Variant(id="i5-16", price=Decimal("900"), options={"processor": "i5", "ram": "16GB"}),
        Variant(id="i7-32", price=Decimal("1500"), options={"processor": "i7", "ram": "32GB"}),
    ),
)
_BAG = Product(
    id="bag",
    title="Backpack",
    category=("Bags", "Backpacks"),
    description="Made for the daily commute.",
    variants=(
        Variant(id="camera", price=Decimal("80"), options={"compartment": "camera"}),
        Variant(id="hiking", price=Decimal("70"), options={"compartment": "hydration"}),
    ),
)


@pytest.fixture(scope="module")
def grounded_searcher() -> Searcher:
    from cartagent.retrieval.catalog_search import catalog_searcher
    from cartagent.retrieval.rules import parse

    return catalog_searcher([_LAPTOP, _BAG], parse, mode="lexical")


def _claimed(reply: Reply) -> list[str | None]:
    return [card.variant_id for card in reply.cards if not card.breaks]


async def test_no_variant_with_all_that_was_asked_is_no_exact_match(
    grounded_searcher: Searcher,
) -> None:
    _, reply = await _say(_conversation(), grounded_searcher, "laptop with an i7 and 16gb ram")
    assert _claimed(reply) == []
    assert reply.text.startswith("No exact match for 16GB i7 laptop")
    first = reply.cards[0]
    assert first.variant_id in ("i5-16", "i7-32") and first.breaks
    assert any(b in first.breaks for b in ("processor is i5, not i7", "ram is 32GB, not 16GB"))


async def test_a_word_the_catalog_uses_that_a_card_lacks_makes_it_no_exact_match(
    grounded_searcher: Searcher,
) -> None:
    # "laptop" here is no compartment the bags have: nothing checks it but the card's words
    _, reply = await _say(_conversation(), grounded_searcher, "backpack for my laptop")
    assert _claimed(reply) == []
    assert reply.text.startswith("No exact match for backpack laptop")


async def test_what_the_product_is_to_come_with_is_a_requirement_even_in_unknown_words(
    grounded_searcher: Searcher,
) -> None:
    _, reply = await _say(_conversation(), grounded_searcher, "a backpack with a water bladder")
    assert _claimed(reply) == []
    assert reply.text.startswith("No exact match for backpack (I could not check: water, bladder)")


@pytest.mark.parametrize(
    ("said", "unknown", "asked"),
    [
        ("a 60% keyboard with a number pad", ["number", "pad"], ["number", "pad"]),
        ("thermostat that works with siri", ["works", "siri"], ["siri"]),
        ("Rucksack mit Trinkblase", ["trinkblase"], ["trinkblase"]),
        # a part with a word that was understood is checked by it
        ("office chair with arms that adjust", ["arms"], []),
        ("camping with my kids", ["kids"], []),
        ("what's with all this sold out garbage", ["sold", "garbage"], []),
    ],
)
def test_the_parts_a_product_is_to_come_with_are_read(
    said: str, unknown: list[str], asked: list[str]
) -> None:
    from cartagent.assistant.specialists.discovery import _asked_with

    assert _asked_with(said, unknown) == asked


async def test_words_the_catalog_never_uses_check_nothing_and_are_said(
    grounded_searcher: Searcher,
) -> None:
    _, vague = await _say(_conversation(), grounded_searcher, "something for my commute")
    assert _claimed(vague) == []
    assert all(card.breaks == ("not checked: commute",) for card in vague.cards)
    _, said = await _say(_conversation(), grounded_searcher, "a backpack for my commute")
    assert set(_claimed(said)) == {"camera", "hiking"}
    assert said.text.startswith("2 exact matches for backpack (I could not check: commute)")


async def test_unchecked_words_are_said_once_on_their_turn_and_a_long_list_is_cut(
    grounded_searcher: Searcher,
) -> None:
    conversation = _conversation()
    _, first = await _say(conversation, grounded_searcher, "A Backpack for my Commute")
    assert "(I could not check: commute)" in first.text
    assert first.data["search"]["request"] == "A Backpack for my Commute"  # as it was said
    _, later = await _say(conversation, grounded_searcher, "under 1000")
    assert later.text.startswith("2 exact matches for backpack, up to 1000 USD")
    assert "could not check" not in later.text  # "commute" was said back already
    story = " ".join(f"word{n}" for n in "abcdefghijkl")
    _, long = await _say(_conversation(), grounded_searcher, f"a backpack, {story}")
    assert (
        "(I could not check: worda, wordb, wordc, wordd, worde, wordf, wordg, wordh and 4 more)"
        in long.text
    )
    # A common word of the shopper's language is chat, not said back as unchecked.
    french = TurnContext(
        "un sac à dos pour mon appart, dans ma ville", _conversation(),
        searcher=grounded_searcher, language="fr",
    )  # fmt: skip
    said = (await DiscoverySpecialist().handle(french)).text
    unchecked = said.split("(")[-1]
    assert "appart" in unchecked and "dans" not in unchecked and "ville" not in unchecked


async def test_constraints_that_fit_several_kinds_ask_which_kind(
    grounded_searcher: Searcher,
) -> None:
    _, reply = await _say(_conversation(), grounded_searcher, "anything under 1000")
    assert _claimed(reply) == [] and reply.cards
    assert reply.text.startswith("Which kind of product do you mean? Several kinds have")
    _, one_kind = await _say(_conversation(), grounded_searcher, "a backpack under 1000")
    assert set(_claimed(one_kind)) == {"camera", "hiking"}


async def test_a_follow_up_naming_no_kind_stays_with_the_kind_on_screen(
    grounded_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, grounded_searcher, "show me something for the daily commute")
    _, reply = await _say(conversation, grounded_searcher, "only the camera ones")
    assert _claimed(reply) == ["camera"], reply.text


@pytest.mark.parametrize(
    ("text", "options", "clash"),
    [
        (
            "polarized sunglasses with non-polarized lenses please",
            {"lens type": ["polarized", "non-polarized"]},
            ("lens type", "polarized", "non-polarized"),
        ),
        (
            "hard cover notebook, the bendy soft cover kind",
            {"cover type": ["hard cover", "soft cover"]},
            ("cover type", "hard cover", "soft cover"),
        ),
        (
            "hard cover or soft cover, either is fine",
            {"cover type": ["hard cover", "soft cover"]},
            None,
        ),
        ("A5/A4 notebook", {"size": ["A5", "A4"]}, None),
        ("only non-polarized ones", {"lens type": ["non-polarized", "polarized"]}, None),
        ("nylon and leather backpacks", {"material": ["nylon", "leather"]}, None),  # not opposites
        (
            "a robot vacuum, but an upright one i push around myself",
            {"type": ["robotic", "upright"]},
            ("type", "robotic", "upright"),
        ),
        ("ein Rennrad, aber ein Mountainbike", {"type": ["road", "mountain"]}, None),  # unnamed
        ("a red shirt, but show me blue or green", {"color": ["red", "blue", "green"]}, None),
    ],
)
def test_two_opposite_values_said_at_once_are_a_contradiction(
    text: str, options: dict[str, list[str]], clash: tuple[str, str, str] | None
) -> None:
    assert both_at_once(SearchQuery(options=options), text) == clash


async def test_a_contradiction_is_asked_about_not_searched(tau_grounded_searcher: Searcher) -> None:
    text = "hard cover notebook, the bendy soft cover kind"
    _, reply = await _say(_conversation(), tau_grounded_searcher, text)
    assert reply.text.startswith("hard cover or soft cover? A product has one cover type")
    assert not reply.cards
    # The answer refines the search asked about: still notebooks.
    conversation = _conversation()
    await _say(conversation, tau_grounded_searcher, text)
    _, answer = await _say(conversation, tau_grounded_searcher, "soft cover")
    exact = [c for c in answer.cards if not c.breaks]
    assert exact and all(c.title == "Notebook" for c in exact)
    assert all(c.options["cover type"] == "soft cover" for c in exact)


def test_a_value_asked_for_and_ruled_out_is_found_with_the_word_that_ruled_it_out() -> None:
    navy = SearchQuery(
        options={"color": ["navy"]},
        exclude=[Exclusion(field="color", value="blue"), Exclusion(field="color", value="navy")],
    )
    assert ruled_out_too(navy) == ("navy", "blue")
    other = SearchQuery(
        options={"color": ["navy"]}, exclude=[Exclusion(field="size", value="navy")]
    )
    assert ruled_out_too(other) is None


async def test_a_value_asked_for_and_ruled_out_says_both_cannot_hold(
    tau_grounded_searcher: Searcher,
) -> None:
    _, reply = await _say(_conversation(), tau_grounded_searcher, "a red shirt that isn't red")
    assert reply.text.startswith("Red and not red cannot both hold. No exact match")
    german = TurnContext(
        "Ein Rucksack in Navy, aber nichts Blaues", _conversation(), tau_grounded_searcher,
        language="de",
    )  # fmt: skip
    said = (await DiscoverySpecialist().handle(german)).text
    assert said.startswith("Navy und nicht blue geht nicht zugleich.")


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (SearchQuery(category="headphones", text="bitte kabellose"), "headphones kabellose"),
        (
            SearchQuery(category="hiking boots", text="sorry", options={"size": ["10"]}),
            "10 hiking boots",
        ),
        (
            SearchQuery(category="notebook", text="ok then, A5 please", options={"size": ["A5"]}),
            "A5 notebook",
        ),
        (
            SearchQuery(
                category="hiking boots",
                text="non-waterproof",
                exclude=[Exclusion(field="waterproof", value="yes")],
            ),
            "hiking boots, not waterproof",
        ),
    ],
)
def test_the_request_is_said_back_without_the_chat_around_it(query: SearchQuery, said: str) -> None:
    assert describe(query) == said


async def test_a_version_asked_about_by_its_options_is_answered_and_shown_as_no_match(
    shop_searcher: Searcher,
) -> None:
    conversation = _conversation()
    await _say(conversation, shop_searcher, "blue t-shirt under 60")
    _, reply = await _say(conversation, shop_searcher, "does the polyester one come in red?")
    # "The polyester one" is the one card with polyester; red keeps none of its other options.
    assert [card.options["material"] for card in reply.cards] == ["polyester"]
    assert reply.cards[0].breaks == ("not red",)
    assert reply.text.startswith("Not like this one (S, polyester): T-Shirt in red comes as:")


def test_what_is_said_back_leaves_out_words_a_value_says_and_units_already_read() -> None:
    from cartagent.assistant.specialists.discovery import _said_back

    query = SearchQuery(
        category="laptop", options={"ram": ["16GB"], "set type": ["adjustable"]},
        text="w gigs adjustible commute damn",
    )  # fmt: skip
    assert _said_back(query, ["damn"]).text == "commute"


@pytest.mark.parametrize(
    "question",
    [
        "does it come in another colour than red?",
        "any other color than red?",
        "in anything but red",
    ],
)
async def test_another_value_than_the_one_shown_is_a_search_without_it(
    shop_searcher: Searcher, question: str
) -> None:
    conversation = _conversation()
    _, red = await _say(conversation, shop_searcher, "a red cotton t-shirt")
    assert red.cards and all(c.options["color"] == "red" for c in red.cards)
    _, other = await _say(conversation, shop_searcher, question)
    exact = [c for c in other.cards if not c.breaks]
    assert exact and all(c.id == "tee" and c.options["color"] != "red" for c in exact)
    assert all(c.options["material"] == "cotton" for c in exact)  # the rest is kept


async def test_with_one_card_shown_x_or_y_asks_which_it_is(shop_searcher: Searcher) -> None:
    conversation = _conversation()
    _, one = await _say(conversation, shop_searcher, "a red cotton t-shirt")
    assert len(one.cards) == 1 and one.cards[0].options["material"] == "cotton"
    _, which = await _say(conversation, shop_searcher, "cotton or polyester?")
    assert which.text == "#1, T-Shirt, has material cotton." and len(which.cards) == 1
    # Not a question: a refinement, as before.
    _, refined = await _say(conversation, shop_searcher, "cotton or polyester")
    assert refined.text != which.text
