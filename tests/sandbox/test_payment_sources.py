"""What an Orders v2 order may be paid with in the sandbox, on SQLite and PostgreSQL: billing
agreement tokens and test cards charge, a declining test card declines the charge, and a token
the sandbox never issued is refused, never charged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Api, issues

DECLINING = "4000000000000002"


def token_order(token: str, value: str = "30.00") -> dict[str, Any]:
    return {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": value}}],
        "payment_source": {"token": {"id": token, "type": "BILLING_AGREEMENT"}},
    }


def card_order(number: str) -> dict[str, Any]:
    card = {"number": number, "expiry": "2030-11", "name": "Ada Lovelace"}
    return {**token_order("unused"), "payment_source": {"card": card}}


@pytest.mark.parametrize(
    "token", ["BA-8A802366G0648845Y", "B-5YM22345678901234", "4242424242424242"]
)
def test_billing_agreement_tokens_and_test_cards_charge(api: Api, token: str) -> None:
    created = api.post("/v2/checkout/orders", token_order(token))
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "APPROVED"
    captured = api.post(f"/v2/checkout/orders/{created.json()['id']}/capture")
    assert captured.status_code == 201 and captured.json()["status"] == "COMPLETED"


@pytest.mark.parametrize(
    "order", [token_order(DECLINING), card_order(DECLINING)], ids=["token", "card"]
)
def test_a_declining_test_card_declines_the_charge_and_captures_nothing(
    api: Api, order: dict[str, Any]
) -> None:
    created = api.post("/v2/checkout/orders", order)
    assert created.status_code == 201, created.text
    order_id = created.json()["id"]
    declined = api.post(f"/v2/checkout/orders/{order_id}/capture")
    assert declined.status_code == 422
    assert issues(declined) == ["INSTRUMENT_DECLINED"]
    shown = api.get(f"/v2/checkout/orders/{order_id}").json()
    assert shown["status"] == "APPROVED" and "payments" not in shown["purchase_units"][0]
    authorizing = {**order, "intent": "AUTHORIZE"}
    pending = api.post("/v2/checkout/orders", authorizing).json()
    refused = api.post(f"/v2/checkout/orders/{pending['id']}/authorize")
    # orders.authorize documents no INSTRUMENT_DECLINED: its fallback is TRANSACTION_REFUSED
    assert (refused.status_code, issues(refused)) == (422, ["TRANSACTION_REFUSED"])


@pytest.mark.parametrize("token", ["garbage", "tok_123", "4242424242424241", "BA", "BAD-1"])
def test_a_token_the_sandbox_never_issued_is_refused_and_no_order_made(
    api: Api, token: str
) -> None:
    refused = api.post("/v2/checkout/orders", token_order(token))
    assert refused.status_code == 422
    assert issues(refused) == ["BILLING_AGREEMENT_NOT_FOUND"]
    assert refused.json()["details"][0]["field"] == "/payment_source/token/id"


def test_the_mock_response_header_still_decides_a_token_charge(api: Api) -> None:
    created = api.post("/v2/checkout/orders", token_order("BA-8A802366G0648845Y")).json()
    mock = {"PayPal-Mock-Response": '{"mock_application_codes": "INSTRUMENT_DECLINED"}'}
    declined = api.post(f"/v2/checkout/orders/{created['id']}/capture", headers=mock)
    assert (declined.status_code, issues(declined)) == (422, ["INSTRUMENT_DECLINED"])
    assert api.post(f"/v2/checkout/orders/{created['id']}/capture").status_code == 201
