"""Shipment tracking tools against the sandbox, on a captured order."""

from __future__ import annotations

from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit
from cartagent.tools.tracking import TOOLS

from .conftest import call
from .flows import hints, paid_capture, sandbox_get


def test_a_shipment_is_tracked_shown_and_marked_delivered(
    toolkit: Toolkit, http: TestClient
) -> None:
    capture_id = paid_capture(toolkit, http)
    made = call(
        toolkit,
        "create_shipment_tracking",
        {
            "transaction_id": capture_id,
            "tracking_number": "1Z999AA10123456784",
            "carrier": "UPS",
            "shipment_date": "2026-11-21",
        },
    )
    assert not made.is_error, made.content
    assert made.content["tracker_id"] == f"{capture_id}-1Z999AA10123456784"
    assert (made.content["status"], made.content["carrier"]) == ("SHIPPED", "UPS")

    shown = call(toolkit, "get_shipment_tracking", {"transaction_id": capture_id})
    assert shown.content == {"trackers": [made.content]}

    updated = call(
        toolkit,
        "update_shipment_tracking",
        {
            "transaction_id": capture_id,
            "tracking_number": "1Z999AA10123456784",
            "status": "DELIVERED",
        },
    )
    assert not updated.is_error, updated.content
    assert updated.content["status"] == "DELIVERED"
    assert (updated.content["carrier"], updated.content["shipment_date"]) == ("UPS", "2026-11-21")


def test_a_tracker_paypal_refuses_in_the_batch_is_a_tool_error_naming_the_field(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = paid_capture(toolkit, http)
    args = {"transaction_id": capture_id, "tracking_number": "TN1", "carrier": "USPS"}
    assert not call(toolkit, "create_shipment_tracking", args).is_error
    again = call(toolkit, "create_shipment_tracking", args)
    assert again.is_error
    assert again.content["error"] == "tool_error"
    assert again.content["field"] == "tracking_number"
    assert "TRACKER_ALREADY_EXISTS" in again.content["message"]

    unknown = call(toolkit, "create_shipment_tracking", {**args, "transaction_id": "NOSUCHCAPTURE"})
    assert unknown.content["field"] == "transaction_id"
    listed = sandbox_get(paypal_client, f"/v1/shipping/trackers?transaction_id={capture_id}")
    assert len(listed["trackers"]) == 1


def test_carrier_other_without_its_name_is_refused_before_anything_is_written(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = paid_capture(toolkit, http)
    result = call(
        toolkit,
        "create_shipment_tracking",
        {"transaction_id": capture_id, "tracking_number": "TN1", "carrier": "OTHER"},
    )
    assert result.is_error
    assert result.content["field"] == "carrier_name_other"
    listed = sandbox_get(paypal_client, f"/v1/shipping/trackers?transaction_id={capture_id}")
    assert listed["trackers"] == []


def test_a_lower_case_carrier_is_refused_naming_carrier(toolkit: Toolkit) -> None:
    result = call(
        toolkit,
        "create_shipment_tracking",
        {"transaction_id": "X", "tracking_number": "TN1", "carrier": "ups"},
    )
    assert result.is_error
    assert result.content["field"] == "carrier"


def test_tracking_tools_never_need_approval() -> None:
    assert hints(TOOLS) == {
        "create_shipment_tracking": ("openWorldHint",),
        "get_shipment_tracking": ("readOnlyHint", "idempotentHint", "openWorldHint"),
        "update_shipment_tracking": ("idempotentHint", "openWorldHint"),
    }
