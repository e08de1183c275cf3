"""The approval gate: a money-moving call runs only on a decision of exactly ``True``."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.tools import ApprovalRequest, Toolkit

from .conftest import MakeToolkit, call

MUG = {"items": [{"name": "Mug", "unit_price": "12.00"}]}

# What a host's callback might hand back that only looks like a yes: none of them is True.
NOT_TRUE: list[Any] = [None, 1, "yes", "true", [True], object()]


def _approved_order(toolkit: Toolkit, http: TestClient) -> str:
    """An order the buyer has approved, ready to capture; its id."""
    order = call(toolkit, "create_order", MUG).content
    page = http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
    assert page.status_code < 400, page.text
    return str(order["id"])


@pytest.mark.parametrize(
    "decision", NOT_TRUE, ids=["None", "1", "yes", "true", "[True]", "object()"]
)
@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_decision_that_is_not_exactly_true_refuses_the_capture(
    decision: Any, style: str, make_toolkit: MakeToolkit, http: TestClient
) -> None:
    asked: list[ApprovalRequest] = []

    def sync_approve(request: ApprovalRequest) -> Any:
        asked.append(request)
        return decision

    async def async_approve(request: ApprovalRequest) -> Any:
        asked.append(request)
        return decision

    toolkit = make_toolkit(approve=sync_approve if style == "sync" else async_approve)
    order_id = _approved_order(toolkit, http)

    refused = call(toolkit, "capture_order", {"order_id": order_id})

    assert refused.is_error and refused.content["kind"] == "ApprovalDenied", refused.content
    assert [request.tool for request in asked] == ["capture_order"]
    # Nothing was captured: the order still waits for its capture.
    assert call(toolkit, "get_order", {"order_id": order_id}).content["status"] == "APPROVED"


@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_decision_of_true_captures(
    style: str, make_toolkit: MakeToolkit, http: TestClient
) -> None:
    def sync_approve(request: ApprovalRequest) -> bool:
        return True

    async def async_approve(request: ApprovalRequest) -> bool:
        return True

    toolkit = make_toolkit(approve=sync_approve if style == "sync" else async_approve)
    order_id = _approved_order(toolkit, http)

    captured = call(toolkit, "capture_order", {"order_id": order_id})

    assert not captured.is_error, captured.content
    assert captured.content["status"] == "COMPLETED"
