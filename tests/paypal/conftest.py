"""Fixtures: the PayPal client wired to the in-process sandbox, with no network and no sleeping.

Async clients take ``httpx.ASGITransport(app=create_app(sandbox))``. The sync client needs a
sync transport over the same ASGI app: :class:`TestClientTransport` replays each request
through the ``http`` fixture's Starlette ``TestClient`` with its public ``request()`` (the
TestClient is built on ``httpx2``, so its own transport cannot take ``httpx`` requests).
Either is wrapped in an ``httpx.MockTransport`` by :class:`Recorder`, which records every
request and lets a test inject failures before passing requests through.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient, PayPalClient, RetryPolicy
from cartagent.sandbox import Sandbox, create_app, ensure_merchant

BASE_URL = "http://sandbox.test"
SECRET = "secret"


class TestClientTransport(httpx.BaseTransport):
    """A sync ``httpx`` transport that sends each request through a Starlette ``TestClient``."""

    __test__ = False

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.client.request(
            request.method,
            str(request.url),
            headers=list(request.headers.multi_items()),
            content=request.read(),
            follow_redirects=False,
        )
        # The body arrives decoded already; drop the header that would decode it twice.
        headers = [(k, v) for k, v in response.headers.multi_items() if k != "content-encoding"]
        return httpx.Response(response.status_code, headers=headers, content=response.content)


class Recorder:
    """Records what was sent and lets a test answer some requests itself.

    ``answers`` is a list of callables consumed in order for non-token requests; each returns a
    response (or raises) to short-circuit, or ``None`` to pass the request through.
    """

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.answers: list[Callable[[httpx.Request], httpx.Response | None]] = []

    @property
    def api_requests(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path != "/v1/oauth2/token"]

    @property
    def token_requests(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path == "/v1/oauth2/token"]

    def intercept(self, request: httpx.Request) -> httpx.Response | None:
        self.requests.append(request)
        if request.url.path != "/v1/oauth2/token" and self.answers:
            return self.answers.pop(0)(request)
        return None

    def sync(self, inner: httpx.BaseTransport) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            return self.intercept(request) or inner.handle_request(request)

        return httpx.MockTransport(handler)

    def asynchronous(self, inner: httpx.AsyncBaseTransport) -> httpx.MockTransport:
        async def handler(request: httpx.Request) -> httpx.Response:
            answer = self.intercept(request)
            if answer is not None:
                return answer
            await asyncio.sleep(0)  # yield like a real network would, so callers interleave
            response = await inner.handle_async_request(request)
            await response.aread()
            return response

        return httpx.MockTransport(handler)


class Sleeps(list[float]):
    """An injected sleep that records the delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.append(seconds)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def client_id(sandbox: Sandbox, request: pytest.FixtureRequest) -> str:
    """A merchant of this test's own in the sandbox (secret ``SECRET``)."""
    client_id = "pp-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, SECRET)
    return client_id


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def paypal(
    client_id: str, http: TestClient, recorder: Recorder, sleeps: Sleeps, clock: FakeClock
) -> Iterator[PayPalClient]:
    """A sync client on the sandbox, every request seen by ``recorder``."""
    with PayPalClient(
        client_id,
        SECRET,
        base_url=BASE_URL,
        transport=recorder.sync(TestClientTransport(http)),
        sleep=sleeps,
        clock=clock,
    ) as client:
        yield client


@pytest.fixture
async def async_paypal(
    client_id: str, sandbox: Sandbox, recorder: Recorder, sleeps: Sleeps, clock: FakeClock
) -> AsyncIterator[AsyncPayPalClient]:
    """The async client on the sandbox's ASGI app, every request seen by ``recorder``."""
    async with AsyncPayPalClient(
        client_id,
        SECRET,
        base_url=BASE_URL,
        transport=recorder.asynchronous(httpx.ASGITransport(app=create_app(sandbox))),
        sleep=sleeps.asleep,
        clock=clock,
    ) as client:
        yield client


def offline_client(
    handler: Callable[[httpx.Request], httpx.Response],
    *,
    sleeps: Sleeps | None = None,
    retry: RetryPolicy | None = None,
    **kwargs: Any,
) -> PayPalClient:
    """A sync client whose every request (token included) is answered by ``handler``."""
    return PayPalClient(
        "id",
        "secret",
        transport=httpx.MockTransport(handler),
        sleep=sleeps if sleeps is not None else Sleeps(),
        retry=retry or RetryPolicy(),
        **kwargs,
    )


def token_or(
    answer: Callable[[httpx.Request], httpx.Response],
) -> Callable[[httpx.Request], httpx.Response]:
    """A handler that issues tokens and answers everything else with ``answer``."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/oauth2/token":
            return httpx.Response(200, json={"access_token": "T", "expires_in": 3600})
        return answer(request)

    return handler


def approve(http: TestClient, order_id: str) -> None:
    """The buyer approves on the sandbox's checkout page."""
    page = http.post(f"/checkoutnow?token={order_id}", data={}, follow_redirects=False)
    assert page.status_code < 400, page.text


ORDER = {
    "intent": "CAPTURE",
    "purchase_units": [{"amount": {"currency_code": "USD", "value": "30.00"}}],
}
