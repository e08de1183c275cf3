"""The Model protocol and the scripted test doubles that implement it."""

from __future__ import annotations

import asyncio

import pytest

from cartagent.llm import Completion, Message, Model, ToolCall, ToolSpec, Usage
from cartagent.testing import FunctionModel, ScriptedModel, ScriptExhausted

HELLO = Message("user", "hello")
SPEC = ToolSpec("get_order", "Show an order.", {"type": "object", "properties": {}})


def test_the_test_doubles_satisfy_the_model_protocol() -> None:
    assert isinstance(ScriptedModel([]), Model)
    assert isinstance(FunctionModel(lambda messages, tools: Message("assistant", "hi")), Model)


def test_a_scripted_model_replies_in_order_and_records_what_it_was_sent() -> None:
    model = ScriptedModel([Message("assistant", "one"), Message("assistant", "two")])
    conversation = [HELLO]

    first = asyncio.run(model.complete(conversation, tools=[SPEC]))
    conversation += [first.message, Message("user", "again")]
    second = asyncio.run(model.complete(conversation, response_format={"type": "json_object"}))

    assert [first.message.content, second.message.content] == ["one", "two"]
    assert [call.messages for call in model.calls] == [[HELLO], conversation]
    assert model.calls[0].tools == [SPEC]
    assert model.calls[1].tools is None
    assert model.calls[1].response_format == {"type": "json_object"}
    assert model.remaining == 0


def test_recorded_messages_are_a_snapshot_of_the_conversation_at_the_time() -> None:
    model = ScriptedModel([Message("assistant", "ok")])
    conversation = [HELLO]

    asyncio.run(model.complete(conversation))
    conversation.append(Message("user", "later"))

    assert model.calls[0].messages == [HELLO]


def test_a_callable_turn_builds_its_reply_from_the_conversation_it_is_sent() -> None:
    model = ScriptedModel(
        [lambda messages: Message("assistant", f"you said {messages[-1].content}")]
    )

    reply = asyncio.run(model.complete([HELLO]))

    assert reply == Completion(Message("assistant", "you said hello"))


def test_running_out_of_script_is_a_clear_error() -> None:
    model = ScriptedModel([Message("assistant", "only")])
    asyncio.run(model.complete([HELLO]))

    with pytest.raises(ScriptExhausted, match=r"called 2 times but scripted only 1 turns"):
        asyncio.run(model.complete([HELLO, Message("user", "more")]))
    assert len(model.calls) == 1


def test_a_function_model_answers_with_its_function_sync_or_async() -> None:
    async def echo(messages: list[Message], tools: list[ToolSpec] | None) -> Message:
        return Message("assistant", f"{len(messages)} messages, {len(tools or [])} tools")

    sync = FunctionModel(lambda messages, tools: Message("assistant", messages[-1].content))
    asynchronous = FunctionModel(echo)

    assert asyncio.run(sync.complete([HELLO])).message.content == "hello"
    assert asyncio.run(asynchronous.complete([HELLO], tools=[SPEC])).message.content == (
        "1 messages, 1 tools"
    )
    assert asynchronous.calls[0].tools == [SPEC]


def test_messages_carry_tool_calls_and_usage_adds_up() -> None:
    call = ToolCall("call_1", "get_order", {"order_id": "O-1"})
    asked = Message("assistant", None, tool_calls=(call,))
    answered = Message("tool", '{"id": "O-1"}', tool_call_id="call_1")

    assert asked.tool_calls[0].arguments == {"order_id": "O-1"}
    assert answered.tool_call_id == asked.tool_calls[0].id
    assert Usage(input_tokens=120, output_tokens=30).total_tokens == 150
