"""Routing: the rule pre-pass, k-NN over example embeddings, context, and the model router."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartagent.assistant import Domain, EmbeddingRouter, ModelRouter, RouteContext
from cartagent.assistant.router import ROUTE_SCHEMA, Example, load_examples, rule_route
from cartagent.llm import Message
from cartagent.testing import HashingEmbedder, ScriptedModel

pytest.importorskip("numpy")
pytestmark = pytest.mark.anyio

HELD_OUT = Path(__file__).parent / "data" / "routes_heldout.jsonl"
AFTER_SEARCH = RouteContext(Domain.DISCOVERY, has_results=True)

EXAMPLES = [
    Example("show me red running shoes", Domain.DISCOVERY),
    Example("find a cheap coffee maker", Domain.DISCOVERY),
    Example("where is my order", Domain.ORDERS),
    Example("track my package", Domain.ORDERS),
    Example("I want to return my shoes", Domain.RETURNS_REFUNDS),
    Example("refund my broken kettle", Domain.RETURNS_REFUNDS),
    Example("tell me a joke", Domain.OUT_OF_SCOPE),
]


def _router(**options: float) -> EmbeddingRouter:
    return EmbeddingRouter(HashingEmbedder(512), EXAMPLES, k=1, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "the second one",
        "show me #2",
        "add the first to my cart",
        "the last one",
        "3",
        "the cheapest one",
        "compare the first two",
        "how do they differ?",
    ],
)
def test_a_pick_from_the_shown_results_is_discovery(text: str) -> None:
    route = rule_route(text, RouteContext(Domain.ORDERS, has_results=True))
    assert route is not None and route.domain is Domain.DISCOVERY and route.source == "rules"


def test_a_pick_without_results_on_screen_is_left_to_the_classifier() -> None:
    assert rule_route("the second one", RouteContext(Domain.DISCOVERY)) is None


@pytest.mark.parametrize(
    "text", ["cheaper", "in red", "under $40", "not polyester", "something less expensive"]
)
def test_a_short_refinement_after_a_search_is_discovery(text: str) -> None:
    route = rule_route(text, AFTER_SEARCH)
    assert route is not None and route.domain is Domain.DISCOVERY


@pytest.mark.parametrize("text", ["in red", "cheaper"])
def test_refinement_words_alone_do_not_route_without_a_search_before(text: str) -> None:
    assert rule_route(text, RouteContext(Domain.ORDERS)) is None


@pytest.mark.parametrize("text", ["a hoodie", "t-shirts and hoodies", "a red hoodie under $40"])
def test_a_message_that_only_names_products_is_discovery(text: str) -> None:
    route = rule_route(text, RouteContext())
    assert route is not None and route.domain is Domain.DISCOVERY
    # "Which item?" may have been asked: the answer "the hoodie" is for that specialist.
    for asking in (Domain.RETURNS_REFUNDS, Domain.CART_CHECKOUT):
        assert rule_route(text, RouteContext(asking)) is None
    assert rule_route("return the hoodie", RouteContext()) is None
    assert rule_route("my hoodie", RouteContext()) is None


def test_words_that_are_not_a_refinement_are_left_to_the_classifier() -> None:
    assert rule_route("where is my order", AFTER_SEARCH) is None
    assert rule_route("take the second one out of my cart", AFTER_SEARCH) is None


def test_the_nearest_examples_decide_the_domain() -> None:
    router = _router()
    assert router.classify("where is my order from monday").domain is Domain.ORDERS
    assert router.classify("I want to return my broken kettle").domain is Domain.RETURNS_REFUNDS
    route = router.classify("show me running shoes for trails")
    assert route.domain is Domain.DISCOVERY and route.source == "embedding"


def test_the_previous_domain_wins_a_near_tie() -> None:
    after_search = RouteContext(Domain.DISCOVERY)
    assert _router(tie_margin=0.0).classify("my shoes").domain is Domain.RETURNS_REFUNDS
    route = _router(tie_margin=0.5).classify("my shoes", after_search)
    assert route.domain is Domain.DISCOVERY and route.source == "context"


def test_nothing_similar_enough_is_out_of_scope() -> None:
    route = _router(min_similarity=0.3).classify("quantum chromodynamics lecture")
    assert route.domain is Domain.OUT_OF_SCOPE and route.source == "fallback"


@pytest.mark.parametrize(
    ("text", "wants"),
    [
        ("for my morning run i want music without wires flapping around", True),
        ("Ich will mit Krafttraining anfangen, was brauche ich da?", True),
        ("il me faudrait un aspirateur pour les poils du chat", True),
        ("what cam should i get for snorkeling", True),
        ("i want to hear a joke about quantum chromodynamics", False),  # to do, not a thing
        ("i need you to write a poem", False),
        ("quantum chromodynamics lecture", False),
    ],
)
def test_a_need_in_the_shoppers_words_is_a_search_not_out_of_scope(text: str, wants: bool) -> None:
    route = _router(min_similarity=0.99).classify(text)  # nothing is similar enough
    assert (route.domain is Domain.DISCOVERY) is wants
    assert route.source == ("wants" if wants else "fallback")


def test_examples_are_embedded_once() -> None:
    embedder = HashingEmbedder(64)
    router = EmbeddingRouter(embedder, EXAMPLES)
    router.classify("track it")
    router.classify("track my order")
    assert embedder.calls == len(EXAMPLES) + 2


def test_shipped_examples_cover_every_domain_without_duplicates() -> None:
    examples = load_examples()
    assert len(examples) >= 250
    texts = [e.text.casefold() for e in examples]
    assert len(set(texts)) == len(texts)
    for domain in Domain:
        assert sum(e.domain is domain for e in examples) >= 25, domain


def test_held_out_utterances_are_not_among_the_examples() -> None:
    shipped = {e.text.casefold() for e in load_examples()}
    held_out = [json.loads(line)["text"].casefold() for line in HELD_OUT.read_text().splitlines()]
    assert len(held_out) >= 80 and not shipped & set(held_out)


def test_a_bad_example_line_is_reported_with_its_number() -> None:
    with pytest.raises(ValueError, match="line 2"):
        load_examples('{"text": "hi", "domain": "discovery"}\n{"text": "x", "domain": "nope"}')


def _held_out() -> list[tuple[str, RouteContext, Domain]]:
    cases = []
    for line in HELD_OUT.read_text().splitlines():
        item = json.loads(line)
        previous = Domain(item["previous"]) if item.get("previous") else None
        context = RouteContext(previous, has_results=bool(item.get("has_results")))
        cases.append((item["text"], context, Domain(item["domain"])))
    return cases


def test_the_minilm_router_routes_held_out_utterances(minilm_router: EmbeddingRouter) -> None:
    cases = _held_out()
    right = sum(minilm_router.classify(text, ctx).domain is want for text, ctx, want in cases)
    # Measured 78/86 (0.91) when written; below 0.85 the examples or the method regressed.
    assert right / len(cases) >= 0.85, f"{right}/{len(cases)}"


@pytest.mark.parametrize("text", ["hi", "thanks!", "bye", "great, thank you"])
def test_small_talk_is_out_of_scope_whatever_came_before(
    minilm_router: EmbeddingRouter, text: str
) -> None:
    # Without the rule the MiniLM router sent "thanks" after a cart turn to the cart.
    after_the_cart = RouteContext(Domain.CART_CHECKOUT, has_results=True)
    assert rule_route(text, after_the_cart) is not None
    assert minilm_router.classify(text, after_the_cart).domain is Domain.OUT_OF_SCOPE
    assert rule_route("hi, show me red shoes", after_the_cart) is None


@pytest.mark.parametrize(
    "text",
    ["genial, gracias!!", "danke, tschüss", "merci, au revoir", "\U0001f44b", "figures. bye"],
)
def test_small_talk_in_any_of_the_shops_languages_is_ruled_out_of_scope(text: str) -> None:
    route = rule_route(text, AFTER_SEARCH)
    assert route is not None and route.domain is Domain.OUT_OF_SCOPE


@pytest.mark.parametrize(
    "text",
    [
        "just show me a damn laptop",
        "show me some fucking headphones",
        "stupid bot, i want sneakers",
        "this is crap, show me something cheaper",
    ],
)
def test_a_rude_request_is_still_a_request(minilm_router: EmbeddingRouter, text: str) -> None:
    assert minilm_router.classify(text, RouteContext(None)).domain is Domain.DISCOVERY


@pytest.mark.parametrize(
    "text", ["are any of them on sale?", "do you have any discount codes?", "got a promo code?"]
)
def test_sales_and_coupons_are_the_stores_questions(text: str) -> None:
    route = rule_route(text, AFTER_SEARCH)
    assert route is not None and route.domain is Domain.STORE_QUESTIONS
    assert rule_route("salesforce t-shirt", AFTER_SEARCH) is None
    assert rule_route("put the yoga mats on sale", AFTER_SEARCH) is None  # no question


@pytest.mark.parametrize("text", ["is it dimmable?", "what colors do they come in?"])
def test_questions_about_the_results_shown_are_discoverys(text: str) -> None:
    route = rule_route(text, AFTER_SEARCH)
    assert route is not None and route.domain is Domain.DISCOVERY
    assert rule_route(text, RouteContext(Domain.DISCOVERY)) is None  # nothing shown


def test_adding_a_kind_of_product_is_a_search_first() -> None:
    fresh = RouteContext(None)
    route = rule_route("also add a red t-shirt to my cart", fresh)
    assert route is not None and route.domain is Domain.DISCOVERY
    # More of one shown or in the cart, or a result picked: not a new product.
    assert rule_route("add another one of those to the basket", fresh) is None
    assert rule_route("add 2 more t-shirts", fresh) is None
    assert rule_route("put a yoga mat in my cart", fresh) is not None


# ------------------------------------------------------------------------- model router


def _answer(domain: str) -> Message:
    return Message("assistant", json.dumps({"domain": domain}))


async def test_the_model_router_asks_for_one_domain_of_the_enum() -> None:
    model = ScriptedModel([_answer("orders")])
    route = await ModelRouter(model).route("where's my parcel", RouteContext(Domain.DISCOVERY))
    assert route.domain is Domain.ORDERS and route.source == "model"
    call = model.calls[0]
    assert call.response_format is not None
    assert call.response_format["json_schema"]["schema"] == ROUTE_SCHEMA
    assert set(ROUTE_SCHEMA["properties"]["domain"]["enum"]) == {d.value for d in Domain}
    system = call.messages[0].content or ""
    assert "back_office" in system and "previous turn was about: discovery" in system
    assert call.messages[-1] == Message("user", "where's my parcel")


async def test_the_model_router_applies_the_rules_first() -> None:
    model = ScriptedModel([])
    route = await ModelRouter(model).route("the second one", AFTER_SEARCH)
    assert route.domain is Domain.DISCOVERY and not model.calls


@pytest.mark.parametrize("content", ['{"domain": "weather"}', "orders", '{"intent": "orders"}'])
async def test_an_answer_outside_the_enum_goes_to_the_fallback(content: str) -> None:
    model = ScriptedModel([Message("assistant", content)])
    route = await ModelRouter(model, fallback=_router()).route("track my package")
    assert route.domain is Domain.ORDERS and route.source == "embedding"


async def test_a_failing_model_without_fallback_routes_out_of_scope() -> None:
    model = ScriptedModel([])  # raises: nothing scripted
    route = await ModelRouter(model).route("track my package")
    assert route.domain is Domain.OUT_OF_SCOPE and route.source == "fallback"
