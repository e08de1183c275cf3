"""The sandbox accepts what PayPal accepts: PayPal's own agent toolkit's request shapes.

``paypal-agent-toolkit`` 1.11 sends ``null`` for optional fields it was not given and puts
``invoice_id`` in the body of calls that take it in the path; PayPal accepts both. Wrong types,
bad enum values and missing required fields are still refused.
"""

from __future__ import annotations

import pytest

from tests.conftest import Api, issues
from tests.sandbox.test_invoicing import BASE as INVOICES
from tests.sandbox.test_invoicing import create, sent
from tests.sandbox.test_plans import BASE as PLANS
from tests.sandbox.test_plans import cycle, plan_body
from tests.sandbox.test_products import BASE as PRODUCTS
from tests.sandbox.test_products import create_product, product_body
from tests.sandbox.test_subscriptions import BASE as SUBSCRIPTIONS
from tests.sandbox.test_subscriptions import subscribe


def test_a_product_with_null_urls_is_created_without_them(api: Api) -> None:
    response = api.post(PRODUCTS, product_body(image_url=None, home_url=None))
    assert response.status_code == 201, response.text
    created = api.get(f"{PRODUCTS}/{response.json()['id']}").json()
    assert "image_url" not in created and "home_url" not in created


def test_a_plan_with_a_null_pricing_version_and_a_subscription_with_a_null_quantity(
    api: Api,
) -> None:
    product = create_product(api)
    priced = cycle(1, "10.00")
    priced["pricing_scheme"]["version"] = None
    plan = api.post(PLANS, plan_body(product["id"], priced))
    assert plan.status_code == 201, plan.text
    subscription = api.post(SUBSCRIPTIONS, {"plan_id": plan.json()["id"], "quantity": None})
    assert subscription.status_code == 201, subscription.text
    assert subscription.json()["status"] == "APPROVAL_PENDING"


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("send", {"send_to_recipient": True}),
        ("remind", {"note": "Gentle nudge"}),
        ("cancel", {"note": "Sorry"}),
    ],
)
def test_invoice_calls_with_the_invoice_id_in_the_body_too(
    api: Api, action: str, body: dict[str, object]
) -> None:
    invoice = create(api) if action == "send" else sent(api)
    response = api.post(
        f"{INVOICES}/{invoice['id']}/{action}", {"invoice_id": invoice["id"], **body}
    )
    assert response.status_code in (200, 202, 204), response.text


def test_what_is_wrong_is_still_refused(api: Api) -> None:
    # null where a value is required is a missing value
    assert issues(api.post(PRODUCTS, product_body(name=None))) == ["MISSING_REQUIRED_PARAMETER"]
    # a defined field of the wrong type or outside its enum
    assert issues(api.post(PRODUCTS, product_body(type="FOOD"))) == ["INVALID_PARAMETER_VALUE"]
    assert issues(api.post(PRODUCTS, product_body(home_url=5))) == ["INVALID_PARAMETER_SYNTAX"]
    # null inside an array is not a member left out
    product = create_product(api)
    nulls = api.post(PLANS, plan_body(product["id"]) | {"billing_cycles": [None]})
    assert nulls.status_code == 400


def test_a_json_patch_keeps_its_null_values(api: Api) -> None:
    product = create_product(api, description="A bag")
    # "value": null is part of a JSON Patch operation, not an absent field: PayPal refuses it
    # for a string field, and so does the sandbox.
    patch = [{"op": "replace", "path": "/description", "value": None}]
    response = api.patch(f"{PRODUCTS}/{product['id']}", patch)
    assert response.status_code == 400
    assert api.get(f"{PRODUCTS}/{product['id']}").json()["description"] == "A bag"


def test_a_subscription_keeps_working_after_a_lenient_create(api: Api) -> None:
    product = create_product(api)
    plan = api.post(PLANS, plan_body(product["id"]))
    sub = subscribe(api, plan.json()["id"], quantity=None, custom_id=None)
    assert api.get(f"{SUBSCRIPTIONS}/{sub['id']}").json()["plan_id"] == plan.json()["id"]
