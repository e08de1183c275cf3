"""ACP's MCP binding: the five tools of the OpenRPC file over the same service as REST."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from mcp.client.client import Client

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.acp import AcpService, AcpSettings
from cartagent.commerce.acp.mcp import acp_mcp_server, acp_tools
from tests.commerce.conftest import ADDRESS, BASE_URL, in_stock
from tests.commerce.test_acp_checkout import PAYMENT, conforms

pytestmark = pytest.mark.anyio
META = {"api_version": "2026-04-17"}


def test_the_tools_are_the_openrpc_methods_with_self_contained_schemas() -> None:
    tools = {tool.name: tool for tool in acp_tools()}
    assert set(tools) == {
        "create_checkout_session",
        "get_checkout_session",
        "update_checkout_session",
        "complete_checkout_session",
        "cancel_checkout_session",
    }
    create = tools["create_checkout_session"].input_schema
    assert create["required"] == ["meta", "payload"]
    assert create["properties"]["payload"] == {"$ref": "#/$defs/CheckoutSessionCreateRequest"}
    assert "Item" in create["$defs"] and "CheckoutSession" not in create["$defs"]
    text = orjson.dumps(create).decode()
    assert "json-schema/" not in text  # every reference resolves inside the tool's schema
    assert tools["get_checkout_session"].annotations.read_only_hint


def _body(result: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = orjson.loads(result.content[0].text)
    return parsed


async def test_a_checkout_over_mcp(merchant: Merchant, agents: Agents) -> None:
    service = AcpService(merchant, agents, AcpSettings(base_url=BASE_URL))
    server = acp_mcp_server(service, local_agent=agents.keys[0].name)
    payload = {
        "line_items": [{"id": in_stock()[0], "quantity": 2}],
        "currency": "usd",
        "capabilities": {},
        "fulfillment_details": {"address": ADDRESS},
    }
    async with Client(server) as client:
        created = await client.call_tool(
            "create_checkout_session", {"meta": META, "payload": payload}
        )
        assert not created.is_error
        session = _body(created)
        conforms("CheckoutSession", session)
        assert session["status"] == "ready_for_payment"
        fetched = await client.call_tool(
            "get_checkout_session", {"meta": META, "id": session["id"]}
        )
        assert _body(fetched)["totals"] == session["totals"]
        arguments = {
            "meta": {**META, "idempotency_key": "mcp-pay-1"},
            "id": session["id"],
            "payload": {"payment_data": PAYMENT},
        }
        paid = await client.call_tool("complete_checkout_session", arguments)
        again = await client.call_tool("complete_checkout_session", arguments)
        assert _body(paid)["status"] == "completed"
        assert _body(again) == _body(paid)  # replayed, not paid twice
        refused = await client.call_tool(
            "cancel_checkout_session", {"meta": META, "id": session["id"]}
        )
        assert refused.is_error and _body(refused)["code"] == "invalid_state"


async def test_refusals_are_acp_errors(merchant: Merchant, agents: Agents) -> None:
    service = AcpService(merchant, agents, AcpSettings(base_url=BASE_URL))
    async with Client(acp_mcp_server(service, local_agent=agents.keys[0].name)) as client:
        wrong_version = await client.call_tool(
            "get_checkout_session", {"meta": {"api_version": "2020-01-01"}, "id": "cs_x"}
        )
        missing = await client.call_tool("get_checkout_session", {"meta": META, "id": "cs_x"})
        bad = await client.call_tool(
            "create_checkout_session",
            {"meta": META, "payload": {"line_items": [], "currency": "usd", "capabilities": {}}},
        )
    assert _body(wrong_version)["code"] == "unsupported_api_version"
    assert (missing.is_error, _body(missing)["code"]) == (True, "not_found")
    assert bad.is_error and _body(bad)["param"] == "$.line_items"
    conforms("Error", _body(bad))


async def test_without_an_agent_nothing_is_served(merchant: Merchant, agents: Agents) -> None:
    service = AcpService(merchant, agents, AcpSettings(base_url=BASE_URL))
    async with Client(acp_mcp_server(service)) as client:
        result = await client.call_tool("get_checkout_session", {"meta": META, "id": "cs_x"})
    assert result.is_error and _body(result)["code"] == "unauthorized"


async def test_update_checkout_session_over_mcp(merchant: Merchant, agents: Agents) -> None:
    service = AcpService(merchant, agents, AcpSettings(base_url=BASE_URL))
    first, second = in_stock(2)
    payload = {"line_items": [{"id": first, "quantity": 1}], "currency": "usd", "capabilities": {}}
    async with Client(acp_mcp_server(service, local_agent=agents.keys[0].name)) as client:
        created = _body(
            await client.call_tool("create_checkout_session", {"meta": META, "payload": payload})
        )
        updated = await client.call_tool(
            "update_checkout_session",
            {
                "meta": META,
                "id": created["id"],
                "payload": {"line_items": [{"id": second, "quantity": 3}]},
            },
        )
        assert not updated.is_error
        session = _body(updated)
        conforms("CheckoutSession", session)
        assert [(li["item"]["id"], li["quantity"]) for li in session["line_items"]] == [(second, 3)]
        missing = await client.call_tool(
            "update_checkout_session", {"meta": META, "id": "cs_missing", "payload": {}}
        )
    assert missing.is_error and _body(missing)["code"] == "not_found"
