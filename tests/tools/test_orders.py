"""Order tools against the in-process sandbox, which checks amounts exactly as PayPal does."""

from __future__ import annotations

from decimal import Decimal

from fastapi.testclient import TestClient

from cartagent.tools import SpendLimits, Toolkit
from cartagent.tools.orders import TOOLS

from .conftest import MakeToolkit, call
from .flows import hints

MUGS = {"items": [{"name": "Mug", "quantity": 3, "unit_price": "9.99", "tax_percent": "8.25"}]}


def test_three_mugs_at_8_25_percent_make_an_order_paypal_accepts(toolkit: Toolkit) -> None:
    # PayPal's own toolkit taxes the line (29.97 x 8.25 % = 2.47) and is refused with
    # TAX_TOTAL_MISMATCH; per-unit tax 0.82 x 3 = 2.46 is what PayPal checks.
    result = call(toolkit, "create_order", MUGS)
    assert not result.is_error, result.content
    assert result.content["amount"] == "32.43"
    assert result.content["status"] == "CREATED"
    assert "/checkoutnow?token=" in result.content["approve_url"]


def test_every_order_write_gets_its_own_idempotency_key(toolkit: Toolkit) -> None:
    # Reusing one PayPal-Request-Id for every write would make the second create a replay.
    first = call(toolkit, "create_order", MUGS).content["id"]
    second = call(toolkit, "create_order", MUGS).content["id"]
    assert first != second


def test_capture_is_approved_with_the_orders_amount_then_takes_the_money(
    make_toolkit: MakeToolkit, http: TestClient
) -> None:
    asked: list[str] = []

    def approve(request: object) -> bool:
        asked.append(str(getattr(request, "amount", None)))
        return True

    toolkit = make_toolkit(approve=approve, limits=SpendLimits(per_call={"USD": Decimal("50")}))
    order = call(toolkit, "create_order", MUGS).content
    http.post(f"/checkoutnow?token={order['id']}", data={})
    captured = call(toolkit, "capture_order", {"order_id": order["id"]})
    assert not captured.is_error, captured.content
    assert captured.content["status"] == "COMPLETED"
    assert captured.content["capture_status"] == "COMPLETED"
    assert asked == ["32.43 USD"]
    shown = call(toolkit, "get_order", {"order_id": order["id"]}).content
    assert shown["capture_id"] == captured.content["capture_id"]


def test_capture_is_refused_without_approval_or_over_the_limit(
    make_toolkit: MakeToolkit, http: TestClient
) -> None:
    unapproved = make_toolkit(approve=None)
    order = call(unapproved, "create_order", MUGS).content
    http.post(f"/checkoutnow?token={order['id']}", data={})
    refused = call(unapproved, "capture_order", {"order_id": order["id"]})
    assert refused.content["kind"] == "ApprovalRequired"
    limited = make_toolkit(limits=SpendLimits(per_call={"USD": Decimal("30")}))
    over = call(limited, "capture_order", {"order_id": order["id"]})
    assert over.content["kind"] == "SpendLimitExceeded"
    assert call(limited, "get_order", {"order_id": order["id"]}).content["status"] == "APPROVED"


def test_paypal_refusals_and_bad_arguments_come_back_as_errors(toolkit: Toolkit) -> None:
    order = call(toolkit, "create_order", MUGS).content
    early = call(toolkit, "capture_order", {"order_id": order["id"]})
    assert early.is_error
    assert early.content["issues"][0]["issue"] == "ORDER_NOT_APPROVED"
    bad = call(toolkit, "create_order", {"items": [{"name": "Mug", "unit_price": "-1"}]})
    assert bad.is_error and bad.content["field"] == "items.0.unit_price"
    missing = call(toolkit, "get_order", {"order_id": "NOSUCHORDER123456"})
    assert missing.is_error and missing.content["status"] == 404


def test_order_tools_carry_their_annotations() -> None:
    assert hints(TOOLS) == {
        "create_order": ("openWorldHint",),
        "get_order": ("readOnlyHint", "idempotentHint", "openWorldHint"),
        "capture_order": ("idempotentHint", "openWorldHint", "moves_money", "approval"),
    }
