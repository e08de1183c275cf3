"""The provider-neutral model protocol every LLM call goes through.

Provider adapters translate these plain dataclasses to and from their wire formats; the
assistant, the tests and the benchmarks only ever see :class:`Model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..errors import ConfigurationError

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A model's request to run tool ``name`` with already-parsed JSON ``arguments``."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Message:
    """One conversation entry; ``tool_call_id`` links a ``tool`` message to its call."""

    role: Role
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model is shown it: name, description and JSON Schema of the arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    """The model's reply (an ``assistant`` message) and, when the provider reports it, usage."""

    message: Message
    usage: Usage | None = field(default=None)
    confidence: float | None = field(default=None)
    """The probability the model gave the least likely token of its reply (0 to 1), where the
    model reports it (the in-process llama.cpp model): a low value says it was unsure."""
    truncated: bool = field(default=False)
    """The reply stopped at its token bound, not by itself (OpenAI's ``finish_reason`` "length")."""


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a conversation, optionally calling tools."""

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion: ...


def refuse_tools(
    who: str, messages: list[Message], tools: list[ToolSpec] | None, *, hint: str = ""
) -> None:
    """Raise when a model without tool calling (``who``) is offered tools (``hint``: what to
    use instead) or sent tool calls or results."""
    if tools:
        raise ConfigurationError(f"{who} has no tool calling{hint}")
    if any(message.role == "tool" or message.tool_calls for message in messages):
        raise ConfigurationError(f"{who} cannot be sent tool calls or tool results")
