"""Subscription plan tools against the sandbox."""

from __future__ import annotations

from typing import Any

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit
from cartagent.tools.plans import TOOLS

from .conftest import call
from .flows import hints, sandbox_get


def product(toolkit: Toolkit) -> str:
    return str(call(toolkit, "create_product", {"name": "Coffee club"}).content["id"])


def plan_args(product_id: str, **extra: Any) -> dict[str, Any]:
    return {"product_id": product_id, "name": "Monthly beans", "price": "19.99", **extra}


def test_a_plan_with_trial_setup_fee_and_tax_is_created_as_asked(toolkit: Toolkit) -> None:
    product_id = product(toolkit)
    made = call(
        toolkit,
        "create_subscription_plan",
        plan_args(
            product_id,
            currency="EUR",
            total_cycles=12,
            trial={"interval_unit": "WEEK", "interval_count": 2, "price": "0", "cycles": 1},
            setup_fee="5",
            tax_percent="8.25",
        ),
    )
    assert not made.is_error, made.content
    assert made.content == {
        "id": made.content["id"],
        "product_id": product_id,
        "name": "Monthly beans",
        "status": "ACTIVE",
        "billing_cycles": [
            {"tenure": "TRIAL", "every": "2 WEEK", "total_cycles": 1, "price": "0"},
            {
                "tenure": "REGULAR",
                "every": "1 MONTH",
                "total_cycles": 12,
                "price": "19.99",
                "currency": "EUR",
            },
        ],
        "setup_fee": "5.00",
        "tax_percent": "8.25",
        "tax_inclusive": False,
    }


def test_a_plan_is_listed_shown_updated_deactivated_and_activated(toolkit: Toolkit) -> None:
    product_id = product(toolkit)
    plan_id = call(toolkit, "create_subscription_plan", plan_args(product_id)).content["id"]
    other = product(toolkit)
    call(toolkit, "create_subscription_plan", plan_args(other))

    listed = call(toolkit, "list_subscription_plans", {"product_id": product_id})
    assert [p["id"] for p in listed.content["plans"]] == [plan_id]

    updated = call(
        toolkit,
        "update_subscription_plan",
        {
            "plan_id": plan_id,
            "description": "Fresh beans",
            "setup_fee": "2.50",
            "payment_failure_threshold": 1,
        },
    )
    assert not updated.is_error, updated.content
    assert updated.content["description"] == "Fresh beans"
    assert updated.content["setup_fee"] == "2.50"
    shown = call(toolkit, "show_subscription_plan_details", {"plan_id": plan_id})
    assert shown.content == updated.content

    off = call(toolkit, "deactivate_subscription_plan", {"plan_id": plan_id})
    assert off.content == {"id": plan_id, "status": "INACTIVE"}
    on = call(toolkit, "activate_subscription_plan", {"plan_id": plan_id})
    assert on.content == {"id": plan_id, "status": "ACTIVE"}


def test_an_interval_longer_than_a_year_is_refused_naming_it_and_nothing_is_created(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    product_id = product(toolkit)
    result = call(
        toolkit,
        "create_subscription_plan",
        plan_args(product_id, interval_unit="MONTH", interval_count=13),
    )
    assert result.is_error
    assert result.content["field"] == "interval_count"
    assert sandbox_get(paypal_client, "/v1/billing/plans")["plans"] == []


def test_an_unknown_product_comes_back_as_paypals_error_on_product_id(toolkit: Toolkit) -> None:
    result = call(toolkit, "create_subscription_plan", plan_args("PROD-NOSUCHPRODUCT01"))
    assert result.is_error
    assert result.content["issues"][0]["field"] == "/product_id"


def test_plan_tools_change_nothing_irreversibly() -> None:
    read = ("readOnlyHint", "idempotentHint", "openWorldHint")
    assert hints(TOOLS) == {
        "create_subscription_plan": ("openWorldHint",),
        "list_subscription_plans": read,
        "show_subscription_plan_details": read,
        "update_subscription_plan": ("idempotentHint", "openWorldHint"),
        "activate_subscription_plan": ("idempotentHint", "openWorldHint"),
        "deactivate_subscription_plan": ("idempotentHint", "openWorldHint"),
    }
