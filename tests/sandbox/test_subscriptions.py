"""Subscriptions v1 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events, ledger
from tests.conftest import Api, issues
from tests.sandbox.test_plans import create_plan, cycle

BASE = "/v1/billing/subscriptions"
WINDOW = {"start_time": "2026-01-01T00:00:00Z", "end_time": "2030-01-01T00:00:00Z"}


def subscribe(api: Api, plan_id: str, **extra: Any) -> dict[str, Any]:
    response = api.post(BASE, {"plan_id": plan_id, **extra})
    assert response.status_code == 201, response.text
    subscription: dict[str, Any] = response.json()
    return subscription


def sandbox_approve(api: Api, sub_id: str, **body: Any) -> httpx.Response:
    return api.post(f"/v1/sandbox/subscriptions/{sub_id}/approve", body or None)


def active_subscription(api: Api, *cycles: dict[str, Any], **plan: Any) -> dict[str, Any]:
    plan_id = create_plan(api, *cycles, **plan)["id"]
    sub = subscribe(api, plan_id)
    response = sandbox_approve(api, sub["id"])
    assert response.status_code == 200, response.text
    approved: dict[str, Any] = response.json()
    return approved


def payments(api: Api, sub_id: str) -> list[dict[str, Any]]:
    body = api.get(f"{BASE}/{sub_id}/transactions", params=WINDOW).json()
    found: list[dict[str, Any]] = body["transactions"]
    return found


def event_types(sandbox: Sandbox, resource_id: str) -> list[str]:
    """The resource's event types, sorted: events of one request share the sandbox clock's
    instant and have random ids, so the database returns them in no set order."""
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.event_type).where(events.c.resource_id == resource_id)
        ).scalars()
        return sorted(rows)


def test_create_is_approval_pending_with_an_approve_link(api: Api, sandbox: Sandbox) -> None:
    plan = create_plan(api)
    sub = subscribe(api, plan["id"], custom_id="order-7")
    assert sub["id"].startswith("I-") and sub["status"] == "APPROVAL_PENDING"
    assert sub["plan_id"] == plan["id"] and sub["quantity"] == "1"
    assert sub["start_time"] == "2026-11-21T12:00:00Z"
    assert "billing_info" not in sub
    approve = next(link for link in sub["links"] if link["rel"] == "approve")
    assert "/webapps/billing/subscriptions?ba_token=BA-" in approve["href"]
    assert event_types(sandbox, sub["id"]) == ["BILLING.SUBSCRIPTION.CREATED"]


def test_sandbox_approval_activates_and_charges_the_first_cycle(api: Api, sandbox: Sandbox) -> None:
    sub = active_subscription(api, cycle(1, "10.00"))
    assert sub["status"] == "ACTIVE"
    assert sub["subscriber"]["email_address"] == sandbox.buyer_email
    info = sub["billing_info"]
    assert info["next_billing_time"] == "2026-12-21T12:00:00Z"
    assert info["last_payment"] == {
        "amount": {"currency_code": "USD", "value": "10.00"},
        "time": "2026-11-21T12:00:00Z",
    }
    assert info["cycle_executions"][0]["cycles_completed"] == 1
    assert info["outstanding_balance"]["value"] == "0.00"
    [payment] = payments(api, sub["id"])
    assert payment["status"] == "COMPLETED"
    assert payment["amount_with_breakdown"]["gross_amount"]["value"] == "10.00"
    assert payment["amount_with_breakdown"]["fee_amount"]["value"] == "0.84"
    assert payment["payer_email"] == sandbox.buyer_email
    with sandbox.store.engine.connect() as conn:
        row = conn.execute(sa.select(ledger).where(ledger.c.transaction_id == payment["id"])).one()
    assert (row.event_code, row.amount) == ("T0002", 10)
    types = event_types(sandbox, sub["id"])
    assert "BILLING.SUBSCRIPTION.ACTIVATED" in types
    assert event_types(sandbox, payment["id"]) == [
        "PAYMENT.CAPTURE.COMPLETED",
        "PAYMENT.SALE.COMPLETED",
    ]


def test_setup_fee_and_exclusive_tax_are_charged(api: Api) -> None:
    sub = active_subscription(
        api,
        cycle(1, "20.00"),
        payment_preferences={"setup_fee": {"currency_code": "USD", "value": "5.00"}},
        taxes={"percentage": "10", "inclusive": False},
    )
    fee, first = payments(api, sub["id"])
    assert fee["amount_with_breakdown"]["gross_amount"]["value"] == "5.00"
    assert first["amount_with_breakdown"]["gross_amount"]["value"] == "22.00"
    assert first["amount_with_breakdown"]["tax_amount"]["value"] == "2.00"


def test_a_free_trial_is_not_charged(api: Api) -> None:
    sub = active_subscription(api, cycle(1, None, tenure="TRIAL", total=1), cycle(2, "9.00"))
    assert payments(api, sub["id"]) == []
    executions = sub["billing_info"]["cycle_executions"]
    assert executions[0]["cycles_completed"] == 1 and executions[0]["cycles_remaining"] == 0
    assert "last_payment" not in sub["billing_info"]


def test_a_future_start_time_defers_the_first_charge(api: Api) -> None:
    plan = create_plan(api)
    sub = subscribe(api, plan["id"], start_time="2026-12-01T00:00:00Z")
    approved = sandbox_approve(api, sub["id"]).json()
    assert approved["billing_info"]["next_billing_time"] == "2026-12-01T00:00:00Z"
    assert payments(api, sub["id"]) == []


def test_an_inactive_plan_takes_no_subscriptions(api: Api) -> None:
    plan = create_plan(api)
    api.post(f"/v1/billing/plans/{plan['id']}/deactivate")
    response = api.post(BASE, {"plan_id": plan["id"]})
    assert response.status_code == 422
    assert issues(response) == ["PLAN_STATUS_INVALID"]
    unknown = api.post(BASE, {"plan_id": "P-UNKNOWN"})
    assert unknown.status_code == 400 and issues(unknown) == ["INVALID_PARAMETER_VALUE"]


def test_bad_input_is_rejected(api: Api) -> None:
    plan = create_plan(api)
    assert issues(api.post(BASE, {})) == ["MISSING_REQUIRED_PARAMETER"]
    assert api.post(BASE, {"plan_id": plan["id"], "quantity": 2}).status_code == 400
    quantity = api.post(BASE, {"plan_id": plan["id"], "quantity": "2"})
    assert issues(quantity) == ["SUBSCRIPTION_CANNOT_HAVE_QUANTITY"]
    past = api.post(BASE, {"plan_id": plan["id"], "start_time": "2020-01-01T00:00:00Z"})
    assert past.status_code == 400 and issues(past) == ["INVALID_PARAMETER_VALUE"]
    shipping = {"currency_code": "EUR", "value": "1.00"}
    mismatch = api.post(BASE, {"plan_id": plan["id"], "shipping_amount": shipping})
    assert mismatch.status_code == 422 and issues(mismatch) == ["CURRENCY_MISMATCH"]
    override = {"billing_cycles": [{"sequence": 5, "total_cycles": 2}]}
    bad_override = api.post(BASE, {"plan_id": plan["id"], "plan": override})
    assert issues(bad_override) == ["INVALID_BILLING_CYCLE_SEQUENCE"]


def test_suspend_activate_cancel_and_illegal_transitions(api: Api, sandbox: Sandbox) -> None:
    plan = create_plan(api)
    pending = subscribe(api, plan["id"])
    path = f"{BASE}/{pending['id']}"
    reason = {"reason": "Testing"}
    assert issues(api.post(f"{path}/suspend", reason)) == ["SUBSCRIPTION_STATUS_INVALID"]
    assert issues(api.post(f"{path}/cancel", reason)) == ["SUBSCRIPTION_STATUS_INVALID"]
    sandbox_approve(api, pending["id"])
    assert issues(api.post(f"{path}/activate", reason)) == ["SUBSCRIPTION_STATUS_INVALID"]
    assert api.post(f"{path}/suspend", reason).status_code == 204
    suspended = api.get(path).json()
    assert suspended["status"] == "SUSPENDED"
    assert suspended["status_change_note"] == "Testing"
    assert {link["rel"] for link in suspended["links"]} >= {"activate", "cancel"}
    assert api.post(f"{path}/activate").status_code == 204
    assert api.post(f"{path}/cancel", reason).status_code == 204
    cancelled = api.get(path).json()
    assert cancelled["status"] == "CANCELLED"
    assert "next_billing_time" not in cancelled["billing_info"]
    again = api.post(f"{path}/cancel", reason)
    assert again.status_code == 422 and issues(again) == ["SUBSCRIPTION_STATUS_INVALID"]
    assert issues(sandbox_approve(api, pending["id"])) == ["SUBSCRIPTION_STATUS_INVALID"]
    types = event_types(sandbox, pending["id"])
    for event in ("SUSPENDED", "ACTIVATED", "CANCELLED"):
        assert f"BILLING.SUBSCRIPTION.{event}" in types
    assert api.post(f"{path}/suspend", {}).status_code == 400


def test_patch_overrides_the_plan_for_this_subscription(api: Api) -> None:
    sub = active_subscription(api, cycle(1, "10.00", total=5))
    path = f"{BASE}/{sub['id']}"
    response = api.patch(
        path,
        [
            {"op": "replace", "path": "/custom_id", "value": "cust-1"},
            {
                "op": "replace",
                "path": "/plan/billing_cycles/@sequence==1/pricing_scheme/fixed_price",
                "value": {"currency_code": "USD", "value": "8.00"},
            },
            {"op": "replace", "path": "/plan/billing_cycles/@sequence==1/total_cycles", "value": 3},
        ],
    )
    assert response.status_code == 204, response.text
    shown = api.get(path, params={"fields": "plan"}).json()
    assert shown["custom_id"] == "cust-1" and shown["plan_overridden"] is True
    assert shown["plan"]["billing_cycles"][0]["pricing_scheme"]["fixed_price"]["value"] == "8.00"
    assert shown["billing_info"]["cycle_executions"][0]["total_cycles"] == 3
    too_few = [
        {"op": "replace", "path": "/plan/billing_cycles/@sequence==1/total_cycles", "value": 0}
    ]
    assert api.patch(path, too_few).status_code == 204
    start = [{"op": "replace", "path": "/start_time", "value": "2027-01-01T00:00:00Z"}]
    assert issues(api.patch(path, start)) == ["INVALID_START_TIME"]
    balance = [
        {
            "op": "replace",
            "path": "/billing_info/outstanding_balance",
            "value": {"currency_code": "USD", "value": "1.00"},
        }
    ]
    assert issues(api.patch(path, balance)) == ["AMOUNT_GREATER_THAN_OUTSTANDING_BALANCE"]
    bad = [{"op": "replace", "path": "/status", "value": "ACTIVE"}]
    assert issues(api.patch(path, bad)) == ["INVALID_PATCH_PATH"]


def test_revise_switches_plan_after_approval(api: Api, sandbox: Sandbox) -> None:
    sub = active_subscription(api, cycle(1, "10.00"))
    product_id = api.get(f"/v1/billing/plans/{sub['plan_id']}").json()["product_id"]
    bigger = api.post(
        "/v1/billing/plans",
        {
            "product_id": product_id,
            "name": "Big",
            "billing_cycles": [cycle(1, "30.00")],
            "payment_preferences": {},
        },
    ).json()
    revised = api.post(f"{BASE}/{sub['id']}/revise", {"plan_id": bigger["id"]})
    assert revised.status_code == 200, revised.text
    assert revised.json()["plan_id"] == bigger["id"]
    assert any(link["rel"] == "approve" for link in revised.json()["links"])
    assert api.get(f"{BASE}/{sub['id']}").json()["plan_id"] == sub["plan_id"]
    assert sandbox_approve(api, sub["id"]).json()["plan_id"] == bigger["id"]
    assert "BILLING.SUBSCRIPTION.UPDATED" in event_types(sandbox, sub["id"])
    other = create_plan(api)
    incompatible = api.post(f"{BASE}/{sub['id']}/revise", {"plan_id": other["id"]})
    assert issues(incompatible) == ["PLAN_PRODUCT_NOT_COMPATIBLE"]
    missing = api.post(f"{BASE}/{sub['id']}/revise", {"plan_id": "P-MISSING"})
    assert missing.status_code == 404


def test_failed_payments_build_an_outstanding_balance_that_capture_collects(
    api: Api, sandbox: Sandbox
) -> None:
    plan = create_plan(api, cycle(1, "10.00"))
    sub = subscribe(api, plan["id"])
    approved = sandbox_approve(api, sub["id"], decline_payments=True).json()
    info = approved["billing_info"]
    assert info["failed_payments_count"] == 1
    assert info["outstanding_balance"]["value"] == "10.00"
    assert "BILLING.SUBSCRIPTION.PAYMENT.FAILED" in event_types(sandbox, sub["id"])
    path = f"{BASE}/{sub['id']}/capture"
    body: dict[str, Any] = {
        "note": "Balance",
        "capture_type": "OUTSTANDING_BALANCE",
        "amount": {"currency_code": "USD", "value": "25.00"},
    }
    assert issues(api.post(path, body)) == ["AMOUNT_GREATER_THAN_OUTSTANDING_BALANCE"]
    body["amount"]["value"] = "10.00"
    captured = api.post(path, body, headers={"PayPal-Request-Id": "sub-capture-1"})
    assert captured.status_code == 202
    replay = api.post(path, body, headers={"PayPal-Request-Id": "sub-capture-1"})
    assert replay.json()["id"] == captured.json()["id"]
    assert captured.json()["amount_with_breakdown"]["gross_amount"]["value"] == "10.00"
    shown = api.get(f"{BASE}/{sub['id']}").json()
    assert shown["billing_info"]["outstanding_balance"]["value"] == "0.00"
    assert issues(api.post(path, body)) == ["ZERO_OUTSTANDING_BALANCE"]
    assert [p["id"] for p in payments(api, sub["id"])] == [captured.json()["id"]]


def test_transactions_filter_by_time_and_need_both_bounds(api: Api) -> None:
    sub = active_subscription(api)
    path = f"{BASE}/{sub['id']}/transactions"
    before = {"start_time": "2026-01-01T00:00:00Z", "end_time": "2026-11-01T00:00:00Z"}
    assert api.get(path, params=before).json()["transactions"] == []
    assert len(payments(api, sub["id"])) == 1
    missing = api.get(path, params={"start_time": "2026-01-01T00:00:00Z"})
    assert missing.status_code == 400 and issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    reversed_window = {"start_time": WINDOW["end_time"], "end_time": WINDOW["start_time"]}
    assert api.get(path, params=reversed_window).status_code == 400


def test_replayed_create_returns_the_same_subscription(api: Api) -> None:
    plan = create_plan(api)
    key = {"PayPal-Request-Id": "sub-key-1"}
    first = api.post(BASE, {"plan_id": plan["id"]}, headers=key)
    second = api.post(BASE, {"plan_id": plan["id"]}, headers=key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]


def test_merchants_cannot_touch_each_others_subscriptions(api: Api, other_api: Api) -> None:
    sub = active_subscription(api)
    path = f"{BASE}/{sub['id']}"
    assert other_api.get(path).status_code == 404
    assert other_api.post(f"{path}/cancel", {"reason": "x"}).status_code == 404
    assert sandbox_approve(other_api, sub["id"]).status_code == 404
    assert other_api.post(BASE, {"plan_id": sub["plan_id"]}).status_code == 400
    assert api.get(path).json()["status"] == "ACTIVE"


def test_the_approve_page_approves_and_redirects(api: Api) -> None:
    plan = create_plan(api)
    context = {"return_url": "https://shop.example/ok", "cancel_url": "https://shop.example/no"}
    sub = subscribe(api, plan["id"], application_context=context)
    href = next(link["href"] for link in sub["links"] if link["rel"] == "approve")
    page = api.http.get(href)
    assert page.status_code == 200 and "Subscribe" in page.text
    done = api.http.post(href, data={"email": "fan@example.com"}, follow_redirects=False)
    assert done.status_code == 303
    assert done.headers["location"].startswith(
        f"https://shop.example/ok?subscription_id={sub['id']}"
    )
    shown = api.get(f"{BASE}/{sub['id']}").json()
    assert shown["status"] == "ACTIVE"
    assert shown["subscriber"]["email_address"] == "fan@example.com"
    assert api.http.get("/webapps/billing/subscriptions?ba_token=BA-NOPE").status_code == 404
