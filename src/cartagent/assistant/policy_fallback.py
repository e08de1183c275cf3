"""General questions asked in a flow's domain ("how long do refunds take?") are answered from
the store's policies, so a question routed to checkout, orders or returns still gets the
quoted policy rather than a flow prompt that does not fit."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .domains import Domain
from .reply import Reply
from .specialist import TurnContext

if TYPE_CHECKING:
    from .specialists.store_questions.specialist import StoreQuestionsSpecialist

__all__ = ["is_question", "policy_answer"]

_QUESTION = re.compile(
    r"\?\s*$|^\s*(how|what|what's|when|where|which|can|could|do|does|is|are|will|would|why|"
    r"who|should)\b",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    return _QUESTION.search(text) is not None


async def policy_answer(
    policies: StoreQuestionsSpecialist | None, turn: TurnContext, domain: Domain
) -> Reply | None:
    """The policies' quoted answer to ``turn`` in ``domain``, or ``None`` when they have none."""
    if policies is None or not is_question(turn.text):
        return None
    reply = await policies.handle(turn)
    if not reply.data.get("policy"):
        return None
    return replace(reply, domain=domain)
