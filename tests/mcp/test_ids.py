"""Through MCP, an id that tries to leave its path segment is an error result and sends nothing."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from mcp.client.client import Client

from cartagent.mcp import build_server
from cartagent.tools import Tool
from tests.tools.ids import CASES, VALID, Wire, wire_toolkit

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("bad", ["../../../v1/billing/plans", "%2e%2e/x", "A/B?c#d"])
@pytest.mark.parametrize(("tool", "field"), CASES, ids=lambda v: getattr(v, "name", v))
async def test_a_bad_id_is_an_error_result_and_nothing_is_sent(
    tool: Tool[Any], field: str, bad: str
) -> None:
    wire = Wire()
    async with Client(build_server(wire_toolkit(wire))) as client:
        result = await client.call_tool(tool.name, {**VALID[tool.name], field: bad})

    assert result.is_error
    [block] = result.content
    answer = orjson.loads(block.text)
    assert answer["error"] == "invalid_arguments"
    assert answer["field"] == field
    assert wire.paths == []


async def test_a_valid_id_does_reach_paypal() -> None:
    wire = Wire()
    async with Client(build_server(wire_toolkit(wire))) as client:
        result = await client.call_tool("get_order", VALID["get_order"])

    assert result.is_error
    assert wire.paths == ["/v2/checkout/orders/" + VALID["get_order"]["order_id"]]
