"""PayPal-Request-Id on writes, retries with backoff, Retry-After, and what is never retried."""

from __future__ import annotations

import httpx
import pytest

from cartagent.errors import PayPalClientError, PayPalServerError
from cartagent.paypal import AsyncPayPalClient, PayPalClient, RetryPolicy
from tests.paypal.conftest import ORDER, Recorder, Sleeps, offline_client, token_or


def unavailable(request: httpx.Request) -> httpx.Response:
    return httpx.Response(503, json={"name": "SERVICE_UNAVAILABLE", "message": "busy"})


def request_ids(recorder: Recorder) -> list[str | None]:
    return [r.headers.get("paypal-request-id") for r in recorder.api_requests]


def test_a_retried_write_reuses_its_paypal_request_id(
    paypal: PayPalClient, recorder: Recorder, sleeps: Sleeps
) -> None:
    recorder.answers.extend([unavailable, unavailable])
    order = paypal.post("/v2/checkout/orders", ORDER)
    assert order["status"] == "CREATED"
    ids = request_ids(recorder)
    assert len(ids) == 3 and ids[0] is not None and len(set(ids)) == 1
    assert len(sleeps) == 2


@pytest.mark.anyio
async def test_the_async_client_reuses_the_key_across_retries(
    async_paypal: AsyncPayPalClient, recorder: Recorder, sleeps: Sleeps
) -> None:
    recorder.answers.extend([unavailable, unavailable])
    await async_paypal.post("/v2/checkout/orders", ORDER, idempotency_key="order-42")
    assert request_ids(recorder) == ["order-42"] * 3
    assert len(sleeps) == 2


def test_every_write_gets_a_fresh_key_and_gets_carry_none(
    paypal: PayPalClient, recorder: Recorder
) -> None:
    first = paypal.post("/v2/checkout/orders", ORDER)
    paypal.post("/v2/checkout/orders", ORDER)
    paypal.get(f"/v2/checkout/orders/{first['id']}")
    ids = request_ids(recorder)
    assert ids[0] and ids[1] and ids[0] != ids[1]
    assert ids[2] is None


def test_a_replayed_idempotency_key_does_not_create_a_second_order(
    paypal: PayPalClient,
) -> None:
    first = paypal.post("/v2/checkout/orders", ORDER, idempotency_key="same-key")
    second = paypal.post("/v2/checkout/orders", ORDER, idempotency_key="same-key")
    assert first["id"] == second["id"]


def test_a_422_is_not_retried(paypal: PayPalClient, recorder: Recorder, sleeps: Sleeps) -> None:
    order = paypal.post("/v2/checkout/orders", ORDER)
    with pytest.raises(PayPalClientError):
        paypal.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert len(recorder.api_requests) == 2
    assert sleeps == []


def test_retry_after_is_honoured(paypal: PayPalClient, recorder: Recorder, sleeps: Sleeps) -> None:
    recorder.answers.append(lambda r: httpx.Response(429, headers={"Retry-After": "2"}))
    paypal.get("/v2/invoicing/invoices")
    assert sleeps == [2.0]
    assert len(recorder.api_requests) == 2


def test_a_retry_after_beyond_the_policy_limit_is_raised_not_waited() -> None:
    sleeps = Sleeps()

    def too_many(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "3600"}, json={"name": "RATE_LIMIT"})

    client = offline_client(token_or(too_many), sleeps=sleeps)
    with client, pytest.raises(PayPalClientError) as raised:
        client.get("/v1/anything")
    assert raised.value.http_status == 429
    assert sleeps == []


def test_backoff_grows_exponentially_with_jitter_up_to_the_cap() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=5, base_delay=1.0, max_delay=3.0)
    client = offline_client(token_or(unavailable), sleeps=sleeps, retry=policy)
    with client, pytest.raises(PayPalServerError) as raised:
        client.get("/v1/anything")
    assert raised.value.http_status == 503
    ceilings = [1.0, 2.0, 3.0, 3.0]
    assert len(sleeps) == 4
    assert all(c / 2 <= s <= c for s, c in zip(sleeps, ceilings, strict=True))


def test_transport_errors_are_retried_then_raised_as_server_errors() -> None:
    sleeps = Sleeps()
    attempts: list[str | None] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        attempts.append(request.headers.get("paypal-request-id"))
        raise httpx.ConnectError("connection refused", request=request)

    client = offline_client(token_or(refuse), sleeps=sleeps)
    with client, pytest.raises(PayPalServerError) as raised:
        client.post("/v2/checkout/orders/X/capture", idempotency_key="k1")
    assert attempts == ["k1"] * 3
    assert len(sleeps) == 2
    assert raised.value.name == "TRANSPORT_ERROR"
    assert raised.value.request_id == "k1"
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


def test_a_timeout_then_success_returns_the_answer(
    paypal: PayPalClient, recorder: Recorder
) -> None:
    def time_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    recorder.answers.append(time_out)
    assert paypal.get("/v2/invoicing/invoices")["items"] == []
    assert len(recorder.api_requests) == 2


def test_a_single_attempt_policy_never_retries() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=1)
    client = offline_client(token_or(unavailable), sleeps=sleeps, retry=policy)
    with client, pytest.raises(PayPalServerError):
        client.get("/v1/anything")
    assert sleeps == []
