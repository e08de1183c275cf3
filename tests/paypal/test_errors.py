"""Error answers become typed exceptions carrying PayPal's fields."""

from __future__ import annotations

import httpx
import pytest

from cartagent.errors import PayPalAuthError, PayPalClientError, PayPalServerError
from cartagent.paypal import AsyncPayPalClient, PayPalClient
from tests.paypal.conftest import ORDER, Recorder, offline_client, token_or


def test_capturing_an_unapproved_order_raises_a_client_error_with_paypals_fields(
    paypal: PayPalClient, recorder: Recorder
) -> None:
    order = paypal.post("/v2/checkout/orders", ORDER)
    with pytest.raises(PayPalClientError) as raised:
        paypal.post(f"/v2/checkout/orders/{order['id']}/capture", idempotency_key="cap-1")
    error = raised.value
    assert error.http_status == 422
    assert error.name == "UNPROCESSABLE_ENTITY"
    assert error.issues == ["ORDER_NOT_APPROVED"]
    assert error.debug_id and error.debug_id in str(error)
    assert error.request_id == "cap-1" == recorder.api_requests[-1].headers["paypal-request-id"]
    assert isinstance(error.body, dict) and error.body["debug_id"] == error.debug_id


@pytest.mark.anyio
async def test_the_async_client_raises_the_same_typed_error(
    async_paypal: AsyncPayPalClient,
) -> None:
    order = await async_paypal.post("/v2/checkout/orders", ORDER)
    with pytest.raises(PayPalClientError) as raised:
        await async_paypal.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert raised.value.issues == ["ORDER_NOT_APPROVED"]
    assert raised.value.request_id is not None


def test_an_invalid_body_carries_the_offending_field(paypal: PayPalClient) -> None:
    with pytest.raises(PayPalClientError) as raised:
        paypal.post("/v2/checkout/orders", {"intent": "CAPTURE"})
    assert raised.value.http_status == 400
    assert raised.value.name == "INVALID_REQUEST"
    assert raised.value.details[0].field is not None


def test_an_unknown_resource_is_a_404_client_error_without_a_request_id(
    paypal: PayPalClient,
) -> None:
    with pytest.raises(PayPalClientError) as raised:
        paypal.get("/v2/checkout/orders/NOPE0000000000000")
    assert raised.value.http_status == 404
    assert raised.value.name == "RESOURCE_NOT_FOUND"
    assert raised.value.request_id is None


def test_a_403_is_an_auth_error() -> None:
    def forbidden(request: httpx.Request) -> httpx.Response:
        body = {"name": "NOT_AUTHORIZED", "message": "No permission.", "debug_id": "d-403"}
        return httpx.Response(403, json=body)

    client = offline_client(token_or(forbidden))
    with client, pytest.raises(PayPalAuthError) as raised:
        client.get("/v1/reporting/transactions")
    assert (raised.value.http_status, raised.value.name) == (403, "NOT_AUTHORIZED")
    assert raised.value.debug_id == "d-403"


def test_a_non_json_error_body_still_gives_a_useful_exception() -> None:
    def gateway(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            502,
            content=b"<html>Bad Gateway</html>",
            headers={"content-type": "text/html", "PayPal-Debug-Id": "hdr-1"},
        )

    client = offline_client(token_or(gateway))
    with client, pytest.raises(PayPalServerError) as raised:
        client.post("/v2/checkout/orders", ORDER)
    error = raised.value
    assert error.http_status == 502
    assert error.name == "Bad Gateway"
    assert "502" in error.message and "text/html" in error.message
    assert error.debug_id == "hdr-1"
    assert error.body == "<html>Bad Gateway</html>"
    assert error.request_id is not None


def test_a_token_endpoint_outage_is_a_server_error_not_an_auth_error() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"name": "INTERNAL_SERVER_ERROR", "message": "oops"})

    client = offline_client(down)
    with client, pytest.raises(PayPalServerError) as raised:
        client.get("/v1/anything")
    assert raised.value.name == "INTERNAL_SERVER_ERROR"
