"""A general question routed to checkout, orders or returns is answered from the policies."""

from __future__ import annotations

import pytest

from cartagent.assistant import Conversation, EmbeddingRouter
from cartagent.assistant.policy_fallback import is_question
from cartagent.assistant.specialists import (
    CheckoutSpecialist,
    OrdersSpecialist,
    ReturnsSpecialist,
    StoreQuestionsSpecialist,
)

from .conftest import say

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def policies(minilm_router: EmbeddingRouter) -> StoreQuestionsSpecialist:
    return StoreQuestionsSpecialist(minilm_router.embedder)


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("how long do refunds take?", True),
        ("Can I pay with Apple Pay", True),
        ("return the mug", False),
        ("checkout", False),
        ("is shipping free", True),
    ],
)
def test_questions_are_told_from_commands(text: str, question: bool) -> None:
    assert is_question(text) is question


async def test_flows_quote_the_policy_for_general_questions(
    shown: Conversation, policies: StoreQuestionsSpecialist
) -> None:
    cases = [
        (ReturnsSpecialist(policies=policies), "how long until my refund arrives?", "Refund"),
        (OrdersSpecialist(policies=policies), "how many days does delivery take?", "Delivery"),
        (CheckoutSpecialist(policies=policies), "can I pay with Apple Pay?", "Payment"),
    ]
    for specialist, text, heading in cases:
        _, reply = await say(specialist, shown, text, None)
        assert reply.domain is specialist.domain
        assert reply.text.startswith("From our ") and heading in reply.data["policy"]["section"]


async def test_commands_still_run_the_flow(
    shown: Conversation, policies: StoreQuestionsSpecialist
) -> None:
    checkout = CheckoutSpecialist(policies=policies)
    _, added = await say(checkout, shown, "add the first one to my cart", None)
    assert added.text.startswith("Added 1 x T-Shirt")
    _, cart = await say(checkout, shown, "what's in my cart?", None)
    assert cart.text.startswith("Your cart (1 item)")
    _, returns = await say(ReturnsSpecialist(policies=policies), shown, "return the mug", None)
    assert "I don't see a paid order" in returns.text
