"""run_turn: the model calls tools through the toolkit until it answers in words."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import orjson
import pytest
from pydantic import Field

from cartagent.assistant import StepLimitExceeded, run_turn
from cartagent.llm import Message, ToolCall
from cartagent.paypal import AsyncPayPalClient
from cartagent.testing import ScriptedModel
from cartagent.tools import Toolkit, ToolkitConfig, tool
from cartagent.tools._models import Args
from cartagent.tools._tool import ToolContext


class NoteArgs(Args):
    text: str = Field(min_length=1, max_length=20, description="The note.")


@tool(family="notes", action="save")
async def save_note(ctx: ToolContext, args: NoteArgs) -> dict[str, Any]:
    """Save a note (a test tool)."""
    return {"saved": args.text, "on": ctx.today().isoformat()}


@tool(family="notes", action="delete", destructive=True)
async def delete_note(ctx: ToolContext, args: NoteArgs) -> dict[str, Any]:
    """Delete a note (a test tool; needs approval)."""
    return {"deleted": args.text}


TOOLS = (save_note, delete_note)
KIT = Toolkit(
    cast(AsyncPayPalClient, object()),
    TOOLS,
    config=ToolkitConfig.everything([(t.family, t.action) for t in TOOLS]),
)
ASK = [Message("user", "note that I like tea")]


def calls(*pairs: tuple[str, dict[str, Any]]) -> Message:
    return Message(
        "assistant",
        None,
        tool_calls=tuple(ToolCall(f"call_{i}", name, args) for i, (name, args) in enumerate(pairs)),
    )


def run(model: ScriptedModel, **kwargs: Any) -> list[Message]:
    return asyncio.run(run_turn(model, KIT, ASK, **kwargs))


def test_an_answer_without_tool_calls_ends_the_turn_at_once() -> None:
    model = ScriptedModel([Message("assistant", "Hello!")])

    assert run(model) == [Message("assistant", "Hello!")]
    assert model.calls[0].messages == ASK


def test_the_model_is_shown_every_enabled_tool_with_its_schema() -> None:
    model = ScriptedModel([Message("assistant", "ok")])

    run(model)

    assert [(s.name, s.description, s.parameters) for s in model.calls[0].tools or []] == [
        (t.name, t.description, t.input_schema()) for t in TOOLS
    ]


def test_tool_calls_run_through_the_toolkit_and_their_results_go_back_to_the_model() -> None:
    model = ScriptedModel(
        [
            calls(("save_note", {"text": "tea"}), ("save_note", {"text": "milk"})),
            Message("assistant", "Saved both."),
        ]
    )

    added = run(model)

    tool_messages = added[1:3]
    assert [m.role for m in added] == ["assistant", "tool", "tool", "assistant"]
    assert [m.tool_call_id for m in tool_messages] == ["call_0", "call_1"]
    assert [orjson.loads(m.content or "")["saved"] for m in tool_messages] == ["tea", "milk"]
    assert model.calls[1].messages == [*ASK, *added[:3]]
    assert added[-1].content == "Saved both."


def test_the_callers_messages_are_not_modified() -> None:
    conversation = list(ASK)

    asyncio.run(
        run_turn(
            ScriptedModel([calls(("save_note", {"text": "x"})), Message("assistant", "ok")]),
            KIT,
            conversation,
        )
    )

    assert conversation == ASK


def test_tool_errors_are_results_the_model_sees_not_exceptions() -> None:
    model = ScriptedModel(
        [
            calls(("save_note", {"text": ""}), ("delete_note", {"text": "x"}), ("fly", {})),
            Message("assistant", "Something went wrong."),
        ]
    )

    added = run(model)

    errors = [orjson.loads(m.content or "")["error"] for m in added[1:4]]
    assert errors == ["invalid_arguments", "approval", "unknown_tool"]


def test_a_model_that_keeps_calling_tools_is_stopped_after_max_steps() -> None:
    looping = ScriptedModel([calls(("save_note", {"text": "again"}))] * 3)

    with pytest.raises(StepLimitExceeded, match="still calling tools after 3 steps") as stopped:
        run(looping, max_steps=3)

    assert len(looping.calls) == 3
    assert len(stopped.value.messages) == 6


def test_a_tool_subset_is_all_the_model_is_offered_and_all_it_may_call() -> None:
    model = ScriptedModel(
        [
            calls(("delete_note", {"text": "tea"}), ("save_note", {"text": "tea"})),
            Message("assistant", "Saved it."),
        ]
    )

    added = run(model, tools=["save_note", "not_in_the_toolkit"])

    assert [s.name for s in model.calls[0].tools or []] == ["save_note"]
    refused, saved = (orjson.loads(m.content or "") for m in added[1:3])
    assert refused["error"] == "unknown_tool" and refused["available"] == ["save_note"]
    assert "delete_note" in refused["message"]
    assert saved == {"saved": "tea", "on": saved["on"]}
    with pytest.raises(TypeError, match="not one string"):
        run(ScriptedModel([Message("assistant", "ok")]), tools="save_note")
