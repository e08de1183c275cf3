"""Fixtures: toolkits over the in-process sandbox, with every tool enabled.

Tests stay synchronous and drive the async toolkit with ``call`` (one ``asyncio.run`` per
call); the client talks to the sandbox's ASGI app, so nothing touches the network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import (
    ALL_TOOLS,
    ApprovalCallback,
    ApprovalRequest,
    SpendLimits,
    Tool,
    Toolkit,
    ToolkitConfig,
    ToolResult,
)
from tests.conftest import START

BASE_URL = "http://sandbox.test"
SECRET = "secret"
TODAY = START.date()


def every_tool() -> list[Tool[Any]]:
    return list(ALL_TOOLS)


def approve_all(request: ApprovalRequest) -> bool:
    return True


def call(toolkit: Toolkit, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    return asyncio.run(toolkit.call(name, arguments or {}))


MakeToolkit = Callable[..., Toolkit]


@pytest.fixture
def make_toolkit(paypal_client: AsyncPayPalClient) -> MakeToolkit:
    """``make_toolkit(approve=..., limits=...)``: every tool on, today pinned to the sandbox's."""
    tools = every_tool()

    def make(
        *, approve: ApprovalCallback | None = approve_all, limits: SpendLimits | None = None
    ) -> Toolkit:
        config = ToolkitConfig.everything((t.family, t.action) for t in tools)
        return Toolkit(
            paypal_client, tools, config=config, approve=approve, limits=limits,
            today=lambda: TODAY,
        )  # fmt: skip

    return make


@pytest.fixture
def toolkit(make_toolkit: MakeToolkit) -> Toolkit:
    """Every tool enabled, every approval granted, no spend limits."""
    return make_toolkit()
