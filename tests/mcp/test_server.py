"""The MCP server over the SDK's in-process client, against the in-process sandbox."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from mcp.client.client import Client

from cartagent.errors import ConfigurationError
from cartagent.mcp import build_server, build_toolkit, parse_limits
from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ALL_TOOLS, Toolkit, ToolkitConfig

pytestmark = pytest.mark.anyio
ORDER = {"items": [{"name": "Mug", "quantity": 2, "unit_price": "15.00"}], "currency": "USD"}


def everything(client: AsyncPayPalClient) -> Toolkit:
    config = ToolkitConfig.everything((t.family, t.action) for t in ALL_TOOLS)
    return Toolkit(client, ALL_TOOLS, config=config)


def payload(result: Any) -> dict[str, Any]:
    [block] = result.content
    data: dict[str, Any] = orjson.loads(block.text)
    assert result.structured_content == data
    return data


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_are_listed_with_the_registry_schemas_and_annotations(
    paypal_client: AsyncPayPalClient, mode: str
) -> None:
    toolkit = everything(paypal_client)
    async with Client(build_server(toolkit), mode=mode) as client:
        listed = (await client.list_tools()).tools

    assert [t.name for t in listed] == [t.name for t in toolkit.tools]
    for mcp_tool, tool in zip(listed, toolkit.tools, strict=True):
        assert mcp_tool.description == tool.description
        assert mcp_tool.input_schema == tool.input_schema()
        assert mcp_tool.annotations is not None
        wire = mcp_tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert wire == tool.annotations.to_mcp()


async def test_by_default_only_read_only_tools_are_served(paypal_client: AsyncPayPalClient) -> None:
    async with Client(build_server(build_toolkit(paypal_client))) as client:
        names = {t.name for t in (await client.list_tools()).tools}

    read_only = {t.name for t in ALL_TOOLS if t.annotations.read_only}
    assert names == read_only
    assert "get_order" in names
    assert "capture_order" not in names


async def test_a_call_reaches_the_sandbox_and_returns_compact_json(
    paypal_client: AsyncPayPalClient,
) -> None:
    toolkit = build_toolkit(paypal_client, actions={"orders": {"create": True}})
    async with Client(build_server(toolkit)) as client:
        created = await client.call_tool("create_order", ORDER)
        order = payload(created)
        fetched = await client.call_tool("get_order", {"order_id": order["id"]})

    assert not created.is_error
    assert order["status"] == "CREATED"
    assert order["amount"] == "30.00"
    assert "approve_url" in order
    assert not fetched.is_error
    assert payload(fetched)["id"] == order["id"]


async def test_bad_arguments_are_an_error_result_naming_the_field(
    paypal_client: AsyncPayPalClient,
) -> None:
    async with Client(build_server(build_toolkit(paypal_client))) as client:
        missing = await client.call_tool("get_order", {})
        extra = await client.call_tool("get_order", {"order_id": "X", "amount": 3})

    assert missing.is_error
    assert payload(missing)["field"] == "order_id"
    assert "order_id" in missing.content[0].text
    assert extra.is_error
    assert payload(extra)["field"] == "amount"


async def test_a_paypal_error_is_an_error_result_with_paypals_message(
    paypal_client: AsyncPayPalClient,
) -> None:
    async with Client(build_server(build_toolkit(paypal_client))) as client:
        result = await client.call_tool("get_order", {"order_id": "0NOSUCHORDER00000"})

    error = payload(result)
    assert result.is_error
    assert error["error"] == "paypal"
    assert error["status"] == 404
    assert error["name"] == "RESOURCE_NOT_FOUND"
    assert error["message"]
    assert error["message"] in result.content[0].text


async def test_an_unknown_or_disabled_tool_is_an_error_result(
    paypal_client: AsyncPayPalClient,
) -> None:
    async with Client(build_server(build_toolkit(paypal_client))) as client:
        result = await client.call_tool("capture_order", {"order_id": "X"})

    assert result.is_error
    assert payload(result)["error"] == "unknown_tool"


async def test_an_exception_inside_the_toolkit_never_reaches_the_transport(
    paypal_client: AsyncPayPalClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolkit = build_toolkit(paypal_client)

    async def explode(name: str, arguments: dict[str, Any] | None) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(toolkit, "call", explode)
    async with Client(build_server(toolkit)) as client:
        result = await client.call_tool("get_order", {"order_id": "X"})
        again = await client.list_tools()

    assert result.is_error
    assert payload(result)["error"] == "internal"
    assert "secret" not in result.content[0].text
    assert again.tools


async def test_money_moving_tools_are_refused_unless_allowed(
    paypal_client: AsyncPayPalClient, http: TestClient
) -> None:
    toolkit = build_toolkit(paypal_client, actions={"orders": {"create": True, "capture": True}})
    async with Client(build_server(toolkit)) as client:
        order = payload(await client.call_tool("create_order", ORDER))
        http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
        refused = await client.call_tool("capture_order", {"order_id": order["id"]})
        after = payload(await client.call_tool("get_order", {"order_id": order["id"]}))

    assert refused.is_error
    assert payload(refused)["kind"] == "ApprovalRequired"
    assert after["status"] == "APPROVED"


async def test_allowed_money_moving_still_obeys_spend_limits(
    paypal_client: AsyncPayPalClient, http: TestClient
) -> None:
    actions = {"orders": {"create": True, "capture": True}}
    tight = build_toolkit(
        paypal_client, actions=actions, allow_money_moving=True, limits=parse_limits(["USD=20"])
    )
    roomy = build_toolkit(
        paypal_client, actions=actions, allow_money_moving=True, limits=parse_limits(["USD=100"])
    )
    async with Client(build_server(tight)) as client:
        order = payload(await client.call_tool("create_order", ORDER))
        http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
        over = await client.call_tool("capture_order", {"order_id": order["id"]})
    async with Client(build_server(roomy)) as client:
        captured = await client.call_tool("capture_order", {"order_id": order["id"]})

    assert over.is_error
    assert payload(over)["kind"] == "SpendLimitExceeded"
    assert not captured.is_error
    assert payload(captured)["status"] == "COMPLETED"


async def test_allowing_money_moving_without_a_spend_limit_is_refused(
    paypal_client: AsyncPayPalClient,
) -> None:
    with pytest.raises(ConfigurationError, match="spend limit"):
        build_toolkit(paypal_client, actions={"orders": {"capture": True}}, allow_money_moving=True)
