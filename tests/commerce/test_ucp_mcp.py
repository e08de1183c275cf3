"""UCP's MCP binding: the OpenRPC methods the business serves, over the same service as REST."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from mcp.client.client import Client

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.ucp import KnownProfiles, UcpService, UcpSettings
from cartagent.commerce.ucp.mcp import ucp_mcp_app, ucp_mcp_server, ucp_tools
from cartagent.protocols.ucp.signatures import SharedKey, sign_request
from tests.commerce.conftest import in_stock
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PAYMENT,
    PLATFORM,
    SHIPPING,
    conforms,
    platform_profile,
)

pytestmark = pytest.mark.anyio


def _meta(*, key: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"ucp-agent": {"profile": PLATFORM}}
    if key:
        meta["idempotency-key"] = str(uuid.uuid4())
    return meta


def _body(result: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = orjson.loads(result.content[0].text)
    return parsed


def test_the_tools_are_the_served_openrpc_methods() -> None:
    names = {tool.name for tool in ucp_tools()}
    assert names == {
        "create_checkout", "get_checkout", "update_checkout", "complete_checkout",
        "cancel_checkout", "search_catalog", "lookup_catalog", "get_product", "get_order",
    }  # fmt: skip
    create = next(tool for tool in ucp_tools() if tool.name == "create_checkout")
    assert create.input_schema["required"] == ["meta", "checkout"]


def _service(merchant: Merchant, agents: Agents) -> UcpService:
    profiles = KnownProfiles({PLATFORM: platform_profile()})
    return UcpService(merchant, agents, UcpSettings(base_url=BASE_URL), profiles)


async def test_a_checkout_over_mcp(merchant: Merchant, agents: Agents) -> None:
    server = ucp_mcp_server(_service(merchant, agents), local_agent=agents.keys[0].name)
    checkout = {
        "line_items": [{"item": {"id": in_stock()[0]}, "quantity": 1}],
        "buyer": {"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"},
        "fulfillment": SHIPPING,
    }
    async with Client(server) as client:
        found = await client.call_tool(
            "search_catalog", {"meta": _meta(), "catalog": {"query": "t-shirt"}}
        )
        assert not found.is_error and _body(found)["products"]
        created = await client.call_tool(
            "create_checkout", {"meta": _meta(key=True), "checkout": checkout}
        )
        session = _body(created)
        assert not created.is_error and session["status"] == "ready_for_complete"
        conforms("checkout", session)
        arguments = {"meta": _meta(key=True), "id": session["id"], "checkout": PAYMENT}
        paid = await client.call_tool("complete_checkout", arguments)
        again = await client.call_tool("complete_checkout", arguments)
        assert _body(paid)["status"] == "completed"
        assert _body(again) == _body(paid)  # the same key: answered again, not paid twice
        order = await client.call_tool(
            "get_order", {"meta": _meta(), "id": _body(paid)["order"]["id"]}
        )
        assert not order.is_error


async def test_refusals_are_errors(merchant: Merchant, agents: Agents) -> None:
    service = _service(merchant, agents)
    async with Client(ucp_mcp_server(service, local_agent=agents.keys[0].name)) as client:
        unknown = await client.call_tool("get_checkout", {"meta": _meta(), "id": "cs_missing"})
        no_profile = await client.call_tool("get_checkout", {"meta": {}, "id": "cs_missing"})
    assert unknown.is_error
    assert no_profile.is_error
    async with Client(ucp_mcp_server(service)) as anonymous:
        refused = await anonymous.call_tool("get_checkout", {"meta": _meta(), "id": "x"})
    assert refused.is_error and "unauthorized" in refused.content[0].text


def test_the_profile_lists_the_mcp_endpoint(merchant: Merchant, agents: Agents) -> None:
    profiles = KnownProfiles({PLATFORM: platform_profile()})
    settings = UcpSettings(base_url=BASE_URL, mcp_url="https://merchant.test/mcp")
    service = UcpService(merchant, agents, settings, profiles)
    services = service.profile()["ucp"]["services"]["dev.ucp.shopping"]
    assert {(s["transport"], s["endpoint"]) for s in services} == {
        ("rest", BASE_URL),
        ("mcp", "https://merchant.test/mcp"),
    }
    conforms("profile", service.profile())


async def test_update_cancel_and_the_catalog_reads_over_mcp(
    merchant: Merchant, agents: Agents
) -> None:
    first, second = in_stock(2)
    server = ucp_mcp_server(_service(merchant, agents), local_agent=agents.keys[0].name)
    async with Client(server) as client:
        looked = await client.call_tool(
            "lookup_catalog", {"meta": _meta(), "catalog": {"ids": [first, "missing-id"]}}
        )
        assert not looked.is_error
        conforms("lookup", _body(looked))
        [product] = _body(looked)["products"]
        assert first in {variant["id"] for variant in product["variants"]}
        detail = await client.call_tool(
            "get_product", {"meta": _meta(), "catalog": {"id": product["id"]}}
        )
        assert not detail.is_error and _body(detail)["product"]["id"] == product["id"]
        conforms("product", _body(detail))

        created = await client.call_tool(
            "create_checkout",
            {
                "meta": _meta(key=True),
                "checkout": {"line_items": [{"item": {"id": first}, "quantity": 1}]},
            },
        )
        session = _body(created)
        updated = await client.call_tool(
            "update_checkout",
            {
                "meta": _meta(key=True),
                "id": session["id"],
                "checkout": {"line_items": [{"item": {"id": second}, "quantity": 2}]},
            },
        )
        assert not updated.is_error
        conforms("checkout", _body(updated))
        assert [(li["item"]["id"], li["quantity"]) for li in _body(updated)["line_items"]] == [
            (second, 2)
        ]
        canceled = await client.call_tool(
            "cancel_checkout", {"meta": _meta(key=True), "id": session["id"]}
        )
        assert not canceled.is_error and _body(canceled)["status"] == "canceled"
        again = await client.call_tool(
            "update_checkout",
            {"meta": _meta(key=True), "id": session["id"], "checkout": {"line_items": []}},
        )
    # A canceled checkout takes no more changes: UCP answers it as it is, with the reason.
    assert _body(again)["status"] == "canceled"
    assert [(m["code"], m["severity"]) for m in _body(again)["messages"]] == [
        ("invalid_state", "unrecoverable")
    ]


def _signer(agents: Agents) -> str:
    return next(key.name for key in agents.keys if key.signing_secret is not None)


async def test_in_memory_a_signing_agent_cannot_sign_so_nothing_is_served(
    merchant: Merchant, agents: Agents
) -> None:
    server = ucp_mcp_server(_service(merchant, agents), local_agent=_signer(agents))
    checkout = {"line_items": [{"item": {"id": in_stock()[0]}, "quantity": 1}]}
    async with Client(server) as client:
        created = await client.call_tool(
            "create_checkout", {"meta": _meta(key=True), "checkout": checkout}
        )
    assert created.is_error and _body(created)["code"] == "signature_missing"


class _McpHttp:
    """Streamable HTTP JSON-RPC to the binding's app, each POST signed with ``key`` if given."""

    def __init__(self, http: TestClient, token: str) -> None:
        self.http = http
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.ids = iter(range(1, 1000))
        answer = self.post("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}})  # fmt: skip
        assert answer.status_code == 200, answer.text
        self.headers["Mcp-Session-Id"] = answer.headers["mcp-session-id"]
        self.headers["Mcp-Protocol-Version"] = "2025-11-25"
        self.post("notifications/initialized", None)

    def post(
        self, method: str, params: Any, *, key: SharedKey | None = None, tamper: bool = False
    ) -> httpx.Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            message["id"] = next(self.ids)
        body = orjson.dumps(message)
        headers = dict(self.headers)
        if key is not None:
            url = str(self.http.base_url.join("/mcp"))
            headers = sign_request(key, "POST", url, headers, body, datetime.now(UTC))
        if tamper:
            body = body.replace(b'"quantity":1', b'"quantity":5')
        return self.http.post("/mcp", content=body, headers=headers)

    def call(self, tool: str, arguments: dict[str, Any], **signing: Any) -> dict[str, Any]:
        answer = self.post("tools/call", {"name": tool, "arguments": arguments}, **signing)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()["result"]
        return result


def test_over_http_a_signing_agent_signs_the_json_rpc_post(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    app = ucp_mcp_app(_service(merchant, agents), host="127.0.0.1", port=8899)
    secret = SharedKey.from_secret("s3cret")
    checkout = {
        "line_items": [{"item": {"id": in_stock()[0]}, "quantity": 1}],
        "buyer": {"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"},
        "fulfillment": SHIPPING,
    }
    with TestClient(app, base_url="http://127.0.0.1:8899") as http:
        mcp = _McpHttp(http, agent_token + "-s")
        create = {"meta": _meta(key=True), "checkout": checkout}
        unsigned = mcp.call("create_checkout", create)
        assert unsigned["isError"]
        assert unsigned["structuredContent"]["code"] == "signature_missing"
        tampered = mcp.call("create_checkout", create, key=secret, tamper=True)
        assert tampered["structuredContent"]["code"] == "digest_mismatch"
        created = mcp.call("create_checkout", create, key=secret)
        assert not created["isError"], created
        session = created["structuredContent"]
        assert session["status"] == "ready_for_complete"
        pay = {"meta": _meta(key=True), "id": session["id"], "checkout": PAYMENT}
        refused = mcp.call("complete_checkout", pay)
        assert refused["structuredContent"]["code"] == "signature_missing"
        paid = mcp.call("complete_checkout", pay, key=secret)
        assert not paid["isError"] and paid["structuredContent"]["status"] == "completed"
        # An agent that does not sign is served over the same binding as before.
        plain = _McpHttp(http, agent_token)
        found = plain.call("search_catalog", {"meta": _meta(), "catalog": {"query": "shirt"}})
        assert not found["isError"] and found["structuredContent"]["products"]
