"""``cartagent mcp --transport stdio`` as a subprocess, driven by the SDK's stdio client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import orjson
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from cartagent.child_process import SandboxProcess
from cartagent.mcp.process import mcp_args, mcp_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each test starts a server process
ORDER = {
    "intent": "CAPTURE",
    "purchase_units": [{"amount": {"currency_code": "USD", "value": "9.50"}}],
}


@pytest.fixture(scope="module")
def paypal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    db = tmp_path_factory.mktemp("mcp-stdio") / "sandbox.db"
    with SandboxProcess(f"sqlite:///{db}") as server:
        yield server


def order_in(server: SandboxProcess) -> str:
    response = httpx.post(
        f"{server.base_url}/v2/checkout/orders",
        json=ORDER,
        headers={"Authorization": f"Bearer {server.token()}"},
        timeout=10,
    )
    response.raise_for_status()
    return str(response.json()["id"])


def stdio(server: SandboxProcess, *extra: str) -> Client:
    command = mcp_command()
    args = mcp_args(
        base_url=server.base_url,
        client_id=server.client_id,
        client_secret=server.client_secret,
        extra=extra,
    )
    return Client(
        StdioServerParameters(
            command=command[0],
            args=[*command[1:], "--transport", "stdio", *args],
            cwd=str(Path.cwd()),
        )
    )


async def test_tools_are_listed_and_called_over_stdio(paypal: SandboxProcess) -> None:
    order_id = order_in(paypal)
    with anyio.fail_after(30):
        async with stdio(paypal) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("get_order", {"order_id": order_id})

    assert "get_order" in names
    assert "capture_order" not in names
    assert not result.is_error
    order = orjson.loads(result.content[0].text)
    assert order["id"] == order_id
    assert order["status"] == "CREATED"
    assert order["amount"] == "9.50"


async def test_actions_enable_more_tools_over_stdio(paypal: SandboxProcess) -> None:
    actions = '{"orders": {"create": true}}'
    with anyio.fail_after(30):
        async with stdio(paypal, "--actions", actions) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            created = await client.call_tool(
                "create_order", {"items": [{"name": "Tea", "unit_price": "4.00"}]}
            )

    assert {"create_order", "get_order"} <= names
    assert not created.is_error
    assert orjson.loads(created.content[0].text)["status"] == "CREATED"


async def test_a_paypal_error_comes_back_as_an_error_result_over_stdio(
    paypal: SandboxProcess,
) -> None:
    with anyio.fail_after(30):
        async with stdio(paypal) as client:
            result = await client.call_tool("get_order", {"order_id": "0NOSUCHORDER00000"})

    assert result.is_error
    assert orjson.loads(result.content[0].text)["name"] == "RESOURCE_NOT_FOUND"


async def test_a_catalog_adds_product_search_over_stdio(paypal: SandboxProcess) -> None:
    with anyio.fail_after(60):
        async with stdio(paypal, "--catalog", "tau") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool(
                "search_products", {"request": "white running shoes, not leather", "k": 3}
            )

    assert "search_products" in names
    assert not result.is_error
    found = orjson.loads(result.content[0].text)
    assert found["understood"]["category"] == "running shoes"
    assert found["products"], found
    for product in found["products"]:
        assert product["title"] == "Running Shoes"
        assert product["variant"]["options"]["color"] == "white"
        assert product["variant"]["options"]["material"] != "leather"


async def test_tools_without_a_catalog_do_not_include_search(paypal: SandboxProcess) -> None:
    with anyio.fail_after(30):
        async with stdio(paypal) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert "search_products" not in names
