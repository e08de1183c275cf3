"""The recurring invoice series tools against the in-process sandbox, through the Toolkit."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit

from .conftest import TODAY, call

MONTHLY: dict[str, Any] = {
    "start_date": TODAY.isoformat(),
    "total_cycles": 12,
    "recipient_email": "ada@example.com",
    "recipient_name": "Ada Lovelace",
    "items": [{"name": "Garden care", "unit_price": "120", "tax_percent": "8"}],
    "payment_term": "NET_15",
    "reference": "Garden care",
}


def created(toolkit: Toolkit, **changes: Any) -> dict[str, Any]:
    result = call(toolkit, "create_recurring_series", {**MONTHLY, **changes})
    assert not result.is_error, result.content
    return result.content


def advance(client: AsyncPayPalClient, days: int) -> dict[str, Any]:
    moved: dict[str, Any] = asyncio.run(client.post("/v1/sandbox/clock/advance", {"days": days}))
    return moved


def test_a_monthly_series_is_created_as_a_draft_with_its_total(toolkit: Toolkit) -> None:
    series = created(toolkit)
    assert series["status"] == "DRAFT"
    assert series["every"] == "1 MONTH"
    assert series["next_invoice_date"] == TODAY.isoformat()
    assert series["total_per_invoice"] == "129.60"
    assert series["payment_term"] == "NET_15"
    assert series["recipient"] == "ada@example.com"
    assert series["items"] == [{"name": "Garden care", "quantity": "1", "unit_price": "120.00"}]
    shown = call(toolkit, "get_recurring_series", {"recurring_series_id": series["id"]})
    assert shown.content == series


def test_activating_issues_the_first_invoice_and_the_clock_the_next(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    series = created(toolkit)
    active = call(toolkit, "activate_recurring_series", {"recurring_series_id": series["id"]})
    assert not active.is_error, active.content
    assert active.content["status"] == "ACTIVE" and active.content["invoices_issued"] == 1
    assert active.content["next_invoice_date"] == (TODAY + timedelta(days=30)).isoformat()
    advance(paypal_client, 31)
    listed = call(toolkit, "list_invoices").content["invoices"]
    assert len(listed) == 2 and {i["status"] for i in listed} == {"SENT"}
    assert {i["total"] for i in listed} == {"129.60"}


def test_update_changes_only_what_is_given(toolkit: Toolkit) -> None:
    series = created(toolkit)
    result = call(
        toolkit,
        "update_recurring_series",
        {"recurring_series_id": series["id"], "interval_unit": "WEEK", "interval_count": 2},
    )
    assert not result.is_error, result.content
    assert result.content["every"] == "2 WEEK"
    assert result.content["total_per_invoice"] == "129.60"
    assert result.content["reference"] == "Garden care"
    items = [{"name": "Garden care", "unit_price": "80"}]
    cheaper = call(
        toolkit, "update_recurring_series", {"recurring_series_id": series["id"], "items": items}
    )
    assert cheaper.content["total_per_invoice"] == "80.00"
    assert cheaper.content["recipient"] == "ada@example.com"


def test_cancel_and_delete_need_approval_and_do_what_they_say(
    toolkit: Toolkit, make_toolkit: Any
) -> None:
    draft = created(toolkit)
    refused = call(
        make_toolkit(approve=None), "delete_recurring_series", {"recurring_series_id": draft["id"]}
    )
    assert refused.is_error and refused.content["kind"] == "ApprovalRequired"
    deleted = call(toolkit, "delete_recurring_series", {"recurring_series_id": draft["id"]})
    assert deleted.content == {"id": draft["id"], "deleted": True}
    gone = call(toolkit, "get_recurring_series", {"recurring_series_id": draft["id"]})
    assert gone.is_error and gone.content["status"] == 404
    active = created(toolkit)
    call(toolkit, "activate_recurring_series", {"recurring_series_id": active["id"]})
    cancelled = call(toolkit, "cancel_recurring_series", {"recurring_series_id": active["id"]})
    assert cancelled.content["status"] == "CANCELLED"
    again = call(toolkit, "delete_recurring_series", {"recurring_series_id": active["id"]})
    assert again.is_error and again.content["issues"][0]["issue"] == "CANNOT_DELETE_SERIES"


def test_search_finds_series_by_status_and_text(toolkit: Toolkit) -> None:
    garden = created(toolkit)
    pool = created(
        toolkit,
        items=[{"name": "Pool cleaning", "unit_price": "300"}],
        recipient_email="grace@example.com",
        recipient_name="Grace Hopper",
    )
    call(toolkit, "activate_recurring_series", {"recurring_series_id": garden["id"]})
    active = call(toolkit, "search_recurring_series", {"status": ["ACTIVE"]})
    assert [s["id"] for s in active.content["series"]] == [garden["id"]]
    found = call(toolkit, "search_recurring_series", {"text": "pool"})
    assert [s["id"] for s in found.content["series"]] == [pool["id"]]
    assert found.content["total_items"] == 1 and found.content["has_more"] is False


def test_bad_arguments_are_refused_before_anything_is_sent(toolkit: Toolkit) -> None:
    past = call(toolkit, "create_recurring_series", {**MONTHLY, "start_date": "2020-01-01"})
    assert past.is_error and past.content["field"] == "start_date"
    no_items = call(toolkit, "create_recurring_series", {**MONTHLY, "items": []})
    assert no_items.is_error and no_items.content["error"] == "invalid_arguments"
    bad_unit = call(toolkit, "create_recurring_series", {**MONTHLY, "interval_unit": "HOUR"})
    assert bad_unit.is_error
    short_id = call(toolkit, "get_recurring_series", {"recurring_series_id": "RI-123"})
    assert short_id.is_error and short_id.content["field"] == "recurring_series_id"
