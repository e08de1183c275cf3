"""One assistant turn: let the model call tools until it answers in words."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ..errors import StepLimitExceeded
from ..llm import Message, Model, ToolSpec
from ..tools import Tool, Toolkit, ToolResult


def tool_specs(tools: Sequence[Tool[Any]]) -> list[ToolSpec]:
    return [ToolSpec(t.name, t.description, t.input_schema()) for t in tools]


async def run_turn(
    model: Model,
    toolkit: Toolkit,
    messages: Sequence[Message],
    *,
    max_steps: int = 8,
    tools: Collection[str] | None = None,
) -> list[Message]:
    """Run the conversation to the model's next plain answer; return the messages it added.

    Every tool call the model makes goes through ``toolkit.call`` (so approvals, spend limits
    and argument validation apply) and its result is sent back as a ``tool`` message; tool
    errors are results the model sees, never exceptions. ``messages`` is not modified.
    Raises :class:`StepLimitExceeded` when the model has not answered after ``max_steps``
    replies, which stops a model stuck in a tool-calling loop.

    ``tools`` restricts the turn to those of the toolkit's tools: only they are offered, and
    a call to any other comes back to the model as an ``unknown_tool`` error result.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    if isinstance(tools, str):  # "save_note" would otherwise allow every substring of it
        raise TypeError("tools must be a collection of tool names, not one string")
    offered = [t for t in toolkit.tools if tools is None or t.name in tools]
    allowed = {t.name for t in offered}
    specs = tool_specs(offered)
    conversation = list(messages)
    added: list[Message] = []
    for _ in range(max_steps):
        reply = (await model.complete(conversation, tools=specs)).message
        conversation.append(reply)
        added.append(reply)
        if not reply.tool_calls:
            return added
        for call in reply.tool_calls:
            if tools is not None and call.name not in allowed:
                result = _not_offered(call.name, allowed)
            else:
                result = await toolkit.call(call.name, call.arguments)
            answer = Message("tool", result.text, tool_call_id=call.id)
            conversation.append(answer)
            added.append(answer)
    raise StepLimitExceeded(
        f"the model was still calling tools after {max_steps} steps "
        f"(last called: {', '.join(c.name for c in reply.tool_calls)})",
        messages=added,
    )


def _not_offered(name: str, allowed: Collection[str]) -> ToolResult:
    return ToolResult(
        {
            "error": "unknown_tool",
            "message": f"no tool {name!r} in this turn",
            "available": sorted(allowed),
        },
        True,
    )
