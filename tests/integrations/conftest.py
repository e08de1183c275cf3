"""A toolkit with every registered tool, on the in-process sandbox."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from cartagent.paypal import AsyncPayPalClient
from cartagent.sandbox import Sandbox, create_app, ensure_merchant
from cartagent.tools import ALL_TOOLS, Toolkit, ToolkitConfig

TODAY = date(2026, 11, 21)
ITEMS = [{"name": "Mug", "quantity": 2, "unit_price": "12.50"}]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def toolkit(sandbox: Sandbox, request: pytest.FixtureRequest) -> Iterator[Toolkit]:
    client_id = "int-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    client = AsyncPayPalClient(
        client_id,
        "secret",
        base_url="http://sandbox.test",
        transport=httpx.ASGITransport(app=create_app(sandbox)),
    )
    known = [(t.family, t.action) for t in ALL_TOOLS]
    yield Toolkit(client, ALL_TOOLS, config=ToolkitConfig.everything(known), today=lambda: TODAY)
    asyncio.run(client.aclose())
