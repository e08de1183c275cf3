"""PayPal Cart API v1 end to end: PayPal's calls (with a JWT the sandbox issues) to the
merchant in-process, the buyer approving on the sandbox's page, the merchant capturing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.commerce import DEMO_STORE, Merchant, StoreTerms
from cartagent.commerce.paypal_cart import (
    JwksKeys,
    JwtVerifier,
    PayPalCartService,
    paypal_cart_router,
)
from cartagent.money import Money, unit_tax
from cartagent.paypal import PayPalClient
from cartagent.sandbox import Sandbox, ensure_merchant
from tests.commerce.conftest import BASE_URL, PayPalFaults, in_stock, out_of_stock, tau_products
from tests.conftest import Api, approve

PREFIX = "/api/paypal/v1"
ISSUER = "http://sandbox.test"
SHIPPING = {
    "address_line_1": "1 Analytical Way",
    "admin_area_2": "San Francisco",
    "admin_area_1": "CA",
    "postal_code": "94102",
    "country_code": "US",
}
CUSTOMER = {
    "name": {"given_name": "Ada", "surname": "Lovelace"},
    "email_address": "ada@example.com",
}


def price(variant_id: str) -> Money:
    for product in tau_products():
        for variant in product.variants:
            if variant.id == variant_id:
                return Money(variant.price, variant.currency)
    raise AssertionError(variant_id)


def expected_totals(lines: dict[str, int]) -> dict[str, dict[str, str]]:
    items = sum((price(v) * q for v, q in lines.items()), Money.zero("USD"))
    taxes = (unit_tax(price(v), DEMO_STORE.tax_percent) * q for v, q in lines.items())
    tax = sum(taxes, Money.zero("USD"))
    shipping = DEMO_STORE.shipping_for(items)
    return {
        "subtotal": items.to_paypal(),
        "shipping": shipping.to_paypal(),
        "tax": tax.to_paypal(),
        "total": (items + tax + shipping).to_paypal(),
    }


@pytest.fixture
def store_account(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    """The merchant's PayPal account that PayPal's JWTs are addressed to."""
    client_id = "cart-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


@pytest.fixture
def keys(http: TestClient) -> JwksKeys:
    return JwksKeys(lambda: http.get("/v1/agentic-commerce/jwks").json())


@pytest.fixture
def verifier(sandbox: Sandbox, store_account: Api, keys: JwksKeys) -> JwtVerifier:
    account = sandbox.store.merchant_by_client_id(store_account.client_id)
    assert account is not None
    return JwtVerifier(keys, issuer=ISSUER, audience=account.id)


@pytest.fixture
def cart_http(merchant: Merchant, verifier: JwtVerifier) -> Iterator[TestClient]:
    app = FastAPI()
    app.include_router(paypal_cart_router(PayPalCartService(merchant, verifier)), prefix=PREFIX)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as client:
        yield client


def jwt_for(account: Api, **body: Any) -> str:
    response = account.post("/v1/sandbox/agentic-commerce/token", json=body or None)
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


class PayPal:
    """PayPal calling the merchant's Cart API with a JWT."""

    def __init__(self, http: TestClient, token: str) -> None:
        self.http = http
        self.token = token

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return self.http.request(method, PREFIX + path, json=body, headers=headers, **kwargs)

    def create(self, body: Any) -> httpx.Response:
        return self.call("POST", "/merchant-cart", body)

    def get(self, cart_id: str) -> httpx.Response:
        return self.call("GET", f"/merchant-cart/{cart_id}")

    def put(self, cart_id: str, body: Any) -> httpx.Response:
        return self.call("PUT", f"/merchant-cart/{cart_id}", body)

    def checkout(self, cart_id: str, body: Any) -> httpx.Response:
        return self.call("POST", f"/merchant-cart/{cart_id}/checkout", body)


@pytest.fixture
def paypal(cart_http: TestClient, store_account: Api) -> PayPal:
    return PayPal(cart_http, jwt_for(store_account))


def cart_body(lines: dict[str, int], **extra: Any) -> dict[str, Any]:
    items = [{"variant_id": v, "quantity": q} for v, q in lines.items()]
    return {"items": items, "customer": CUSTOMER, "shipping_address": SHIPPING, **extra}


def pay(token: str, payer_id: str = "PAYER12345678") -> dict[str, Any]:
    return {"payment_method": {"type": "paypal", "token": token, "payer_id": payer_id}}


def captures(paypal_faults: PayPalFaults) -> int:
    return sum(1 for r in paypal_faults.sent if r.url.path.endswith("/capture"))


def ready_cart(paypal: PayPal, lines: dict[str, int]) -> dict[str, Any]:
    response = paypal.create(cart_body(lines))
    assert response.status_code == 201, response.text
    cart: dict[str, Any] = response.json()
    return cart


# The journey -----------------------------------------------------------------------------------


def test_cart_journey_create_replace_approve_checkout_once(
    paypal: PayPal,
    store_account: Api,
    merchant_paypal: PayPalClient,
    paypal_faults: PayPalFaults,
    keys: JwksKeys,
) -> None:
    first, second = in_stock(2)
    created = paypal.create(cart_body({first: 2}))
    assert created.status_code == 201, created.text
    cart = created.json()
    assert cart["status"] == "CREATED"
    assert cart["validation_status"] == "VALID"
    assert cart["validation_issues"] == []
    assert cart["totals"] == expected_totals({first: 2})
    [item] = cart["items"]
    assert (item["variant_id"], item["quantity"]) == (first, 2)
    assert item["price"] == price(first).to_paypal() and item["name"] and item["parent_id"]
    assert cart["customer"] == CUSTOMER and cart["shipping_address"] == SHIPPING
    assert [o["is_selected"] for o in cart["available_shipping_options"]] == [True]
    token = cart["payment_method"]["token"]
    order = merchant_paypal.get_order(token)  # the token is the PayPal order, for the total
    assert order["status"] == "CREATED"
    assert order["purchase_units"][0]["amount"]["value"] == cart["totals"]["total"]["value"]

    replaced = paypal.put(cart["id"], cart_body({second: 1}))
    assert replaced.status_code == 200, replaced.text
    cart = replaced.json()
    assert cart["status"] == "READY"
    assert [item["variant_id"] for item in cart["items"]] == [second]
    assert cart["totals"] == expected_totals({second: 1})
    new_token = cart["payment_method"]["token"]
    assert new_token != token  # a new amount, a new order to approve
    assert paypal.get(cart["id"]).json() == cart

    assert approve(store_account, new_token).status_code == 200
    done = paypal.checkout(cart["id"], {**cart_body({second: 1}), **pay(new_token)})
    assert done.status_code == 200, done.text
    completed = done.json()
    assert completed["status"] == "COMPLETED"
    assert completed["payment_method"] == {
        "type": "paypal",
        "token": new_token,
        "payer_id": "PAYER12345678",
    }
    number = completed["payment_confirmation"]["merchant_order_number"]
    assert number
    paid = merchant_paypal.get_order(new_token)
    assert paid["status"] == "COMPLETED"
    [capture] = paid["purchase_units"][0]["payments"]["captures"]
    assert capture["amount"]["value"] == completed["totals"]["total"]["value"]

    again = paypal.checkout(cart["id"], pay(new_token))  # PayPal retries: no second capture
    assert again.status_code == 200, again.text
    assert again.json()["payment_confirmation"]["merchant_order_number"] == number
    assert captures(paypal_faults) == 1
    assert (
        len(merchant_paypal.get_order(new_token)["purchase_units"][0]["payments"]["captures"]) == 1
    )
    assert paypal.get(cart["id"]).json()["status"] == "COMPLETED"
    assert keys.fetches == 1  # PayPal's keys, fetched once for all these calls


def test_an_unchanged_cart_keeps_its_payment_token(paypal: PayPal) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    customer = {**CUSTOMER, "email_address": "new@example.com"}  # not part of the PayPal order
    again = paypal.put(cart["id"], cart_body({in_stock()[0]: 1}, customer=customer)).json()
    assert again["payment_method"]["token"] == cart["payment_method"]["token"]
    assert again["customer"] == customer


def test_put_replaces_the_whole_cart(paypal: PayPal) -> None:
    variant = in_stock()[0]
    cart = ready_cart(paypal, {variant: 1})
    body = {"items": [{"variant_id": variant, "quantity": 3}], "shipping_address": SHIPPING}
    replaced = paypal.put(cart["id"], body).json()
    assert "customer" not in replaced  # left out, so removed
    assert replaced["items"][0]["quantity"] == 3
    bare = paypal.put(cart["id"], {"items": [{"variant_id": variant, "quantity": 1}]})
    assert bare.status_code == 200
    assert bare.json()["validation_issues"][0]["context"]["specific_issue"] == (
        "MISSING_SHIPPING_ADDRESS"
    )
    assert "payment_method" not in bare.json()
    assert paypal.put(cart["id"], {"customer": CUSTOMER}).status_code == 422  # no items


# Validation issues (200) and business errors (422) --------------------------------------------


def test_a_cart_without_an_address_needs_more_information(paypal: PayPal) -> None:
    variant = in_stock()[0]
    response = paypal.create({"items": [{"variant_id": variant, "quantity": 1}]})
    assert response.status_code == 200, response.text
    cart = response.json()
    assert cart["status"] == "INCOMPLETE"
    assert cart["validation_status"] == "REQUIRES_ADDITIONAL_INFORMATION"
    [issue] = cart["validation_issues"]
    assert issue["code"] == "SHIPPING_ERROR" and issue["type"] == "MISSING_FIELD"
    assert issue["field"] == "shipping_address"
    assert issue["resolution_options"][0]["action"] == "PROVIDE_MISSING_FIELD"
    assert "payment_method" not in cart and cart["available_shipping_options"] == []
    fixed = paypal.put(cart["id"], cart_body({variant: 1})).json()
    assert fixed["status"] == "READY" and fixed["payment_method"]["token"]


def test_an_incomplete_address_is_kept_and_reported(paypal: PayPal) -> None:
    body = cart_body({in_stock()[0]: 1}, shipping_address={"country_code": "US"})
    cart = paypal.create(body).json()
    assert cart["shipping_address"] == {"country_code": "US"}
    [issue] = cart["validation_issues"]
    assert issue["context"]["specific_issue"] == "SHIPPING_ADDRESS_INVALID"
    assert cart["validation_status"] == "INVALID"


def test_an_out_of_stock_item_is_a_validation_issue_without_a_token(
    paypal: PayPal, paypal_faults: PayPalFaults
) -> None:
    gone = out_of_stock()
    response = paypal.create(cart_body({gone: 1}))
    assert response.status_code == 200, response.text
    cart = response.json()
    assert (cart["status"], cart["validation_status"]) == ("INCOMPLETE", "INVALID")
    [issue] = cart["validation_issues"]
    assert issue["code"] == "INVENTORY_ISSUE" and issue["item_id"] == gone
    assert issue["context"]["specific_issue"] == "ITEM_OUT_OF_STOCK"
    assert "payment_method" not in cart
    assert not [r for r in paypal_faults.sent if r.url.path == "/v2/checkout/orders"]
    refused = paypal.checkout(cart["id"], pay("5O190127TN364715T"))
    assert refused.status_code == 422
    assert refused.json()["name"] == "ITEM_OUT_OF_STOCK"


def test_an_unknown_variant_cannot_make_a_cart(paypal: PayPal) -> None:
    body = cart_body({in_stock()[0]: 1})
    body["items"].append({"variant_id": "no-such-variant", "quantity": 1})
    response = paypal.create(body)
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["name"] == "ITEM_NOT_FOUND" and error["debug_id"]
    assert error["business_context"]["code"] == "DATA_ERROR"
    assert error["details"] == [
        {
            "field": "items[1].variant_id",
            "issue": "ITEM_NOT_FOUND",
            "description": error["message"],
        }
    ]


def test_quantity_over_the_limit_is_a_business_error(paypal: PayPal) -> None:
    response = paypal.create(cart_body({in_stock()[0]: 1000}))
    assert response.status_code == 422
    assert response.json()["name"] == "MAXIMUM_QUANTITY_EXCEEDED"


def test_a_quoted_price_that_is_not_todays_blocks_until_accepted(paypal: PayPal) -> None:
    variant = in_stock()[0]
    body = cart_body({variant: 1})
    body["items"][0]["price"] = {"currency_code": "USD", "value": "0.01"}
    cart = paypal.create(body).json()
    [issue] = cart["validation_issues"]
    assert issue["code"] == "PRICING_ERROR"
    assert issue["context"]["specific_issue"] == "PRICE_MISMATCH"
    assert issue["context"]["current_price"] == str(price(variant).amount)
    assert issue["resolution_options"][0]["action"] == "ACCEPT_NEW_PRICE"
    assert "payment_method" not in cart
    body["items"][0]["price"] = price(variant).to_paypal()
    accepted = paypal.put(cart["id"], body).json()
    assert accepted["validation_issues"] == [] and accepted["payment_method"]["token"]


@pytest.mark.parametrize(
    ("body", "field", "issue"),
    [
        ({"items": [{"variant_id": "x", "quantity": 0}]}, "items[0].quantity", None),
        ({"items": [{"quantity": 1}]}, "items[0].variant_id", "MISSING_REQUIRED_PARAMETER"),
        ({"items": [{"variant_id": "x"}]}, "items[0].quantity", "MISSING_REQUIRED_PARAMETER"),
        (
            {
                "items": [{"variant_id": "x", "quantity": 1}],
                "shipping_address": {"country_code": "us"},
            },
            "shipping_address.country_code",
            None,
        ),
        ([], "", None),
    ],
)
def test_malformed_carts_are_bad_requests(
    paypal: PayPal, body: Any, field: str, issue: str | None
) -> None:
    response = paypal.create(body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["name"] == "INVALID_REQUEST"
    assert error["details"][0]["field"] == field
    assert error["details"][0]["issue"] == (issue or "INVALID_PARAMETER_SYNTAX")


def test_bodies_that_are_not_json_or_too_big_are_bad_requests(paypal: PayPal) -> None:
    headers = {"Authorization": f"Bearer {paypal.token}", "Content-Type": "application/json"}
    broken = paypal.http.post(PREFIX + "/merchant-cart", content=b"{", headers=headers)
    assert broken.status_code == 400
    assert broken.json()["details"][0]["issue"] == "MALFORMED_REQUEST_JSON"
    huge = paypal.http.post(PREFIX + "/merchant-cart", content=b" " * 300_000, headers=headers)
    assert huge.status_code == 400


def test_unknown_and_malformed_cart_ids(paypal: PayPal) -> None:
    missing = paypal.get("cs_000000000000000000000000")
    assert missing.status_code == 404
    assert missing.json()["name"] == "RESOURCE_NOT_FOUND"
    assert paypal.get("not%20an%20id").status_code == 400
    assert (
        paypal.put("cs_000000000000000000000000", cart_body({in_stock()[0]: 1})).status_code == 404
    )


# Checkout --------------------------------------------------------------------------------------


def test_checkout_before_approval_captures_nothing(
    paypal: PayPal, merchant_paypal: PayPalClient
) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    token = cart["payment_method"]["token"]
    response = paypal.checkout(cart["id"], pay(token))
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["name"] == "ORDER_NOT_APPROVED"
    assert error["business_context"]["code"] == "PAYMENT_ERROR"
    assert error["details"][0]["field"] == "payment_method.token"
    assert merchant_paypal.get_order(token)["status"] == "CREATED"
    after = paypal.get(cart["id"]).json()
    assert after["status"] == "READY" and after["payment_method"]["token"] == token


def test_checkout_needs_the_carts_current_token_and_items(
    paypal: PayPal, store_account: Api
) -> None:
    first, second = in_stock(2)
    cart = ready_cart(paypal, {first: 1})
    old = cart["payment_method"]["token"]
    approve(store_account, old)
    new = paypal.put(cart["id"], cart_body({first: 2})).json()["payment_method"]["token"]
    stale = paypal.checkout(cart["id"], pay(old))
    assert stale.status_code == 422
    assert stale.json()["name"] == "TOKEN_MISMATCH"
    approve(store_account, new)
    other = paypal.checkout(cart["id"], {**cart_body({second: 1}), **pay(new)})
    assert other.status_code == 422
    assert other.json()["name"] == "ITEM_ATTRIBUTE_MISMATCH"
    missing = paypal.checkout(cart["id"], {"payment_method": {"type": "paypal"}})
    assert missing.status_code == 400
    assert paypal.checkout(cart["id"], pay(new)).json()["status"] == "COMPLETED"
    after = paypal.put(cart["id"], cart_body({first: 1}))
    assert after.status_code == 422 and after.json()["name"] == "CART_NOT_OPEN"


def test_an_approved_order_for_an_old_total_is_not_captured(
    paypal: PayPal, store_account: Api, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    token = cart["payment_method"]["token"]
    approve(store_account, token)
    merchant.terms = StoreTerms(tax_percent=Decimal("20"))  # the store's tax changed since
    response = paypal.checkout(cart["id"], pay(token))
    assert response.status_code == 422, response.text
    assert response.json()["name"] == "ORDER_NOT_APPROVED"
    assert "AMOUNT_MISMATCH" in response.json()["message"]
    assert merchant_paypal.get_order(token)["status"] == "APPROVED"
    fresh = paypal.put(cart["id"], cart_body({in_stock()[0]: 1})).json()
    assert fresh["payment_method"]["token"] != token


def test_a_declined_capture_gives_a_fresh_token(
    paypal: PayPal, store_account: Api, paypal_faults: PayPalFaults
) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    token = cart["payment_method"]["token"]
    approve(store_account, token)
    paypal_faults.declines = 1
    declined = paypal.checkout(cart["id"], pay(token))
    assert declined.status_code == 422, declined.text
    assert declined.json()["name"] == "PAYMENT_DECLINED"
    fresh = paypal.get(cart["id"]).json()
    assert fresh["status"] == "READY"
    retry = fresh["payment_method"]["token"]
    assert retry != token
    approve(store_account, retry)
    assert paypal.checkout(cart["id"], pay(retry)).json()["status"] == "COMPLETED"


def test_paypal_down_at_checkout_is_retried_without_capturing_twice(
    paypal: PayPal,
    store_account: Api,
    paypal_faults: PayPalFaults,
    merchant_paypal: PayPalClient,
) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    token = cart["payment_method"]["token"]
    approve(store_account, token)
    paypal_faults.outages = 1
    down = paypal.checkout(cart["id"], pay(token))
    assert down.status_code == 503 and down.headers["Retry-After"]
    assert paypal.get(cart["id"]).json()["status"] == "READY"
    assert paypal.checkout(cart["id"], pay(token)).json()["status"] == "COMPLETED"
    assert paypal.checkout(cart["id"], pay(token)).status_code == 200
    assert captures(paypal_faults) == 2  # the one that never reached PayPal, and one capture
    assert len(merchant_paypal.get_order(token)["purchase_units"][0]["payments"]["captures"]) == 1


# Authentication --------------------------------------------------------------------------------


def test_calls_without_a_valid_jwt_are_refused(
    paypal: PayPal, sandbox: Sandbox, http: TestClient, verifier: JwtVerifier
) -> None:
    cart = ready_cart(paypal, {in_stock()[0]: 1})
    ensure_merchant(sandbox, f"other-{cart['id']}", "secret")
    other = Api(http, f"other-{cart['id']}", "secret")
    for token in (None, "not-a-jwt", jwt_for(other), paypal.token[:-4] + "AAAA"):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = paypal.http.get(f"{PREFIX}/merchant-cart/{cart['id']}", headers=headers)
        assert response.status_code == 401, token
        assert response.json()["name"] == "AUTHENTICATION_FAILURE"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    verifier.clock = lambda: 10**10  # long after the token expired
    expired = paypal.get(cart["id"])
    assert expired.status_code == 401
    assert "expired" in expired.json()["message"]
