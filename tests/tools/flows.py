"""Sandbox steps the tool tests share: a paid order, and sandbox-only calls as the merchant."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Tool, Toolkit

from .conftest import call


def paid_capture(
    toolkit: Toolkit,
    http: TestClient,
    value: str = "30.00",
    items: list[dict[str, Any]] | None = None,
) -> str:
    """Create an order with the tools (of ``items``, else one mug at ``value``), approve it as
    the buyer, capture it; the capture id."""
    bought = items or [{"name": "Mug", "unit_price": value}]
    order = call(toolkit, "create_order", {"items": bought})
    assert not order.is_error, order.content
    page = http.post(f"/checkoutnow?token={order.content['id']}", data={}, follow_redirects=False)
    assert page.status_code < 400, page.text
    captured = call(toolkit, "capture_order", {"order_id": order.content["id"]})
    assert not captured.is_error, captured.content
    return str(captured.content["capture_id"])


def sandbox_post(client: AsyncPayPalClient, path: str, body: Any = None) -> Any:
    return asyncio.run(client.post(path, body))


def sandbox_get(client: AsyncPayPalClient, path: str) -> Any:
    return asyncio.run(client.get(path))


def hints(tools: tuple[Tool[Any], ...]) -> dict[str, tuple[str, ...]]:
    """Each tool's MCP hints that are on, plus ``moves_money``/``approval`` when they apply."""
    found = {}
    for one in tools:
        on = [name for name, value in one.annotations.to_mcp().items() if value]
        if one.moves_money:
            on.append("moves_money")
        if one.needs_approval:
            on.append("approval")
        found[one.name] = tuple(on)
    return found
