"""LangChain StructuredTools: the registry's tools, called through LangChain's own invoke."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cartagent.tools import Toolkit

from .conftest import ITEMS

pytest.importorskip("langchain_core")

from langchain_core.messages import ToolMessage

from cartagent.integrations.langchain import langchain_tools


def by_name(toolkit: Toolkit) -> dict[str, Any]:
    return {t.name: t for t in langchain_tools(toolkit)}


def test_tools_have_exactly_the_registry_names_descriptions_and_schemas(toolkit: Toolkit) -> None:
    tools = langchain_tools(toolkit)

    assert [(t.name, t.description, t.args_schema) for t in tools] == [
        (t.name, t.description, t.input_schema()) for t in toolkit.tools
    ]
    assert tools[0].args == toolkit.tools[0].input_schema()["properties"]


@pytest.mark.anyio
async def test_ainvoke_creates_then_reads_an_order_in_the_sandbox(toolkit: Toolkit) -> None:
    tools = by_name(toolkit)

    order = orjson.loads(await tools["create_order"].ainvoke({"items": ITEMS}))
    fetched = orjson.loads(await tools["get_order"].ainvoke({"order_id": order["id"]}))

    assert order["status"] == "CREATED"
    assert fetched == order


def test_invoke_works_synchronously(toolkit: Toolkit) -> None:
    tools = by_name(toolkit)

    order = orjson.loads(tools["create_order"].invoke({"items": ITEMS}))
    fetched = orjson.loads(tools["get_order"].invoke({"order_id": order["id"]}))

    assert fetched["id"] == order["id"]
    assert fetched["amount"] == "25.00"


@pytest.mark.anyio
async def test_a_model_tool_call_gets_a_tool_message_for_that_call(toolkit: Toolkit) -> None:
    call = {"name": "create_order", "args": {"items": ITEMS}, "id": "call_7", "type": "tool_call"}

    message = await by_name(toolkit)["create_order"].ainvoke(call)

    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_7"
    assert isinstance(message.content, str)
    assert orjson.loads(message.content)["status"] == "CREATED"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments", [{"items": []}, {"items": ITEMS, "colour": "red"}, {}], ids=str
)
async def test_bad_arguments_come_back_as_an_error_result(
    toolkit: Toolkit, arguments: dict[str, Any]
) -> None:
    answer = orjson.loads(await by_name(toolkit)["create_order"].ainvoke(arguments))

    assert answer["error"] == "invalid_arguments"
    assert "items" in answer["message"] or "colour" in answer["message"]


@pytest.mark.anyio
async def test_an_error_result_is_a_tool_message_with_error_status(toolkit: Toolkit) -> None:
    call = {"name": "get_order", "args": {"order_id": "NOPE"}, "id": "call_8", "type": "tool_call"}

    message = await by_name(toolkit)["get_order"].ainvoke(call)

    assert message.status == "error"
    assert message.tool_call_id == "call_8"
    assert orjson.loads(message.content)["error"] == "paypal"
