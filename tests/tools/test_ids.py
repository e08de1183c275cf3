"""Ids from a model never steer a request to another endpoint.

Every tool that takes a PayPal id is called through the registry's toolkit with ids that try
to leave their path segment (traversal, encoded traversal, separators, over-long values); each
must be refused as invalid arguments before the client sends anything. A valid call of each
tool is the control: it does reach the wire.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ALL_TOOLS, Tool, Toolkit, ToolkitConfig

from .ids import BAD_IDS, CASES, ORDER, TOKEN_PATH, VALID, Wire, wire_toolkit


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def toolkit(wire: Wire) -> Toolkit:
    return wire_toolkit(wire)


def over_long(tool: Tool[Any], field: str) -> str:
    limit = tool.args.model_fields[field].metadata
    longest = max(m.max_length for m in limit if getattr(m, "max_length", None) is not None)
    return "A" * (longest + 1)


def test_every_tool_that_takes_an_id_is_covered() -> None:
    assert {t.name for t, _ in CASES} == set(VALID)


@pytest.mark.parametrize("name", sorted(VALID))
def test_a_valid_id_reaches_paypal(toolkit: Toolkit, wire: Wire, name: str) -> None:
    result = asyncio.run(toolkit.call(name, VALID[name]))

    assert result.content.get("error") == "paypal", result.content
    assert wire.paths, "nothing reached the wire"
    assert all(p.startswith(("/v1/", "/v2/")) and ".." not in p for p in wire.paths)


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize(("tool", "field"), CASES, ids=lambda v: getattr(v, "name", v))
def test_an_id_that_leaves_its_segment_is_refused_before_anything_is_sent(
    toolkit: Toolkit, wire: Wire, tool: Tool[Any], field: str, bad: str
) -> None:
    result = asyncio.run(toolkit.call(tool.name, {**VALID[tool.name], field: bad}))

    assert result.is_error
    assert result.content["error"] == "invalid_arguments"
    assert result.content["field"] == field
    assert wire.paths == []


@pytest.mark.parametrize(("tool", "field"), CASES, ids=lambda v: getattr(v, "name", v))
def test_an_over_long_id_is_refused_before_anything_is_sent(
    toolkit: Toolkit, wire: Wire, tool: Tool[Any], field: str
) -> None:
    result = asyncio.run(
        toolkit.call(tool.name, {**VALID[tool.name], field: over_long(tool, field)})
    )

    assert result.content["error"] == "invalid_arguments"
    assert result.content["field"] == field
    assert "at most" in result.content["message"]
    assert wire.paths == []


def test_the_message_says_what_an_id_may_hold(toolkit: Toolkit) -> None:
    result = asyncio.run(toolkit.call("get_order", {"order_id": "../../../v1/billing/plans"}))

    assert "letters, digits, '-' and '_'" in result.content["message"]


def test_ids_carry_paypals_pattern_in_the_schema_a_model_sees() -> None:
    for tool, field in CASES:
        schema = tool.input_schema()["properties"][field]
        options = [schema, *schema.get("anyOf", [])]
        assert any(o.get("pattern") == "^[A-Za-z0-9_-]+$" for o in options), (tool.name, field)


def test_capture_prices_and_captures_the_same_order(wire: Wire) -> None:
    seen: list[tuple[str, str]] = []

    def paypal(request: httpx.Request) -> httpx.Response:
        if request.url.path == TOKEN_PATH:
            return httpx.Response(200, json={"access_token": "t", "expires_in": 3600})
        seen.append((request.method, request.url.raw_path.decode()))
        unit = {"amount": {"currency_code": "USD", "value": "30.00"}}
        return httpx.Response(
            200, json={"id": ORDER, "status": "COMPLETED", "purchase_units": [unit]}
        )

    client = AsyncPayPalClient(
        "id", "secret", base_url="https://paypal.test", transport=httpx.MockTransport(paypal)
    )
    config = ToolkitConfig.everything((t.family, t.action) for t in ALL_TOOLS)
    priced: list[str] = []

    def approve(request: Any) -> bool:
        priced.append(str(request.amount))
        return True

    toolkit = Toolkit(client, ALL_TOOLS, config=config, approve=approve)
    result = asyncio.run(toolkit.call("capture_order", {"order_id": ORDER}))

    assert not result.is_error, result.content
    assert priced == ["30.00 USD"]
    assert seen == [
        ("GET", f"/v2/checkout/orders/{ORDER}"),
        ("POST", f"/v2/checkout/orders/{ORDER}/capture"),
    ]
