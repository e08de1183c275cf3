"""OpenAI Agents SDK FunctionTools: the registry's tools, invoked the way the SDK invokes them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cartagent.integrations import strict_compatible
from cartagent.tools import Toolkit

from .conftest import ITEMS

pytest.importorskip("agents")

from agents import FunctionTool
from agents.tool_context import ToolContext

from cartagent.integrations.openai_agents import agents_tools

pytestmark = pytest.mark.anyio


async def invoke(tool: FunctionTool, arguments: Any, call_id: str = "call_1") -> Any:
    text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
    context = ToolContext(
        context=None, tool_name=tool.name, tool_call_id=call_id, tool_arguments=text
    )
    return orjson.loads(await tool.on_invoke_tool(context, text))


def as_sdk_spells_it(schema: dict[str, Any]) -> dict[str, Any]:
    """The SDK writes out an empty ``required`` list on strict schemas; nothing else changes."""
    if strict_compatible(schema) and "required" not in schema:
        return {**schema, "required": []}
    return schema


def by_name(toolkit: Toolkit) -> dict[str, FunctionTool]:
    return {t.name: t for t in agents_tools(toolkit)}


async def test_tools_have_exactly_the_registry_names_descriptions_and_schemas(
    toolkit: Toolkit,
) -> None:
    tools = agents_tools(toolkit)

    assert [(t.name, t.description, t.params_json_schema) for t in tools] == [
        (t.name, t.description, as_sdk_spells_it(t.input_schema())) for t in toolkit.tools
    ]


async def test_strict_schema_is_on_only_where_the_schema_already_qualifies(
    toolkit: Toolkit,
) -> None:
    tools = by_name(toolkit)

    assert tools["get_order"].strict_json_schema is True
    assert tools["create_order"].strict_json_schema is False
    # Had the SDK made it strict, it would have forced the optional arguments to be required.
    assert "currency" not in tools["create_order"].params_json_schema["required"]
    for tool in tools.values():
        assert tool.strict_json_schema == strict_compatible(tool.params_json_schema)


async def test_on_invoke_tool_creates_then_reads_an_order_in_the_sandbox(
    toolkit: Toolkit,
) -> None:
    tools = by_name(toolkit)

    order = await invoke(tools["create_order"], {"items": ITEMS})
    fetched = await invoke(tools["get_order"], {"order_id": order["id"]}, "call_2")

    assert order["status"] == "CREATED"
    assert fetched == order


@pytest.mark.parametrize(
    "arguments",
    [{"items": []}, {"items": ITEMS, "colour": "red"}, '{"items": ', "null"],
    ids=["empty items", "unknown field", "broken json", "not an object"],
)
async def test_bad_arguments_come_back_as_an_error_result(toolkit: Toolkit, arguments: Any) -> None:
    answer = await invoke(by_name(toolkit)["create_order"], arguments)

    assert answer["error"] == "invalid_arguments"
