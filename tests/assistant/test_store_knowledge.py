"""Store knowledge: the policy documents, their sections, retrieval, and the specialist.

The retrieval questions below were written for the shipped policies. ``TUNING`` chose the
lexical weight and the threshold of :class:`StoreKnowledge`; ``HELD_OUT`` was written before
that choice and is measured, not tuned on.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from cartagent.assistant import Conversation, Domain, EmbeddingRouter, TurnContext
from cartagent.assistant.specialist import check_specialists
from cartagent.assistant.specialists import SPECIALISTS
from cartagent.assistant.specialists.store_questions.knowledge import (
    DOCUMENTS,
    StoreKnowledge,
    document_text,
    load_sections,
    split_sections,
)
from cartagent.assistant.specialists.store_questions.specialist import (
    DONT_KNOW,
    NOT_SET_UP,
    SUPPORT_EMAIL,
    StoreQuestionsSpecialist,
)
from cartagent.testing import HashingEmbedder

pytest.importorskip("numpy")
pytestmark = pytest.mark.anyio

# (question, document, sections that answer it)
Expected = tuple[str, str, frozenset[str]]


def _q(question: str, document: str, *sections: str) -> Expected:
    return question, document, frozenset(sections)


WARRANTY_LENGTH = ("Warranty period", "Which items are electronics and appliances")

TUNING: list[Expected] = [
    _q("how much is delivery", "shipping", "Shipping cost"),
    _q("can I send back shoes I wore?", "returns", "Return window"),
    _q("do you take Visa", "payments", "Payment methods"),
    _q("is my blender covered if it breaks after 6 months", "warranty", *WARRANTY_LENGTH),
    _q("do you ship to Canada", "shipping", "Where we ship"),
    _q("how long until my refund arrives", "returns", "Refund timing"),
    _q("when will my order arrive?", "shipping", "Delivery times"),
    _q("is shipping free?", "shipping", "Shipping cost"),
    _q("do you charge sales tax", "payments", "Sales tax"),
    _q("what's the tax rate", "payments", "Sales tax"),
    _q("can I cancel my order", "orders", "Changing or cancelling an order"),
    _q("can I swap my t-shirt for a bigger size", "returns", "Exchanges"),
    _q("my headphones arrived broken, what do I do", "returns", "Damaged or defective items"),
    _q(
        "does the warranty cover a cracked phone screen if I drop it",
        "warranty",
        "What is not covered",
    ),
    _q("how do I make a warranty claim", "warranty", "Making a warranty claim"),
    _q("do I get the shipping fee back when I return something", "returns", "What is refunded"),
    _q("how long do I have to return an item", "returns", "Return window"),
    _q("can I pay with Apple Pay", "payments", "Payment methods"),
    _q("when do you take the money from my account", "payments", "When you are charged"),
    _q("what currency are your prices in", "payments", "Prices and currency"),
    _q("how do I return something", "returns", "How to return an item"),
    _q("how can I track my package", "shipping", "Tracking your order"),
    _q("my parcel still hasn't arrived after two weeks", "shipping", "Late parcels"),
    _q("how do I contact customer service", "orders", "Contact"),
    _q("which products get the one year warranty?", "warranty", *WARRANTY_LENGTH),
    _q("do you deliver on weekends", "shipping", "Delivery times"),
    _q("can I change my order after I paid", "orders", "Changing or cancelling an order"),
    _q("how do I place an order", "orders", "Placing an order"),
    _q("is it safe to give you my card number", "payments", "When you are charged"),
    _q("will I get the tax back if I return it", "returns", "What is refunded"),
    _q("is there a warranty on clothes", "warranty", *WARRANTY_LENGTH),
    _q("what's the minimum order for free shipping", "shipping", "Shipping cost"),
    _q("can I pay by bank transfer", "payments", "Payment methods"),
    _q("can I pay in bitcoin", "payments", "Payment methods"),  # "no cryptocurrency"
    _q("can I exchange a jacket for a different colour", "returns", "Exchanges"),
    _q("how quickly do you dispatch orders", "shipping", "Delivery times"),
    _q("does the refund go back to my credit card", "returns", "Refund timing", "What is refunded"),
    _q("how long is the warranty on a laptop", "warranty", *WARRANTY_LENGTH),
    _q("do you accept mastercard", "payments", "Payment methods"),
    _q("what happens if my package arrives damaged", "returns", "Damaged or defective items"),
    _q("do you have a student discount", "payments", "Sales, discounts and coupons"),
    _q("can I get a discount code for my first order", "payments", "Sales, discounts and coupons"),
    _q("do you have a loyalty program", "payments", "Sales, discounts and coupons"),
]
TUNING_UNANSWERED = [
    "do you price match",
    "what's your CEO's name",
    "what are your store opening hours",
    "do you offer gift wrapping",
    "is your packaging recyclable",
    "where is your company headquartered",
    "are your products ethically sourced",
    "do you have a referral program",
    "are you hiring",
]
HELD_OUT: list[Expected] = [
    _q("what does shipping cost for a $30 order", "shipping", "Shipping cost"),
    _q("do you deliver to Mexico", "shipping", "Where we ship"),
    _q("I live in Alaska, can you ship there?", "shipping", "Where we ship"),
    _q("how many days does delivery take", "shipping", "Delivery times"),
    _q("I returned a jacket last week, when do I get my money", "returns", "Refund timing"),
    _q("can I return a laptop I opened and used", "returns", "Return window"),
    _q("is the shipping cost refunded if I send it back", "returns", "What is refunded"),
    _q("the coffee maker I got doesn't turn on", "returns", "Damaged or defective items"),
    _q("do you accept American Express", "payments", "Payment methods"),
    _q("are prices in dollars", "payments", "Prices and currency"),
    _q("how much tax will I pay", "payments", "Sales tax"),
    _q("is tax charged on shipping", "payments", "Sales tax", "Shipping cost"),
    _q("does the warranty cover water damage", "warranty", "What is not covered"),
    _q("how long is the warranty on running shoes", "warranty", *WARRANTY_LENGTH),
    _q("I want a different size of these sneakers", "returns", "Exchanges"),
    _q("can I still cancel, I haven't paid yet", "orders", "Changing or cancelling an order"),
    _q("what's your email address", "orders", "Contact"),
    _q("when is my card charged", "payments", "When you are charged"),
    _q("do I need a PayPal account to pay", "payments", "Payment methods"),
    _q("where's my package", "shipping", "Tracking your order"),
]
HELD_OUT_UNANSWERED = [
    "do you sell refurbished items",
    "can I buy in bulk for my company",
    "do you have a physical shop in New York",
    "is there a membership fee",
    "who makes your products",
    "do you have an affiliate program",
    "what is your privacy policy",
    "do you offer price adjustments if an item goes on sale",
]
# Known misses of the defaults on TUNING, kept out of the per-question tests below (they
# count in the accuracy tests): a near tie with "Damaged or defective items", and a
# question just under the threshold.
MISSED = {
    "do I get the shipping fee back when I return something",
    "can I swap my t-shirt for a bigger size",
}
NOT_REFUSED = {  # quoted a related section instead of "I don't know"
    "do you price match",
    "what are your store opening hours",
    "is your packaging recyclable",
    "can I get a discount code for my first order",
}


def _conversation() -> Conversation:
    return Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))


def _quote(text: str) -> str:
    """The quoted policy text of a reply."""
    found = re.search(r':\n"(.*)"$', text, re.DOTALL)
    assert found is not None, text
    return found.group(1)


# ---------------------------------------------------------------------- documents

SAMPLE = """# Sample policy

An introduction.

## First

One line.
Two lines.

### A detail

Kept in the first section.

## Empty

##   Last ##

The end.
"""


def test_a_document_splits_into_its_sections_verbatim() -> None:
    sections = split_sections("sample", SAMPLE)
    assert [(s.title, s.heading) for s in sections] == [
        ("Sample policy", "Sample policy"),
        ("Sample policy", "First"),
        ("Sample policy", "Last"),
    ]
    assert sections[0].text == "An introduction."
    assert sections[1].text == "One line.\nTwo lines.\n\n### A detail\n\nKept in the first section."
    assert all(s.document == "sample" and s.text in SAMPLE for s in sections)
    assert sections[2].passage() == "Sample policy: Last. The end."


@pytest.mark.parametrize("markdown", ["", "## Section\n\ntext", "no title\n\n## Section\n\ntext"])
def test_a_document_without_a_title_is_refused(markdown: str) -> None:
    with pytest.raises(ValueError, match="Title"):
        split_sections("bad", markdown)


def test_every_shipped_policy_has_titled_short_sections() -> None:
    sections = load_sections()
    assert {s.document for s in sections} == set(DOCUMENTS)
    for name in DOCUMENTS:
        mine = [s for s in sections if s.document == name]
        assert len(mine) >= 4, name
        assert len({s.heading for s in mine}) == len(mine), f"{name}: repeated heading"
        text = document_text(name)
        assert all(s.text in text and len(s.text) < 500 for s in mine)


def _section(document: str, heading: str) -> str:
    found = [s for s in load_sections() if s.document == document and s.heading == heading]
    assert len(found) == 1, (document, heading)
    return found[0].text


def test_the_policies_state_the_numbers_the_checkout_and_returns_code_use() -> None:
    assert "8% sales tax on the items" in _section("payments", "Sales tax")
    assert "not charged on shipping" in _section("payments", "Sales tax")
    assert "PayPal only" in _section("payments", "Payment methods")
    assert "US dollars (USD)" in _section("payments", "Prices and currency")
    charged = _section("payments", "When you are charged")
    assert "approve the payment on PayPal's page and then confirm it in chat" in charged
    cost = _section("shipping", "Shipping cost")
    assert "5.99 USD per order" in cost and "50.00 USD or more before tax" in cost
    times = _section("shipping", "Delivery times")
    assert "within 1 business day" in times and "3\u20137 business days" in times  # an en dash
    assert "United States only" in _section("shipping", "Where we ship")
    window = _section("returns", "Return window")
    assert "within 30 days of payment" in window and "unused and in its original" in window
    refunded = _section("returns", "What is refunded")
    assert "price and the sales tax" in refunded and "(PayPal)" in refunded
    assert "shipping charge is not refunded, unless the item arrived damaged" in refunded
    assert "within 5 business days of receiving your return" in _section("returns", "Refund timing")
    assert "starts the refund in chat once you confirm" in _section(
        "returns", "How to return an item"
    )
    assert "within 30 days of payment" in _section("returns", "Exchanges")
    period = _section("warranty", "Warranty period")
    assert "1-year limited warranty" in period and "90-day limited warranty" in period
    excluded = _section("warranty", "What is not covered")
    assert "accidental damage" in excluded and "wear and tear" in excluded
    cancel = _section("orders", "Changing or cancelling an order")
    assert "cancel an order free of charge until it is paid" in cancel
    assert SUPPORT_EMAIL in _section("orders", "Contact")


def test_the_policies_ship_as_package_data() -> None:
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8")
    assert re.search(r'"cartagent\.assistant" = \[[^]]*"policies/\*\.md"', pyproject)


# ------------------------------------------------------------ ranking, fake embedder

SECTIONS = split_sections(
    "shop",
    """# Shop policy

## Shipping cost

Shipping costs 5 dollars per order.

## Returns

Return an unused item within 30 days for a refund.

## Gift cards

Gift cards never expire.
""",
)


def test_the_section_sharing_the_question_words_ranks_first() -> None:
    knowledge = StoreKnowledge(HashingEmbedder(256), SECTIONS)
    ranked = knowledge.rank("what does shipping cost")
    assert ranked[0].section.heading == "Shipping cost"
    assert ranked[0].score == pytest.approx(ranked[0].dense + 0.3 * ranked[0].lexical)
    assert [m.score for m in ranked] == sorted((m.score for m in ranked), reverse=True)
    answer = knowledge.answer("can I return an item for a refund")
    assert answer is not None and answer.section.heading == "Returns"


def test_words_no_section_uses_weigh_against_a_match() -> None:
    knowledge = StoreKnowledge(HashingEmbedder(256), SECTIONS)
    returns = 1
    assert knowledge.lexical("how do I return an item", returns) == 1.0
    # "policy" is in every section (the title), "refurbished" in none: it weighs twice as much
    assert knowledge.lexical("refurbished policy", returns) == pytest.approx(1 / 3)
    assert knowledge.lexical("how do I", returns) == 0.0  # only question words


def test_a_question_below_the_threshold_is_not_answered() -> None:
    knowledge = StoreKnowledge(HashingEmbedder(256), SECTIONS)
    assert knowledge.answer("who is your chief executive") is None
    knowledge.threshold = -1.0
    assert knowledge.answer("who is your chief executive") is not None


def test_the_sections_are_embedded_once() -> None:
    embedder = HashingEmbedder(64)
    knowledge = StoreKnowledge(embedder, SECTIONS)
    knowledge.warm_up()
    knowledge.rank("shipping")
    knowledge.rank("returns")
    assert embedder.calls == len(SECTIONS) + 2


def test_a_knowledge_base_needs_sections_and_a_sane_weight() -> None:
    with pytest.raises(ValueError, match="section"):
        StoreKnowledge(HashingEmbedder(), [])
    with pytest.raises(ValueError, match="lexical_weight"):
        StoreKnowledge(HashingEmbedder(), SECTIONS, lexical_weight=-1)


# ------------------------------------------------------------ specialist, fake embedder


class _Missing:
    """An embedder whose model files are not installed."""

    dim = 384

    def embed(self, texts: object) -> object:
        raise FileNotFoundError("no model files")


async def test_the_specialist_quotes_the_section_and_names_it() -> None:
    specialist = StoreQuestionsSpecialist(HashingEmbedder(256))
    turn = TurnContext("do you ship to Canada or Mexico", _conversation())
    reply = await specialist.handle(turn)
    assert reply.domain is Domain.STORE_QUESTIONS
    assert reply.text.startswith('From our Shipping policy, "Where we ship":\n"')
    assert _quote(reply.text) in document_text("shipping")
    assert reply.data["policy"]["document"] == "shipping"
    assert reply.data["policy"]["section"] == "Where we ship"
    assert reply.data["policy"]["score"] >= 0.35
    assert turn.timings["retrieve"] > 0


async def test_the_specialist_says_it_does_not_know_rather_than_guess() -> None:
    specialist = StoreQuestionsSpecialist(HashingEmbedder(256))
    turn = TurnContext("who is your chief executive", _conversation())
    reply = await specialist.handle(turn)
    assert reply.text == DONT_KNOW
    assert SUPPORT_EMAIL in reply.text
    assert reply.data == {"policy": None}
    assert turn.timings["retrieve"] > 0


async def test_the_knowledge_base_is_built_once_per_specialist() -> None:
    embedder = HashingEmbedder(64)
    specialist = StoreQuestionsSpecialist(embedder)
    first = specialist.knowledge()
    await specialist.handle(TurnContext("is shipping free", _conversation()))
    assert specialist.knowledge() is first
    assert embedder.calls == len(first.sections) + 1


async def test_without_the_embedder_the_specialist_says_so_and_where_to_ask() -> None:
    specialist = StoreQuestionsSpecialist(_Missing())  # type: ignore[arg-type]
    reply = await specialist.handle(TurnContext("is shipping free", _conversation()))
    assert reply.text == NOT_SET_UP and SUPPORT_EMAIL in reply.text


def test_the_default_specialists_share_one_store_questions_specialist() -> None:
    specialist = StoreQuestionsSpecialist(HashingEmbedder())
    assert (specialist.name, specialist.tools, specialist.prompt) == (
        "store_questions",
        (),
        "store_questions.md",
    )
    by_domain = check_specialists(SPECIALISTS)
    policies = by_domain[Domain.STORE_QUESTIONS]
    assert isinstance(policies, StoreQuestionsSpecialist)
    for domain in (Domain.CART_CHECKOUT, Domain.ORDERS, Domain.RETURNS_REFUNDS):
        assert getattr(by_domain[domain], "policies", None) is policies


# ------------------------------------------------------------------ the real MiniLM


@pytest.fixture(scope="module")
def minilm_specialist(minilm_router: EmbeddingRouter) -> StoreQuestionsSpecialist:
    """The specialist on the router's MiniLM (one model for both), sections embedded."""
    specialist = StoreQuestionsSpecialist(minilm_router.embedder)
    specialist.knowledge()
    return specialist


@pytest.mark.parametrize(
    ("question", "document", "sections"), [e for e in TUNING if e[0] not in MISSED]
)
async def test_a_store_question_is_answered_from_its_policy_section(
    minilm_specialist: StoreQuestionsSpecialist,
    question: str,
    document: str,
    sections: frozenset[str],
) -> None:
    reply = await minilm_specialist.handle(TurnContext(question, _conversation()))
    policy = reply.data["policy"]
    assert policy is not None, reply.text
    assert (policy["document"], policy["section"]) in {(document, s) for s in sections}
    title = next(s.title for s in load_sections() if s.document == document)
    assert reply.text.startswith(f'From our {title}, "{policy["section"]}":')
    assert _quote(reply.text) in document_text(document)


@pytest.mark.parametrize("question", [q for q in TUNING_UNANSWERED if q not in NOT_REFUSED])
async def test_a_question_the_policies_do_not_answer_gets_i_dont_know(
    minilm_specialist: StoreQuestionsSpecialist, question: str
) -> None:
    reply = await minilm_specialist.handle(TurnContext(question, _conversation()))
    assert reply.text == DONT_KNOW


def _measure(
    knowledge: StoreKnowledge, answerable: list[Expected], unanswerable: list[str]
) -> tuple[int, int, int]:
    """Top-1 right, answered right (top-1 right and over the threshold), refused."""
    top1 = answered = 0
    for question, document, sections in answerable:
        best = knowledge.rank(question)[0]
        right = best.section.document == document and best.section.heading in sections
        top1 += right
        answered += right and best.score >= knowledge.threshold
    refused = sum(knowledge.answer(q) is None for q in unanswerable)
    return top1, answered, refused


def test_retrieval_accuracy_on_the_tuning_questions(
    minilm_specialist: StoreQuestionsSpecialist,
) -> None:
    top1, answered, refused = _measure(minilm_specialist.knowledge(), TUNING, TUNING_UNANSWERED)
    assert top1 >= 41 and answered >= 40 and refused >= 6  # of 43, 43, 9; measured 42, 41, 6


def test_retrieval_accuracy_on_held_out_questions(
    minilm_specialist: StoreQuestionsSpecialist,
) -> None:
    top1, answered, refused = _measure(minilm_specialist.knowledge(), HELD_OUT, HELD_OUT_UNANSWERED)
    assert top1 >= 16 and answered >= 14 and refused >= 4  # of 20, 20, 8; measured 17, 16, 5
