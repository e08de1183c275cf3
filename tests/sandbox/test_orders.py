"""Orders v2 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Api, approve, issues


def order_body(value: str = "30.00", **unit: Any) -> dict[str, Any]:
    return {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": value}, **unit}],
    }


def itemised(
    unit_price: str, quantity: int, tax: str, item_total: str, tax_total: str, total: str
) -> dict[str, Any]:
    return (
        order_body(
            total,
            items=[
                {
                    "name": "Mug",
                    "quantity": str(quantity),
                    "unit_amount": {"currency_code": "USD", "value": unit_price},
                    "tax": {"currency_code": "USD", "value": tax},
                }
            ],
        )
        | {}
    )


def with_breakdown(body: dict[str, Any], **parts: str) -> dict[str, Any]:
    body["purchase_units"][0]["amount"]["breakdown"] = {
        name: {"currency_code": "USD", "value": value} for name, value in parts.items()
    }
    return body


def test_create_returns_minimal_order_with_approve_link(api: Api) -> None:
    response = api.post("/v2/checkout/orders", order_body())
    assert response.status_code == 201
    order = response.json()
    assert set(order) == {"id", "status", "links"}
    assert order["status"] == "CREATED"
    assert len(order["id"]) == 17
    rels = {link["rel"]: link for link in order["links"]}
    assert rels["approve"]["href"].endswith(f"/checkoutnow?token={order['id']}")
    assert rels["capture"]["method"] == "POST"


def test_prefer_representation_returns_the_full_order(api: Api) -> None:
    response = api.post(
        "/v2/checkout/orders", order_body(), headers={"Prefer": "return=representation"}
    )
    order = response.json()
    assert order["intent"] == "CAPTURE"
    assert order["purchase_units"][0]["reference_id"] == "default"
    assert order["purchase_units"][0]["payee"]["merchant_id"]


def test_create_approve_capture_completes_the_order(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body("30.00")).json()
    page = approve(api, order["id"])
    assert page.status_code == 200 and "APPROVED" in page.text
    assert api.get(f"/v2/checkout/orders/{order['id']}").json()["status"] == "APPROVED"
    captured = api.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert captured.status_code == 201
    body = captured.json()
    assert body["status"] == "COMPLETED"
    capture = body["purchase_units"][0]["payments"]["captures"][0]
    assert capture["status"] == "COMPLETED"
    assert capture["amount"] == {"currency_code": "USD", "value": "30.00"}
    breakdown = capture["seller_receivable_breakdown"]
    assert breakdown["paypal_fee"]["value"] == "1.54"  # 3.49% of 30.00 + 0.49, half-up
    assert breakdown["net_amount"]["value"] == "28.46"
    assert body["payer"]["email_address"]


def test_capture_before_approval_is_order_not_approved(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body()).json()
    response = api.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert response.status_code == 422
    assert issues(response) == ["ORDER_NOT_APPROVED"]
    assert response.json()["name"] == "UNPROCESSABLE_ENTITY"
    assert response.json()["debug_id"]


@pytest.mark.postgres  # read FOR UPDATE on PostgreSQL only
def test_capturing_twice_is_refused_and_writes_nothing(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body()).json()
    approve(api, order["id"])
    api.post(f"/v2/checkout/orders/{order['id']}/capture")
    again = api.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert again.status_code == 422
    assert issues(again) == ["ORDER_ALREADY_CAPTURED"]
    shown = api.get(f"/v2/checkout/orders/{order['id']}").json()
    assert len(shown["purchase_units"][0]["payments"]["captures"]) == 1


@pytest.mark.postgres  # PostgreSQL replays under an advisory lock, through its own SQL
def test_replayed_capture_answers_200_with_the_same_capture(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body()).json()
    approve(api, order["id"])
    key = {"PayPal-Request-Id": "capture-key-1"}
    first = api.post(f"/v2/checkout/orders/{order['id']}/capture", headers=key)
    second = api.post(f"/v2/checkout/orders/{order['id']}/capture", headers=key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()


@pytest.mark.postgres  # PostgreSQL replays under an advisory lock, through its own SQL
def test_replayed_create_returns_the_same_order(api: Api) -> None:
    key = {"PayPal-Request-Id": "create-key-1"}
    first = api.post("/v2/checkout/orders", order_body(), headers=key).json()
    second = api.post("/v2/checkout/orders", order_body(), headers=key).json()
    assert first["id"] == second["id"]


def test_tax_total_must_equal_per_unit_tax_times_quantity(api: Api) -> None:
    # 3 x 9.99 at 8.25%: per-unit tax 0.82, so tax_total must be 2.46 (not 2.47 from 29.97*8.25%).
    body = itemised("9.99", 3, "0.82", "29.97", "2.47", "32.44")
    with_breakdown(body, item_total="29.97", tax_total="2.47")
    response = api.post("/v2/checkout/orders", body)
    assert response.status_code == 422
    assert issues(response) == ["TAX_TOTAL_MISMATCH"]
    good = itemised("9.99", 3, "0.82", "29.97", "2.46", "32.43")
    with_breakdown(good, item_total="29.97", tax_total="2.46")
    assert api.post("/v2/checkout/orders", good).status_code == 201


def test_breakdown_must_add_up_to_the_amount(api: Api) -> None:
    body = with_breakdown(order_body("25.00"), item_total="20.00", shipping="4.00")
    response = api.post("/v2/checkout/orders", body)
    assert issues(response) == ["AMOUNT_MISMATCH"]
    body = with_breakdown(order_body("23.00"), item_total="20.00", shipping="4.00", discount="1.00")
    assert api.post("/v2/checkout/orders", body).status_code == 201


def test_items_need_an_item_total(api: Api) -> None:
    body = order_body(
        "10.00",
        items=[
            {
                "name": "x",
                "quantity": "1",
                "unit_amount": {"currency_code": "USD", "value": "10.00"},
            }
        ],
    )
    assert issues(api.post("/v2/checkout/orders", body)) == ["ITEM_TOTAL_REQUIRED"]


def test_wrong_currency_and_precision_are_rejected(api: Api) -> None:
    body = order_body()
    body["purchase_units"][0]["amount"]["currency_code"] = "XXX"
    assert issues(api.post("/v2/checkout/orders", body)) == ["INVALID_CURRENCY_CODE"]
    assert issues(api.post("/v2/checkout/orders", order_body("1.001"))) != []
    jpy = order_body()
    jpy["purchase_units"][0]["amount"] = {"currency_code": "JPY", "value": "100.50"}
    assert issues(api.post("/v2/checkout/orders", jpy)) == ["DECIMAL_PRECISION"]


def test_malformed_json_and_schema_violations_are_400(api: Api) -> None:
    bad = api.request(
        "POST",
        "/v2/checkout/orders",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert bad.status_code == 400 and issues(bad) == ["MALFORMED_REQUEST_JSON"]
    missing = api.post("/v2/checkout/orders", {"intent": "CAPTURE"})
    assert missing.status_code == 400
    assert missing.json()["details"][0]["field"] == "/purchase_units"
    assert issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    wrong_type = api.post("/v2/checkout/orders", {"intent": 5, "purchase_units": []})
    assert wrong_type.status_code == 400
    unknown = api.post("/v2/checkout/orders", order_body() | {"colour": "red"})
    assert unknown.status_code == 201 and "colour" not in unknown.json()  # ignored, as PayPal does


def test_requests_without_a_valid_token_are_401(api: Api) -> None:
    response = api.http.get("/v2/checkout/orders/ABC")
    assert response.status_code == 401
    assert response.json()["name"] == "AUTHENTICATION_FAILURE"
    forged = api.http.get("/v2/checkout/orders/ABC", headers={"Authorization": "Bearer A21AAxyz"})
    assert forged.status_code == 401


def test_merchants_cannot_see_each_others_orders(api: Api, other_api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body()).json()
    assert other_api.get(f"/v2/checkout/orders/{order['id']}").status_code == 404


def test_patch_replaces_the_amount_and_revalidates(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body("10.00")).json()
    path = "/purchase_units/@reference_id=='default'/amount"
    ok = api.patch(
        f"/v2/checkout/orders/{order['id']}",
        [{"op": "replace", "path": path, "value": {"currency_code": "USD", "value": "12.00"}}],
    )
    assert ok.status_code == 204
    shown = api.get(f"/v2/checkout/orders/{order['id']}").json()
    assert shown["purchase_units"][0]["amount"]["value"] == "12.00"
    bad = api.patch(
        f"/v2/checkout/orders/{order['id']}",
        [{"op": "replace", "path": path, "value": {"currency_code": "USD", "value": "0.00"}}],
    )
    assert issues(bad) == ["CANNOT_BE_ZERO_OR_NEGATIVE"]
    assert (
        api.get(f"/v2/checkout/orders/{order['id']}").json()["purchase_units"][0]["amount"]["value"]
        == "12.00"
    )


def test_authorize_intent_creates_an_authorization(api: Api) -> None:
    body = order_body("50.00") | {"intent": "AUTHORIZE"}
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    wrong = api.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert issues(wrong) == ["ACTION_DOES_NOT_MATCH_INTENT"]
    response = api.post(f"/v2/checkout/orders/{order['id']}/authorize")
    assert response.status_code == 201
    auth = response.json()["purchase_units"][0]["payments"]["authorizations"][0]
    assert auth["status"] == "CREATED"
    assert auth["amount"]["value"] == "50.00"


def test_mock_response_header_forces_a_documented_error(api: Api) -> None:
    order = api.post("/v2/checkout/orders", order_body()).json()
    approve(api, order["id"])
    response = api.post(
        f"/v2/checkout/orders/{order['id']}/capture",
        headers={"PayPal-Mock-Response": '{"mock_application_codes": "INSTRUMENT_DECLINED"}'},
    )
    assert response.status_code == 422
    assert issues(response) == ["INSTRUMENT_DECLINED"]
    assert api.get(f"/v2/checkout/orders/{order['id']}").json()["status"] == "APPROVED"


def test_approval_redirects_to_the_return_url(api: Api) -> None:
    body = order_body() | {
        "payment_source": {
            "paypal": {
                "experience_context": {
                    "return_url": "https://shop.example.com/done",
                    "cancel_url": "https://shop.example.com/x",
                }
            }
        }
    }
    order = api.post("/v2/checkout/orders", body).json()
    assert order["status"] == "PAYER_ACTION_REQUIRED"
    assert any(link["rel"] == "payer-action" for link in order["links"])
    page = api.http.get(f"/checkoutnow?token={order['id']}")
    assert page.status_code == 200 and "Pay Now" in page.text
    response = approve(api, order["id"])
    assert response.status_code == 303
    assert response.headers["location"].startswith(
        f"https://shop.example.com/done?token={order['id']}&PayerID="
    )
