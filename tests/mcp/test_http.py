"""``cartagent mcp --transport http`` in a subprocess: bearer-only, then the SDK's HTTP client."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import httpx2
import orjson
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from cartagent.child_process import SandboxProcess
from cartagent.mcp.process import McpHttpProcess, mcp_args

pytestmark = pytest.mark.anyio
TOKEN = "test-token-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def paypal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    db = tmp_path_factory.mktemp("mcp-http") / "sandbox.db"
    with SandboxProcess(f"sqlite:///{db}") as server:
        yield server


@pytest.fixture(scope="module")
def server(paypal: SandboxProcess) -> Iterator[McpHttpProcess]:
    args = mcp_args(
        base_url=paypal.base_url, client_id=paypal.client_id, client_secret=paypal.client_secret
    )
    with McpHttpProcess(args, token=TOKEN) as process:
        yield process


def post(server: McpHttpProcess, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=10)


def test_a_request_without_a_token_is_401_with_www_authenticate(server: McpHttpProcess) -> None:
    response = post(server, {})

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


@pytest.mark.parametrize(
    "authorization", [f"Bearer {TOKEN}x", "Bearer wrong", f"Basic {TOKEN}", TOKEN]
)
def test_a_wrong_token_is_401(server: McpHttpProcess, authorization: str) -> None:
    response = post(server, {"Authorization": authorization})

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")


def test_the_right_token_gets_through(server: McpHttpProcess) -> None:
    response = post(server, {"Authorization": f"Bearer {TOKEN}"})

    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "cartagent"


def test_a_foreign_host_header_is_refused_even_with_the_token(server: McpHttpProcess) -> None:
    response = post(server, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"})

    assert response.status_code in (403, 421)


async def test_tools_are_listed_and_called_with_the_sdk_client(
    server: McpHttpProcess, paypal: SandboxProcess
) -> None:
    created = httpx.post(
        f"{paypal.base_url}/v2/checkout/orders",
        json={
            "intent": "CAPTURE",
            "purchase_units": [{"amount": {"currency_code": "USD", "value": "12.00"}}],
        },
        headers={"Authorization": f"Bearer {paypal.token()}"},
        timeout=10,
    ).json()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with anyio.fail_after(30):
        async with (
            httpx2.AsyncClient(headers=headers, timeout=10) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("get_order", {"order_id": created["id"]})
            missing = await client.call_tool("get_order", {"order_id": "0NOSUCHORDER00000"})

    assert "get_order" in names
    assert not result.is_error
    order = orjson.loads(result.content[0].text)
    assert (order["id"], order["status"], order["amount"]) == (created["id"], "CREATED", "12.00")
    assert order["approve_url"].startswith("http")
    assert missing.is_error
    assert orjson.loads(missing.content[0].text)["name"] == "RESOURCE_NOT_FOUND"


def test_the_static_token_mode_names_no_authorization_server(server: McpHttpProcess) -> None:
    assert "resource_metadata" not in post(server, {}).headers["www-authenticate"]
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        assert httpx.get(f"{server.base_url}{path}", timeout=10).status_code == 404
