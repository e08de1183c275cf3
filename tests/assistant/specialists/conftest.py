"""Fixtures for the specialists: a conversation with products shown, one turn at a time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from cartagent.assistant import Conversation, ProductCard, Reply, StoredMessage, TurnContext
from cartagent.assistant.specialist import Specialist
from cartagent.tools import Toolkit, ToolResult
from tests.assistant.conftest import approve_on_paypal
from tests.conftest import START

__all__ = ["ScriptedPayPal", "approve_on_paypal", "days_after", "failed", "ok", "say"]

TEE = ProductCard("tee", "T-Shirt", "tee-red-l", Decimal("46.66"), "USD", True, 1, {"color": "red"})
MUG = ProductCard(
    "mug", "Coffee Mug", "mug-white", Decimal("12.00"), "USD", True, 2, {"color": "white"}
)
GONE = ProductCard("tee", "T-Shirt", "tee-blue-poly", Decimal("54.84"), "USD", False, 3, {})


@pytest.fixture
def shown() -> Conversation:
    """A conversation that has just shown the T-shirt, the mug and a sold-out T-shirt."""
    conversation = Conversation("s", "shopper", START)
    conversation.results = [TEE, MUG, GONE]
    return conversation


async def say(
    specialist: Specialist, conversation: Conversation, text: str, toolkit: Toolkit | None
) -> tuple[TurnContext, Reply]:
    """One turn straight to ``specialist``, its messages appended as the assistant would."""
    turn = TurnContext(text, conversation, toolkit=toolkit)
    reply = await specialist.handle(turn)
    conversation.messages.append(StoredMessage("user", text))
    conversation.messages.append(StoredMessage("assistant", reply.text, payload=reply.payload()))
    return turn, reply


def days_after(moment: datetime | None, days: int) -> Callable[[], datetime]:
    assert moment is not None
    later = moment + timedelta(days=days)
    return lambda: later.astimezone(UTC)


class ScriptedPayPal:
    """Stands in for the toolkit: each tool answers from its list in turn (a ToolResult, or a
    function of the arguments); every call is recorded."""

    def __init__(self, **script: list[Any]) -> None:
        self.script = {name: list(answers) for name, answers in script.items()}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        answer = self.script[name].pop(0)
        return answer(arguments) if callable(answer) else answer

    def named(self, name: str) -> list[dict[str, Any]]:
        return [arguments for called, arguments in self.calls if called == name]


def ok(**content: Any) -> ToolResult:
    """A tool's answer."""
    return ToolResult(content)


def failed(message: str, status: int = 500) -> ToolResult:
    """A tool's error, as the toolkit gives PayPal's."""
    return ToolResult({"error": "paypal_error", "message": message, "status": status}, True)
