"""OpenAI function calling: definitions from the registry, and dispatching model tool calls."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cartagent.integrations import strict_compatible
from cartagent.integrations.openai_tools import dispatch, tools_json
from cartagent.tools import Toolkit

from .conftest import ITEMS

pytestmark = pytest.mark.anyio


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


async def test_definitions_are_exactly_the_registry_tools_in_chat_completions_shape(
    toolkit: Toolkit,
) -> None:
    definitions = tools_json(toolkit)

    assert [d["type"] for d in definitions] == ["function"] * len(toolkit.tools)
    assert [
        (d["function"]["name"], d["function"]["description"], d["function"]["parameters"])
        for d in definitions
    ] == [(t.name, t.description, t.input_schema()) for t in toolkit.tools]


async def test_strict_is_set_only_on_schemas_strict_mode_accepts_unchanged(
    toolkit: Toolkit,
) -> None:
    by_name = {d["function"]["name"]: d["function"] for d in tools_json(toolkit)}

    assert by_name["get_order"]["strict"] is True
    assert "strict" not in by_name["create_order"]  # optional arguments: not strict-compatible
    for function in by_name.values():
        assert function.get("strict", False) == strict_compatible(function["parameters"])


async def test_dispatching_sdk_tool_calls_creates_then_reads_an_order_in_the_sandbox(
    toolkit: Toolkit,
) -> None:
    openai_types = pytest.importorskip("openai.types.chat")
    tool_call = openai_types.ChatCompletionMessageFunctionToolCall

    created = await dispatch(
        toolkit,
        tool_call.model_validate(call("call_1", "create_order", {"items": ITEMS})),
    )
    order = orjson.loads(created["content"])
    fetched = await dispatch(
        toolkit, tool_call.model_validate(call("call_2", "get_order", {"order_id": order["id"]}))
    )

    assert created["role"] == "tool"
    assert created["tool_call_id"] == "call_1"
    assert order["status"] == "CREATED"
    assert order["amount"] == "25.00"
    assert fetched["tool_call_id"] == "call_2"
    assert orjson.loads(fetched["content"])["id"] == order["id"]


async def test_a_tool_call_in_dict_form_is_dispatched_too(toolkit: Toolkit) -> None:
    answer = await dispatch(toolkit, call("c", "create_order", {"items": ITEMS}))

    assert orjson.loads(answer["content"])["status"] == "CREATED"


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("create_order", {"items": []}, "invalid_arguments"),
        ("create_order", {"items": ITEMS, "colour": "red"}, "invalid_arguments"),
        ("create_order", '{"items": [', "invalid_arguments"),
        ("create_order", "[1, 2]", "invalid_arguments"),
        ("make_coffee", {}, "unknown_tool"),
    ],
)
async def test_bad_tool_calls_come_back_as_error_content_not_exceptions(
    toolkit: Toolkit, name: str, arguments: Any, error: str
) -> None:
    answer = await dispatch(toolkit, call("c", name, arguments))

    assert answer["tool_call_id"] == "c"
    assert orjson.loads(answer["content"])["error"] == error


async def test_arguments_already_parsed_into_an_object_are_accepted(toolkit: Toolkit) -> None:
    tool_call = {"id": "c", "function": {"name": "create_order", "arguments": {"items": ITEMS}}}

    answer = await dispatch(toolkit, tool_call)

    assert orjson.loads(answer["content"])["amount"] == "25.00"


async def test_empty_arguments_mean_no_arguments(toolkit: Toolkit) -> None:
    answer = await dispatch(toolkit, call("c", "get_order", ""))

    content = orjson.loads(answer["content"])
    assert content["error"] == "invalid_arguments"
    assert content["field"] == "order_id"
