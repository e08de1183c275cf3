"""The refund tools against the in-process sandbox, through the Toolkit."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ApprovalRequest, SpendLimits, Toolkit
from cartagent.tools.refunds import TOOLS

from .conftest import MakeToolkit, call


def captured(toolkit: Toolkit, http: TestClient, value: str = "100.00") -> str:
    """A completed capture of ``value`` USD: order created, approved by the buyer, captured."""
    order = call(
        toolkit, "create_order", {"items": [{"name": "Widget", "unit_price": value}]}
    ).content
    page = http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
    assert page.status_code < 400, page.text
    capture = call(toolkit, "capture_order", {"order_id": order["id"]})
    assert not capture.is_error, capture.content
    return str(capture.content["capture_id"])


def capture_status(client: AsyncPayPalClient, capture_id: str) -> str:
    capture: dict[str, Any] = asyncio.run(client.get(f"/v2/payments/captures/{capture_id}"))
    return str(capture["status"])


def test_a_partial_refund_gives_back_that_amount(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = captured(toolkit, http)
    result = call(
        toolkit,
        "create_refund",
        {"capture_id": capture_id, "amount": "30", "currency": "USD", "note": "Scratched"},
    )
    assert not result.is_error, result.content
    assert result.content["status"] == "COMPLETED"
    assert result.content["amount"] == "30.00"
    assert result.content["currency"] == "USD"
    assert result.content["capture_id"] == capture_id
    assert result.content["note_to_payer"] == "Scratched"
    assert capture_status(paypal_client, capture_id) == "PARTIALLY_REFUNDED"
    capture = asyncio.run(paypal_client.get(f"/v2/payments/captures/{capture_id}"))
    order_id = capture["supplementary_data"]["related_ids"]["order_id"]
    call(toolkit, "create_refund", {"capture_id": capture_id, "amount": "5.5"})
    shown = call(toolkit, "get_order", {"order_id": order_id}).content
    assert (shown["capture_status"], shown["refunded"]) == ("PARTIALLY_REFUNDED", "35.50")


def test_a_refund_without_an_amount_asks_approval_for_what_is_left_and_refunds_it(
    make_toolkit: MakeToolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    toolkit = make_toolkit(approve=approve)
    capture_id = captured(toolkit, http)
    call(toolkit, "create_refund", {"capture_id": capture_id, "amount": "30"})
    asked.clear()
    result = call(toolkit, "create_refund", {"capture_id": capture_id})
    assert not result.is_error, result.content
    assert result.content["amount"] == "70.00"
    assert result.content["total_refunded_amount"] == "100.00"
    assert [(r.tool, str(r.amount), r.moves_money) for r in asked] == [
        ("create_refund", "70.00 USD", True)
    ]
    assert capture_status(paypal_client, capture_id) == "REFUNDED"


def test_refunding_more_than_was_captured_is_paypals_refund_amount_exceeded(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = captured(toolkit, http)
    result = call(toolkit, "create_refund", {"capture_id": capture_id, "amount": "100.01"})
    assert result.is_error
    assert result.content["error"] == "paypal"
    assert [i["issue"] for i in result.content["issues"]] == ["REFUND_AMOUNT_EXCEEDED"]
    assert capture_status(paypal_client, capture_id) == "COMPLETED"


def test_without_an_approval_callback_nothing_is_refunded(
    make_toolkit: MakeToolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = captured(make_toolkit(), http)
    result = call(make_toolkit(approve=None), "create_refund", {"capture_id": capture_id})
    assert result.is_error
    assert result.content["kind"] == "ApprovalRequired"
    assert capture_status(paypal_client, capture_id) == "COMPLETED"


def test_a_refund_over_the_per_call_limit_is_refused_and_one_under_it_goes_through(
    make_toolkit: MakeToolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = captured(make_toolkit(), http)
    limited = make_toolkit(limits=SpendLimits(per_call={"USD": Decimal("10")}))
    refused = call(
        limited, "create_refund", {"capture_id": capture_id, "amount": "20.00", "currency": "USD"}
    )
    assert refused.is_error
    assert refused.content["kind"] == "SpendLimitExceeded"
    assert capture_status(paypal_client, capture_id) == "COMPLETED"
    allowed = call(limited, "create_refund", {"capture_id": capture_id, "amount": "10.00"})
    assert not allowed.is_error, allowed.content
    assert capture_status(paypal_client, capture_id) == "PARTIALLY_REFUNDED"


def test_bad_refund_arguments_name_the_field(toolkit: Toolkit) -> None:
    for arguments, field in (
        ({"capture_id": "X", "amount": "-5"}, "amount"),
        ({"capture_id": "X", "amount": "5", "currency": "XYZ"}, "currency"),
        ({"amount": "5"}, "capture_id"),
        ({"capture_id": "X", "reason": "why"}, "reason"),
    ):
        result = call(toolkit, "create_refund", arguments)
        assert result.is_error and result.content["field"] == field, arguments


def test_get_refund_shows_the_refund(toolkit: Toolkit, http: TestClient) -> None:
    capture_id = captured(toolkit, http)
    refund = call(toolkit, "create_refund", {"capture_id": capture_id, "amount": "12.34"}).content
    shown = call(toolkit, "get_refund", {"refund_id": refund["id"]})
    assert not shown.is_error, shown.content
    assert shown.content["id"] == refund["id"]
    assert shown.content["amount"] == "12.34"
    assert shown.content["capture_id"] == capture_id
    missing = call(toolkit, "get_refund", {"refund_id": "NOPE"})
    assert missing.is_error and missing.content["status"] == 404


def test_refund_tools_are_annotated_for_money_and_reads() -> None:
    create, get = TOOLS
    assert create.moves_money and create.needs_approval and create.spend is not None
    assert not create.annotations.read_only and not create.annotations.idempotent
    assert get.annotations.read_only and get.annotations.idempotent and not get.moves_money
