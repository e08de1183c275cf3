"""Fixtures: the merchant (ACP) in-process, paying through the in-process PayPal sandbox.

The merchant's records live in the sandbox's test database (SQLite and PostgreSQL), each test
with agents of its own, so tests are isolated the way agents are.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from functools import cache
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.catalog.product import Product
from cartagent.catalog.tau import tau_catalog
from cartagent.commerce import (
    AgentKey,
    Agents,
    CheckoutRecords,
    Merchant,
    MerchantCatalog,
    PayPalPayments,
    create_merchant_app,
)
from cartagent.commerce.acp import API_VERSION
from cartagent.database import create_engine
from cartagent.paypal import PayPalClient, RetryPolicy
from cartagent.sandbox import Sandbox, ensure_merchant
from tests.conftest import TAU
from tests.paypal.conftest import TestClientTransport

BASE_URL = "http://merchant.test"


@cache
def tau_products() -> tuple[Product, ...]:
    return tuple(tau_catalog(TAU))


class PayPalFaults(httpx.BaseTransport):
    """Passes requests to the sandbox; a test can make the next captures decline or fail, or
    answer the next order creates with the PayPal errors in ``refused_creates``."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.declines = 0
        self.outages = 0
        self.refused_creates: list[tuple[int, dict[str, Any]]] = []
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        if request.url.path == "/v2/checkout/orders" and self.refused_creates:
            status, error = self.refused_creates.pop(0)
            return httpx.Response(status, json=error)
        if request.url.path.endswith("/capture"):
            if self.outages:
                self.outages -= 1
                raise httpx.ConnectError("PayPal is unreachable", request=request)
            if self.declines:
                self.declines -= 1
                request.headers["PayPal-Mock-Response"] = (
                    '{"mock_application_codes": "INSTRUMENT_DECLINED"}'
                )
        return self.inner.handle_request(request)


def paypal_error(issue: str, field: str, value: str = "BA-UNKNOWN") -> dict[str, Any]:
    """PayPal's error envelope for one ``issue`` at ``field``, as api-m.paypal.com words it."""
    detail = {"field": field, "value": value, "location": "body", "issue": issue}
    return {"name": "INVALID_REQUEST", "message": "invalid", "debug_id": "d1", "details": [detail]}


class AcpClient:
    """An agent calling the merchant: bearer token, ``API-Version`` and a fresh
    ``Idempotency-Key`` on each POST unless the test gives one."""

    def __init__(self, http: TestClient, token: str) -> None:
        self.http = http
        self.token = token

    def headers(self, extra: dict[str, str] | None = None, *, post: bool) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}", "API-Version": API_VERSION}
        if post:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        return {**headers, **(extra or {})}

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.http.post(path, json=body, headers=self.headers(headers, post=True))

    def get(self, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.http.get(path, headers=self.headers(headers, post=False))


@pytest.fixture
def paypal_faults(sandbox: Sandbox, http: TestClient) -> PayPalFaults:
    return PayPalFaults(TestClientTransport(http))


@pytest.fixture
def merchant_paypal(
    sandbox: Sandbox, paypal_faults: PayPalFaults, request: pytest.FixtureRequest
) -> Iterator[PayPalClient]:
    """The merchant's PayPal account on the sandbox (one per test); no retries or sleeps."""
    client_id = "shop-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    with PayPalClient(
        client_id,
        "secret",
        base_url="http://sandbox.test",
        transport=paypal_faults,
        retry=RetryPolicy(max_attempts=1),
        sleep=lambda _: None,
    ) as client:
        yield client


@pytest.fixture
def agent_token(request: pytest.FixtureRequest) -> str:
    return "tok-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()


@pytest.fixture
def agents(agent_token: str) -> Agents:
    return Agents(
        [
            AgentKey("agent-a-" + agent_token[-8:], agent_token),
            AgentKey("agent-b-" + agent_token[-8:], agent_token + "-b"),
            AgentKey("signer-" + agent_token[-8:], agent_token + "-s", signing_secret="s3cret"),
        ]
    )


@pytest.fixture
def records(database_url: str) -> Iterator[CheckoutRecords]:
    engine = create_engine(database_url)
    yield CheckoutRecords(engine)
    engine.dispose()  # each test's pool closes: PostgreSQL allows only so many clients


@pytest.fixture
def merchant(records: CheckoutRecords, merchant_paypal: PayPalClient) -> Merchant:
    return Merchant(MerchantCatalog(tau_products()), records, PayPalPayments(merchant_paypal))


@pytest.fixture
def merchant_http(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    app = create_merchant_app(merchant, agents, base_url=BASE_URL)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def acp(merchant_http: TestClient, agent_token: str) -> AcpClient:
    return AcpClient(merchant_http, agent_token)


@pytest.fixture
def other_acp(merchant_http: TestClient, agent_token: str) -> AcpClient:
    return AcpClient(merchant_http, agent_token + "-b")


def in_stock(count: int = 1) -> list[str]:
    """Ids of ``count`` available tau variants from different products."""
    found: list[str] = []
    for product in tau_products():
        variant = next((v for v in product.variants if v.available), None)
        if variant is not None:
            found.append(variant.id)
        if len(found) == count:
            return found
    raise AssertionError("not enough available variants")


def out_of_stock() -> str:
    for product in tau_products():
        for variant in product.variants:
            if not variant.available:
                return variant.id
    raise AssertionError("no unavailable variant in the tau store")


ADDRESS = {
    "name": "Ada Lovelace",
    "line_one": "1 Analytical Way",
    "city": "San Francisco",
    "state": "CA",
    "country": "US",
    "postal_code": "94102",
}
