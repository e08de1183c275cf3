"""Subscription tools against the sandbox: create, approve (sandbox), change, suspend, cancel."""

from __future__ import annotations

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit
from cartagent.tools.subscriptions import TOOLS

from .conftest import MakeToolkit, call
from .flows import hints, sandbox_get, sandbox_post


def active_plan(toolkit: Toolkit) -> str:
    product_id = call(toolkit, "create_product", {"name": "Coffee club"}).content["id"]
    plan = call(
        toolkit,
        "create_subscription_plan",
        {"product_id": product_id, "name": "Monthly", "price": "10", "currency": "EUR"},
    )
    return str(plan.content["id"])


def approved_subscription(toolkit: Toolkit, client: AsyncPayPalClient) -> str:
    made = call(toolkit, "create_subscription", {"plan_id": active_plan(toolkit)})
    sandbox_post(client, f"/v1/sandbox/subscriptions/{made.content['id']}/approve")
    return str(made.content["id"])


def test_a_new_subscription_comes_with_the_link_the_buyer_approves_at(toolkit: Toolkit) -> None:
    plan_id = active_plan(toolkit)
    made = call(
        toolkit,
        "create_subscription",
        {
            "plan_id": plan_id,
            "custom_id": "cust-7",
            "shipping_amount": "3",
            "subscriber_email": "buyer@example.com",
        },
    )
    assert not made.is_error, made.content
    assert made.content["status"] == "APPROVAL_PENDING"
    assert "ba_token=" in made.content["approve_url"]
    assert made.content["plan_id"] == plan_id
    assert (made.content["shipping_amount"], made.content["currency"]) == ("3.00", "EUR")
    assert made.content["subscriber_email"] == "buyer@example.com"


def test_an_approved_subscription_is_updated_suspended_resumed_and_cancelled(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    sub_id = approved_subscription(toolkit, paypal_client)
    shown = call(toolkit, "show_subscription_details", {"subscription_id": sub_id})
    assert shown.content["status"] == "ACTIVE"
    assert "approve_url" not in shown.content

    updated = call(
        toolkit,
        "update_subscription",
        {"subscription_id": sub_id, "custom_id": "order-42", "shipping_amount": "4.5"},
    )
    assert not updated.is_error, updated.content
    assert updated.content["custom_id"] == "order-42"
    assert updated.content["shipping_amount"] == "4.50"

    paused = call(toolkit, "suspend_subscription", {"subscription_id": sub_id, "reason": "Away"})
    assert paused.content == {"id": sub_id, "status": "SUSPENDED"}
    resumed = call(toolkit, "activate_subscription", {"subscription_id": sub_id})
    assert resumed.content == {"id": sub_id, "status": "ACTIVE"}
    ended = call(toolkit, "cancel_subscription", {"subscription_id": sub_id, "reason": "Moved"})
    assert ended.content == {"id": sub_id, "status": "CANCELLED"}


def test_cancelling_is_refused_without_approval_and_the_subscription_stays_active(
    make_toolkit: MakeToolkit, paypal_client: AsyncPayPalClient, toolkit: Toolkit
) -> None:
    sub_id = approved_subscription(toolkit, paypal_client)
    unapproved = make_toolkit(approve=None)
    result = call(unapproved, "cancel_subscription", {"subscription_id": sub_id, "reason": "x"})
    assert result.is_error
    assert result.content["kind"] == "ApprovalRequired"
    denied = make_toolkit(approve=lambda request: False)
    result = call(denied, "cancel_subscription", {"subscription_id": sub_id, "reason": "x"})
    assert result.content["kind"] == "ApprovalDenied"
    assert sandbox_get(paypal_client, f"/v1/billing/subscriptions/{sub_id}")["status"] == "ACTIVE"


def test_a_negative_shipping_amount_is_refused_naming_it_and_nothing_changes(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    sub_id = approved_subscription(toolkit, paypal_client)
    result = call(
        toolkit, "update_subscription", {"subscription_id": sub_id, "shipping_amount": "-1"}
    )
    assert result.is_error
    assert result.content["field"] == "shipping_amount"
    assert "shipping_amount" not in sandbox_get(
        paypal_client, f"/v1/billing/subscriptions/{sub_id}"
    )


def test_suspending_needs_a_reason(toolkit: Toolkit, paypal_client: AsyncPayPalClient) -> None:
    sub_id = approved_subscription(toolkit, paypal_client)
    result = call(toolkit, "suspend_subscription", {"subscription_id": sub_id})
    assert result.is_error
    assert result.content["field"] == "reason"
    assert sandbox_get(paypal_client, f"/v1/billing/subscriptions/{sub_id}")["status"] == "ACTIVE"


def test_only_cancelling_a_subscription_is_destructive() -> None:
    assert hints(TOOLS) == {
        "create_subscription": ("openWorldHint",),
        "show_subscription_details": ("readOnlyHint", "idempotentHint", "openWorldHint"),
        "update_subscription": ("idempotentHint", "openWorldHint"),
        "suspend_subscription": ("idempotentHint", "openWorldHint"),
        "activate_subscription": ("idempotentHint", "openWorldHint"),
        "cancel_subscription": (
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
            "approval",
        ),
    }
