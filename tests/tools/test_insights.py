"""The merchant insights tool against the in-process sandbox."""

from __future__ import annotations

from cartagent.tools import Toolkit

from .conftest import TODAY, call


def test_sales_of_the_month_come_from_recorded_payments(toolkit: Toolkit) -> None:
    created = call(
        toolkit,
        "create_invoice",
        {"recipient_email": "ada@example.com", "items": [{"name": "Tuning", "unit_price": "80"}]},
    ).content
    call(toolkit, "send_invoice", {"invoice_id": created["id"]})
    call(toolkit, "record_invoice_payment", {"invoice_id": created["id"], "method": "CASH"})
    result = call(
        toolkit,
        "get_merchant_insights",
        {"start_date": TODAY.replace(day=1).isoformat(), "end_date": TODAY.isoformat()},
    )
    assert not result.is_error, result.content
    assert result.content["time_interval"] == "MONTHLY"
    [total] = result.content["totals"]
    assert total["sales_count"] == 1
    assert total["gross_sales"] == {"currency_code": "USD", "value": "80.00"}
    assert len(result.content["intervals"]) == 1


def test_orders_per_day_and_a_backwards_range_is_refused(toolkit: Toolkit) -> None:
    day = TODAY.isoformat()
    orders = call(
        toolkit,
        "get_merchant_insights",
        {"start_date": day, "end_date": day, "insight_type": "ORDERS", "time_interval": "DAILY"},
    )
    assert not orders.is_error, orders.content
    assert orders.content["totals"] == []
    backwards = call(
        toolkit, "get_merchant_insights", {"start_date": day, "end_date": "2020-01-01"}
    )
    assert backwards.is_error and backwards.content["error"] == "invalid_arguments"
