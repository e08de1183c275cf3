"""OAuth2: one cached token, refreshed before expiry and once on a 401."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.errors import PayPalAuthError
from cartagent.paypal import AsyncPayPalClient, Credentials, PayPalClient
from tests.paypal.conftest import (
    BASE_URL,
    ORDER,
    FakeClock,
    Recorder,
    TestClientTransport,
    offline_client,
    token_or,
)


def test_many_calls_share_one_token_request(paypal: PayPalClient, recorder: Recorder) -> None:
    order = paypal.post("/v2/checkout/orders", ORDER)
    for _ in range(3):
        paypal.get(f"/v2/checkout/orders/{order['id']}")
    assert len(recorder.token_requests) == 1
    assert len(recorder.api_requests) == 4


def test_the_token_request_is_basic_auth_client_credentials(
    paypal: PayPalClient, recorder: Recorder, client_id: str
) -> None:
    paypal.get("/v2/invoicing/invoices")
    (token,) = recorder.token_requests
    assert token.method == "POST"
    expected = base64.b64encode(f"{client_id}:secret".encode()).decode()
    assert token.headers["authorization"] == f"Basic {expected}"
    assert token.content == b"grant_type=client_credentials"
    assert recorder.api_requests[0].headers["authorization"].startswith("Bearer A21AA")


def test_the_token_is_refreshed_shortly_before_it_expires(
    paypal: PayPalClient, recorder: Recorder, clock: FakeClock
) -> None:
    paypal.get("/v2/invoicing/invoices")
    clock.now += 32400 - 61  # the sandbox's tokens live 32400 s; refresh 60 s early
    paypal.get("/v2/invoicing/invoices")
    assert len(recorder.token_requests) == 1
    clock.now += 2
    paypal.get("/v2/invoicing/invoices")
    assert len(recorder.token_requests) == 2


def test_a_401_refreshes_the_token_and_retries_the_call_once(
    paypal: PayPalClient, recorder: Recorder
) -> None:
    paypal.get("/v2/invoicing/invoices")
    recorder.answers.append(lambda r: httpx.Response(401, json={"name": "AUTHENTICATION_FAILURE"}))
    assert paypal.get("/v2/invoicing/invoices")["items"] == []
    assert len(recorder.token_requests) == 2
    assert len(recorder.api_requests) == 3


def test_a_second_401_is_raised_as_an_auth_error() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if request.url.path == "/v1/oauth2/token":
            return httpx.Response(200, json={"access_token": "T", "expires_in": 3600})
        return httpx.Response(401, json={"name": "AUTHENTICATION_FAILURE", "message": "no"})

    with offline_client(handler) as client, pytest.raises(PayPalAuthError) as raised:
        client.get("/v1/reporting/transactions")
    assert raised.value.http_status == 401
    assert raised.value.name == "AUTHENTICATION_FAILURE"
    assert calls == ["/v1/oauth2/token", "/v1/reporting/transactions"] * 2


def test_wrong_credentials_raise_an_auth_error_with_the_oauth_fields(
    client_id: str, http: TestClient, recorder: Recorder
) -> None:
    transport = recorder.sync(TestClientTransport(http))
    client = PayPalClient(client_id, "wrong", base_url=BASE_URL, transport=transport)
    with client, pytest.raises(PayPalAuthError) as raised:
        client.get("/v2/invoicing/invoices")
    assert raised.value.http_status == 401
    assert raised.value.name == "invalid_client"
    assert raised.value.message == "Client Authentication failed"
    assert recorder.api_requests == []


def test_a_token_answer_without_access_token_is_an_auth_error() -> None:
    handler = token_or(lambda r: httpx.Response(200))

    def broken(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/oauth2/token":
            return httpx.Response(200, json={"token_type": "Bearer"})
        return handler(request)

    with offline_client(broken) as client, pytest.raises(PayPalAuthError):
        client.get("/v1/anything")


@pytest.mark.anyio
async def test_concurrent_async_callers_share_one_token_refresh(
    async_paypal: AsyncPayPalClient, recorder: Recorder
) -> None:
    results = await asyncio.gather(*(async_paypal.get("/v2/invoicing/invoices") for _ in range(8)))
    assert all(result["items"] == [] for result in results)
    assert len(recorder.token_requests) == 1


@pytest.mark.anyio
async def test_concurrent_async_401s_trigger_a_single_refresh(
    async_paypal: AsyncPayPalClient, recorder: Recorder
) -> None:
    await async_paypal.get("/v2/invoicing/invoices")

    def reject_until_refreshed(request: httpx.Request) -> httpx.Response | None:
        # The sandbox may reissue an identical token within a second, so go by refresh count.
        return httpx.Response(401, json={}) if len(recorder.token_requests) == 1 else None

    recorder.answers.extend([reject_until_refreshed] * 8)
    results = await asyncio.gather(*(async_paypal.get("/v2/invoicing/invoices") for _ in range(4)))
    assert [r["items"] for r in results] == [[]] * 4
    assert len(recorder.token_requests) == 2


def test_credentials_keep_the_secret_out_of_repr() -> None:
    credentials = Credentials("my-id", "top-secret")
    assert "top-secret" not in repr(credentials)
    assert (
        credentials.basic_authorization()
        == "Basic " + base64.b64encode(b"my-id:top-secret").decode()
    )
