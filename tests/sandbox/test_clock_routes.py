"""The sandbox clock routes and the billing run they trigger."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from cartagent.sandbox import Clock, Sandbox
from cartagent.sandbox.billing.cycle import add_interval
from cartagent.sandbox.clock import iso
from cartagent.sandbox.store import ledger
from tests.conftest import START, Api, issues
from tests.sandbox.test_plans import create_plan, cycle
from tests.sandbox.test_subscriptions import (
    BASE,
    active_subscription,
    event_types,
    payments,
    sandbox_approve,
    subscribe,
)

# Every process must see a merchant's clock, and the billing run it triggers locks what it bills.
pytestmark = pytest.mark.postgres

CLOCK = "/v1/sandbox/clock"


def advance(api: Api, **body: int) -> dict[str, Any]:
    response = api.post(f"{CLOCK}/advance", body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_clock_shows_now_and_offset(api: Api) -> None:
    assert api.get(CLOCK).json() == {"now": "2026-11-21T12:00:00Z", "offset_seconds": 0}
    result = advance(api, days=1, seconds=30)
    assert result["now"] == "2026-11-22T12:00:30Z"
    assert result["offset_seconds"] == 86430
    assert api.get(CLOCK).json()["now"] == "2026-11-22T12:00:30Z"


def test_clock_routes_need_a_bearer_token(api: Api) -> None:
    assert api.http.get(CLOCK).status_code == 401
    unauthenticated = api.http.post(f"{CLOCK}/advance", json={"days": 1})
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["name"] == "AUTHENTICATION_FAILURE"
    assert api.get(CLOCK).json()["offset_seconds"] == 0


def test_bad_advance_input_is_a_paypal_400(api: Api) -> None:
    for body, issue in (
        ({"days": -1}, "INVALID_PARAMETER_VALUE"),
        ({"days": 3651}, "INVALID_PARAMETER_VALUE"),
        ({"days": "1"}, "INVALID_PARAMETER_SYNTAX"),
        ({"days": True}, "INVALID_PARAMETER_SYNTAX"),
        ({"weeks": 1}, "UNKNOWN_FIELD"),
        ({}, "MISSING_REQUIRED_PARAMETER"),
    ):
        response = api.post(f"{CLOCK}/advance", body)
        assert response.status_code == 400, body
        assert issues(response) == [issue]
        assert response.json()["name"] == "INVALID_REQUEST"
    assert api.post(f"{CLOCK}/advance", [1]).status_code == 400
    malformed = api.post(
        f"{CLOCK}/advance", content=b"{", headers={"Content-Type": "application/json"}
    )
    assert issues(malformed) == ["MALFORMED_REQUEST_JSON"]
    assert api.get(CLOCK).json()["offset_seconds"] == 0


def test_a_month_later_the_second_cycle_is_charged(api: Api, sandbox: Sandbox) -> None:
    sub = active_subscription(api, cycle(1, "10.00"))
    result = advance(api, days=30)
    [charge] = result["charges"]
    assert charge["subscription_id"] == sub["id"] and charge["status"] == "COMPLETED"
    assert charge["time"] == "2026-12-21T12:00:00Z"
    first, second = payments(api, sub["id"])
    assert second["id"] == charge["transaction_id"]
    assert second["time"] == "2026-12-21T12:00:00Z"
    with sandbox.store.engine.connect() as conn:
        codes = conn.execute(
            sa.select(ledger.c.event_code).where(
                ledger.c.transaction_id.in_([first["id"], second["id"]])
            )
        ).scalars()
        assert list(codes) == ["T0002", "T0002"]
    shown = api.get(f"{BASE}/{sub['id']}").json()
    assert shown["billing_info"]["next_billing_time"] == "2027-01-21T12:00:00Z"
    assert shown["billing_info"]["cycle_executions"][0]["cycles_completed"] == 2
    assert shown["billing_info"]["last_payment"]["time"] == "2026-12-21T12:00:00Z"
    assert advance(api, days=1)["charges"] == []


def test_several_passed_cycles_each_charge_once(api: Api) -> None:
    sub = active_subscription(api, cycle(1, "4.00", unit="WEEK"))
    result = advance(api, days=22)
    assert len(result["charges"]) == 3
    assert len(payments(api, sub["id"])) == 4


def test_trial_cycles_run_before_the_regular_cycle(api: Api) -> None:
    sub = active_subscription(
        api,
        cycle(1, "1.00", tenure="TRIAL", total=2, unit="DAY", count=7),
        cycle(2, "15.00", total=0),
    )
    advance(api, days=14)
    amounts = [
        p["amount_with_breakdown"]["gross_amount"]["value"] for p in payments(api, sub["id"])
    ]
    assert amounts == ["1.00", "1.00", "15.00"]
    info = api.get(f"{BASE}/{sub['id']}").json()["billing_info"]
    trial, regular = info["cycle_executions"]
    assert (trial["cycles_completed"], trial["cycles_remaining"]) == (2, 0)
    assert regular["cycles_completed"] == 1
    assert info["next_billing_time"] == "2027-01-05T12:00:00Z"  # a month after Dec 5


def test_the_subscription_expires_when_its_cycles_run_out(api: Api, sandbox: Sandbox) -> None:
    sub = active_subscription(api, cycle(1, "5.00", total=3))
    result = advance(api, days=100)
    assert len(result["charges"]) == 2
    assert result["status_changes"] == [{"subscription_id": sub["id"], "status": "EXPIRED"}]
    shown = api.get(f"{BASE}/{sub['id']}").json()
    assert shown["status"] == "EXPIRED"
    assert "next_billing_time" not in shown["billing_info"]
    assert shown["billing_info"]["final_payment_time"] == "2027-01-21T12:00:00Z"
    assert len(payments(api, sub["id"])) == 3
    assert "BILLING.SUBSCRIPTION.EXPIRED" in event_types(sandbox, sub["id"])
    assert advance(api, days=365)["charges"] == []


def test_a_suspended_subscription_is_not_billed(api: Api) -> None:
    sub = active_subscription(api, cycle(1, "10.00"))
    api.post(f"{BASE}/{sub['id']}/suspend", {"reason": "Paused"})
    assert advance(api, days=65)["charges"] == []
    assert api.post(f"{BASE}/{sub['id']}/activate").status_code == 204
    # Periods missed while suspended are skipped, not billed in arrears.
    shown = api.get(f"{BASE}/{sub['id']}").json()
    assert shown["billing_info"]["next_billing_time"] == "2027-02-21T12:00:00Z"
    assert advance(api, days=26)["charges"] == []
    assert len(advance(api, days=1)["charges"]) == 1
    assert len(payments(api, sub["id"])) == 2


def test_pending_and_cancelled_subscriptions_are_not_billed(api: Api) -> None:
    plan = create_plan(api)
    pending = subscribe(api, plan["id"])
    cancelled = active_subscription(api)
    api.post(f"{BASE}/{cancelled['id']}/cancel", {"reason": "Bye"})
    assert advance(api, days=40)["charges"] == []
    assert api.get(f"{BASE}/{pending['id']}").json()["status"] == "APPROVAL_PENDING"


def test_failing_payments_suspend_at_the_threshold(api: Api, sandbox: Sandbox) -> None:
    plan = create_plan(api, cycle(1, "10.00"), payment_preferences={"payment_failure_threshold": 2})
    sub = subscribe(api, plan["id"])
    sandbox_approve(api, sub["id"], decline_payments=True)
    result = advance(api, days=31)
    assert [c["status"] for c in result["charges"]] == ["FAILED"]
    shown = api.get(f"{BASE}/{sub['id']}", params={"fields": "last_failed_payment"}).json()
    assert shown["status"] == "SUSPENDED"
    assert shown["billing_info"]["failed_payments_count"] == 2
    assert shown["billing_info"]["outstanding_balance"]["value"] == "20.00"
    assert shown["billing_info"]["last_failed_payment"]["reason_code"] == "PAYMENT_DENIED"
    assert event_types(sandbox, sub["id"]).count("BILLING.SUBSCRIPTION.PAYMENT.FAILED") == 2


def test_billing_runs_only_for_the_advancing_merchant(api: Api, other_api: Api) -> None:
    sub = active_subscription(api, cycle(1, "10.00"))
    assert advance(other_api, days=31)["charges"] == []
    assert len(payments(api, sub["id"])) == 1
    # The other merchant's clock moved, not this one's.
    assert advance(api, seconds=1)["charges"] == []
    assert len(advance(api, days=31)["charges"]) == 1


def test_sandbox_approval_rejects_bad_input(api: Api) -> None:
    plan = create_plan(api)
    sub = subscribe(api, plan["id"])
    assert issues(sandbox_approve(api, sub["id"], colour="red")) == ["UNKNOWN_FIELD"]
    assert issues(sandbox_approve(api, sub["id"], decline_payments="yes")) == [
        "INVALID_PARAMETER_SYNTAX"
    ]
    assert sandbox_approve(api, "I-NOSUCHTHING").status_code == 404
    assert api.get(f"{BASE}/{sub['id']}").json()["status"] == "APPROVAL_PENDING"


def test_month_arithmetic_clamps_to_the_month_end() -> None:
    jan31 = datetime(2027, 1, 31, 9, 0, tzinfo=UTC)
    assert add_interval(jan31, "MONTH", 1) == datetime(2027, 2, 28, 9, 0, tzinfo=UTC)
    assert add_interval(jan31, "MONTH", 2) == datetime(2027, 3, 31, 9, 0, tzinfo=UTC)
    assert add_interval(jan31, "MONTH", 13) == datetime(2028, 2, 29, 9, 0, tzinfo=UTC)
    leap = datetime(2028, 2, 29, tzinfo=UTC)
    assert add_interval(leap, "YEAR", 1) == datetime(2029, 2, 28, tzinfo=UTC)
    assert add_interval(jan31, "WEEK", 2) == datetime(2027, 2, 14, 9, 0, tzinfo=UTC)


def test_month_end_billing_does_not_drift(api: Api, sandbox: Sandbox) -> None:
    sandbox.clock.advance(timedelta(days=71))  # 2027-01-31T12:00Z
    sub = active_subscription(api, cycle(1, "10.00"))
    advance(api, days=59)  # to 2027-03-31
    times = [p["time"] for p in payments(api, sub["id"])]
    assert times == ["2027-01-31T12:00:00Z", "2027-02-28T12:00:00Z", "2027-03-31T12:00:00Z"]


def test_each_merchant_has_its_own_clock_and_every_process_sees_it(
    api: Api, other_api: Api, sandbox: Sandbox
) -> None:
    before = api.get("/v1/sandbox/clock").json()["now"]
    moved = api.post("/v1/sandbox/clock/advance", {"days": 3}).json()
    assert moved["offset_seconds"] == 3 * 86400
    assert other_api.get("/v1/sandbox/clock").json()["now"] == before
    # A second server process shares only the database: it must see the same time.
    other_process = Sandbox(store=sandbox.store, clock=Clock(START))
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    assert iso(other_process.now(merchant.id)) == moved["now"]
