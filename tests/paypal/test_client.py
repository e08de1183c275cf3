"""The clients against the in-process sandbox: real flows, sync and async."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.errors import PayPalClientError
from cartagent.paypal import AsyncPayPalClient, Environment, PayPalClient
from tests.paypal.conftest import ORDER, Recorder, approve, offline_client, token_or

INVOICE = {
    "detail": {"currency_code": "USD", "memo": "Blue house"},
    "primary_recipients": [{"billing_info": {"email_address": "bill-me@example.com"}}],
    "items": [
        {
            "name": "Painting",
            "quantity": "1",
            "unit_amount": {"currency_code": "USD", "value": "450.00"},
        }
    ],
}


def test_an_order_is_created_approved_captured_and_refunded(
    paypal: PayPalClient, http: TestClient
) -> None:
    order = paypal.post("/v2/checkout/orders", ORDER)
    assert order["status"] == "CREATED"
    approve(http, order["id"])
    captured = paypal.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert captured["status"] == "COMPLETED"
    capture = captured["purchase_units"][0]["payments"]["captures"][0]
    refund = paypal.post(
        f"/v2/payments/captures/{capture['id']}/refund",
        {"amount": {"currency_code": "USD", "value": "10.00"}},
    )
    assert refund["status"] == "COMPLETED"
    assert paypal.get(f"/v2/payments/refunds/{refund['id']}")["amount"]["value"] == "10.00"


@pytest.mark.anyio
async def test_the_async_client_runs_the_same_order_flow(
    async_paypal: AsyncPayPalClient, http: TestClient
) -> None:
    order = await async_paypal.post("/v2/checkout/orders", ORDER)
    approve(http, order["id"])
    captured = await async_paypal.post(f"/v2/checkout/orders/{order['id']}/capture")
    capture = captured["purchase_units"][0]["payments"]["captures"][0]
    refund = await async_paypal.post(f"/v2/payments/captures/{capture['id']}/refund")
    assert refund["status"] == "COMPLETED"
    fetched = await async_paypal.get(f"/v2/checkout/orders/{order['id']}")
    assert fetched["status"] == "COMPLETED"


def test_an_invoice_is_created_and_listed_with_query_params(paypal: PayPalClient) -> None:
    invoice = paypal.post("/v2/invoicing/invoices", INVOICE)
    assert invoice["status"] == "DRAFT"
    listed = paypal.get("/v2/invoicing/invoices", params={"total_required": True})
    assert [item["id"] for item in listed["items"]] == [invoice["id"]]
    assert listed["total_items"] == 1


@pytest.mark.anyio
async def test_the_async_client_creates_and_deletes_an_invoice(
    async_paypal: AsyncPayPalClient,
) -> None:
    invoice = await async_paypal.post("/v2/invoicing/invoices", INVOICE)
    assert await async_paypal.delete(f"/v2/invoicing/invoices/{invoice['id']}") is None
    listed = await async_paypal.get("/v2/invoicing/invoices")
    assert listed["items"] == []


def test_a_204_answer_returns_none(paypal: PayPalClient) -> None:
    order = paypal.post("/v2/checkout/orders", ORDER)
    patch = [
        {
            "op": "add",
            "path": "/purchase_units/@reference_id=='default'/description",
            "value": "Mugs",
        }
    ]
    assert paypal.patch(f"/v2/checkout/orders/{order['id']}", patch) is None
    assert paypal.get(f"/v2/checkout/orders/{order['id']}")["purchase_units"][0]["description"] == (
        "Mugs"
    )


def test_request_raw_returns_a_non_json_body(paypal: PayPalClient) -> None:
    invoice = paypal.post("/v2/invoicing/invoices", INVOICE)
    response = paypal.request_raw(
        "POST", f"/v2/invoicing/invoices/{invoice['id']}/generate-qr-code", json={}
    )
    assert response.headers["content-type"] == "image/png"
    assert response.content.startswith(b"\x89PNG")


def test_the_default_environment_is_paypals_sandbox_host() -> None:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={})

    with offline_client(token_or(answer)) as client:
        client.get("/v1/notifications/webhooks")
    assert str(seen[0]) == "https://api-m.sandbox.paypal.com/v1/notifications/webhooks"


def test_live_and_custom_base_urls_are_used_as_given() -> None:
    urls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append(str(request.url))
        return token_or(lambda r: httpx.Response(200, json={}))(request)

    assert Environment.LIVE == "https://api-m.paypal.com"
    with offline_client(handler, base_url=Environment.LIVE) as live:
        live.get("v2/checkout/orders/X")
    with offline_client(handler, base_url="http://localhost:8000/") as local:
        local.get("/v2/checkout/orders/Y")
    assert urls == [
        "https://api-m.paypal.com/v1/oauth2/token",
        "https://api-m.paypal.com/v2/checkout/orders/X",
        "http://localhost:8000/v1/oauth2/token",
        "http://localhost:8000/v2/checkout/orders/Y",
    ]


def test_closing_the_client_closes_its_connections() -> None:
    with offline_client(token_or(lambda r: httpx.Response(200))) as client:
        pass
    with pytest.raises(RuntimeError):
        client.get("/v1/anything")


def test_each_request_logs_one_debug_line_without_bodies(
    paypal: PayPalClient, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="cartagent.paypal")
    secret_unit = {"amount": {"currency_code": "USD", "value": "30.00"}, "description": "4111"}
    order = paypal.post("/v2/checkout/orders", ORDER | {"purchase_units": [secret_unit]})
    lines = [r.getMessage() for r in caplog.records if r.name == "cartagent.paypal"]
    assert len(lines) == len(recorder.requests) == 2
    assert lines[1].startswith("POST /v2/checkout/orders -> 201")
    text = "\n".join(lines)
    assert "4111" not in text and "30.00" not in text and order["id"] not in text
    assert "access_token" not in text


def test_order_helpers_create_get_and_capture(paypal: PayPalClient, http: TestClient) -> None:
    order = paypal.create_order(ORDER)
    approve(http, order["id"])
    assert paypal.get_order(order["id"])["status"] == "APPROVED"
    assert paypal.capture_order(order["id"], idempotency_key="c-1")["status"] == "COMPLETED"
    with pytest.raises(PayPalClientError) as raised:
        paypal.get_order("../../v2/invoicing/invoices")
    assert raised.value.http_status == 404


@pytest.mark.anyio
async def test_async_order_helpers_create_get_and_capture(
    async_paypal: AsyncPayPalClient, http: TestClient
) -> None:
    order = await async_paypal.create_order(ORDER)
    approve(http, order["id"])
    assert (await async_paypal.get_order(order["id"]))["status"] == "APPROVED"
    assert (await async_paypal.capture_order(order["id"]))["status"] == "COMPLETED"
