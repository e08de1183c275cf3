"""Merchant insights against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from jsonschema import Draft4Validator

from cartagent.sandbox import spec
from cartagent.sandbox.reporting.insights import intervals
from tests.conftest import Api, issues
from tests.sandbox.test_disputes import captured

INSIGHTS = "/v1/merchant/insights"


def capture(api: Api, value: str) -> dict[str, Any]:
    _, capture_id = captured(api, value)
    shown: dict[str, Any] = api.get(f"/v2/payments/captures/{capture_id}").json()
    return shown


def fee(captured: dict[str, Any]) -> Decimal:
    return Decimal(captured["seller_receivable_breakdown"]["paypal_fee"]["value"])


def insights(api: Api, **query: str) -> dict[str, Any]:
    params = {"start_date": "2026-11-16", "end_date": "2026-12-06", **query}
    response = api.get(INSIGHTS, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    schema = {"$ref": "urn:paypal:merchant_insights_v1#/components/schemas/insights"}
    errors = list(Draft4Validator(schema, registry=spec._registry()).iter_errors(body))
    assert not errors, [e.message for e in errors]
    return body


def advance(api: Api, days: int) -> None:
    assert api.post("/v1/sandbox/clock/advance", {"days": days}).status_code == 200


def test_sales_are_summed_from_the_ledger_per_interval(api: Api) -> None:
    first = capture(api, "100.00")  # 2026-11-21
    second = capture(api, "50.00")
    advance(api, 8)  # 2026-11-29
    refund = api.post(
        f"/v2/payments/captures/{first['id']}/refund",
        {"amount": {"currency_code": "USD", "value": "40.00"}},
        headers={"Prefer": "return=representation"},
    )
    assert refund.status_code == 201, refund.text
    returned = Decimal(refund.json()["seller_payable_breakdown"]["paypal_fee"]["value"])
    body = insights(api, insight_type="SALES", time_interval="WEEKLY")
    weeks = [(i["start_date"], i["end_date"]) for i in body["intervals"]]
    assert weeks == [
        ("2026-11-16", "2026-11-22"),
        ("2026-11-23", "2026-11-29"),
        ("2026-11-30", "2026-12-06"),
    ]
    [sold] = body["intervals"][0]["figures"]
    fees = fee(first) + fee(second)
    assert sold["sales_count"] == 2 and sold["refund_count"] == 0
    assert sold["gross_sales"] == {"currency_code": "USD", "value": "150.00"}
    assert Decimal(sold["fees"]["value"]) == fees
    assert Decimal(sold["net_sales"]["value"]) == Decimal("150.00") - fees
    [refunded] = body["intervals"][1]["figures"]
    assert refunded["refund_count"] == 1 and refunded["refunds"]["value"] == "40.00"
    assert Decimal(refunded["fees"]["value"]) == -returned
    assert body["intervals"][2]["figures"] == []
    [total] = body["totals"]
    assert Decimal(total["net_sales"]["value"]) == Decimal("110.00") - fees + returned


def test_recorded_invoice_payments_count_as_sales_and_a_deleted_one_does_not(api: Api) -> None:
    invoice = {
        "detail": {"currency_code": "EUR"},
        "items": [
            {
                "name": "Tuning",
                "quantity": "1",
                "unit_amount": {"currency_code": "EUR", "value": "80.00"},
            }
        ],
    }
    first = api.post("/v2/invoicing/invoices", invoice).json()["id"]
    second = api.post("/v2/invoicing/invoices", invoice).json()["id"]
    for invoice_id in (first, second):
        api.post(f"/v2/invoicing/invoices/{invoice_id}/send", {"send_to_recipient": False})
    api.post(f"/v2/invoicing/invoices/{first}/payments", {"method": "CASH"})
    payment = api.post(f"/v2/invoicing/invoices/{second}/payments", {"method": "CASH"}).json()
    api.delete(f"/v2/invoicing/invoices/{second}/payments/{payment['payment_id']}")
    [total] = insights(api, insight_type="SALES", time_interval="MONTHLY")["totals"]
    assert total["currency_code"] == "EUR"
    assert total["sales_count"] == 1 and total["gross_sales"]["value"] == "80.00"


def test_orders_count_created_and_completed_ones(api: Api) -> None:
    capture(api, "30.00")
    capture(api, "45.50")
    api.post(
        "/v2/checkout/orders",
        {
            "intent": "CAPTURE",
            "purchase_units": [{"amount": {"currency_code": "USD", "value": "9.99"}}],
        },
    )
    body = insights(api, insight_type="ORDERS", time_interval="DAILY")
    assert len(body["intervals"]) == 21
    [day] = next(i["figures"] for i in body["intervals"] if i["start_date"] == "2026-11-21")
    assert day["order_count"] == 3 and day["completed_order_count"] == 2
    assert day["completed_amount"]["value"] == "75.50"
    assert day["average_order_value"]["value"] == "37.75"


def test_another_merchants_ledger_is_not_counted(api: Api, other_api: Api) -> None:
    capture(api, "100.00")
    body = insights(other_api, insight_type="SALES", time_interval="YEARLY")
    assert body["totals"] == []
    assert [(i["start_date"], i["end_date"]) for i in body["intervals"]] == [
        ("2026-11-16", "2026-12-06")
    ]


def test_bad_queries_are_refused(api: Api) -> None:
    good = {
        "start_date": "2026-11-01",
        "end_date": "2026-11-30",
        "insight_type": "SALES",
        "time_interval": "DAILY",
    }
    assert api.get(INSIGHTS, params=good).status_code == 200
    for name in good:
        partial = {k: v for k, v in good.items() if k != name}
        missing = api.get(INSIGHTS, params=partial)
        assert missing.status_code == 400 and issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    assert api.get(INSIGHTS, params={**good, "insight_type": "REVENUE"}).status_code == 400
    assert api.get(INSIGHTS, params={**good, "time_interval": "HOURLY"}).status_code == 400
    assert api.get(INSIGHTS, params={**good, "start_date": "2026-13-01"}).status_code == 400
    backwards = api.get(INSIGHTS, params={**good, "end_date": "2026-10-01"})
    assert backwards.status_code == 400 and issues(backwards) == ["INVALID_PARAMETER_VALUE"]
    assert api.get(INSIGHTS, params={**good, "start_date": "2020-01-01"}).status_code == 400
    timed = {**good, "start_date": "2026-11-01T10:00:00Z", "end_date": "2026-11-02T00:00:00-05:00"}
    assert api.get(INSIGHTS, params=timed).json()["end_date"] == "2026-11-02"
    assert api.http.get(INSIGHTS, params=good).status_code == 401


def test_calendar_intervals_are_cut_to_the_range() -> None:
    found = intervals(date(2026, 2, 15), date(2026, 7, 3), "QUARTERLY")
    assert found == [
        (date(2026, 2, 15), date(2026, 3, 31)),
        (date(2026, 4, 1), date(2026, 6, 30)),
        (date(2026, 7, 1), date(2026, 7, 3)),
    ]
    assert intervals(date(2026, 1, 31), date(2026, 3, 1), "MONTHLY") == [
        (date(2026, 1, 31), date(2026, 1, 31)),
        (date(2026, 2, 1), date(2026, 2, 28)),
        (date(2026, 3, 1), date(2026, 3, 1)),
    ]
    assert intervals(date(2025, 12, 30), date(2026, 1, 2), "YEARLY") == [
        (date(2025, 12, 30), date(2025, 12, 31)),
        (date(2026, 1, 1), date(2026, 1, 2)),
    ]
