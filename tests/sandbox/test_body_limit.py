"""The sandbox's body limit and its credentials come before a body is read; JSON that no text
can hold (a lone surrogate) is PayPal's MALFORMED_REQUEST_JSON, and the sandbox answers on."""

from __future__ import annotations

import base64

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.sandbox import Sandbox, create_app
from cartagent.sandbox.app import MAX_BODY
from tests import asgi
from tests.asgi import megabytes
from tests.conftest import Api

pytestmark = pytest.mark.anyio
ORDERS = "/v2/checkout/orders"


@pytest.fixture
def app(sandbox: Sandbox) -> FastAPI:
    return create_app(sandbox)


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "chunked"])
async def test_a_body_exactly_at_the_limit_is_read_and_one_byte_more_is_413(
    app: FastAPI, api: Api, declare: bool
) -> None:
    headers = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    half = b" " * (MAX_BODY // 2)
    at_limit = await asgi.request(
        app, "POST", ORDERS, headers=headers, chunks=[half, half], declare=declare
    )
    # Read to its end, then judged by the operation: all whitespace is no body at all.
    assert at_limit.status == 400 and at_limit.pulled == MAX_BODY
    assert at_limit.json()["details"][0]["issue"] == "MISSING_REQUIRED_PARAMETER"
    over = await asgi.request(
        app, "POST", ORDERS, headers=headers, chunks=[half, half, b" "], declare=declare
    )
    assert over.status == 413
    assert over.json()["name"] == "REQUEST_ENTITY_TOO_LARGE"
    assert over.json()["message"] == "The request body is larger than 10,485,760 bytes."
    assert over.headers["paypal-debug-id"] == over.json()["debug_id"]


@pytest.mark.parametrize(
    ("path", "authorization"),
    [
        (ORDERS, None),
        (ORDERS, "Bearer A21AAforged"),
        ("/v1/sandbox/disputes", None),
        ("/v1/sandbox/agentic-commerce/token", "Bearer A21AAforged"),
        ("/v1/oauth2/token", None),
        ("/v1/oauth2/token", "wrong secret"),
        ("/v1/sandbox/oauth2/token", "wrong secret"),
    ],
)
async def test_a_big_body_without_valid_credentials_gets_401_and_is_never_read(
    app: FastAPI, api: Api, path: str, authorization: str | None
) -> None:
    if authorization == "wrong secret":
        authorization = basic(api.client_id, "not-the-secret")
    headers = {"Authorization": authorization} if authorization else {}
    sent = await asgi.request(app, "POST", path, headers=headers, chunks=megabytes(64))
    assert sent.status == 401
    assert sent.pulled == 0


def test_a_lone_surrogate_in_the_json_is_malformed_and_the_next_request_is_answered(
    api: Api,
) -> None:
    # Valid JSON, but "\ud800" decodes to a lone surrogate, which no UTF-8 text holds.
    body = b'{"intent": "CAPTURE", "purchase_units": [{"description": "a \\ud800 b"}]}'
    refused = api.post(ORDERS, content=body, headers={"Content-Type": "application/json"})
    assert refused.status_code == 400
    assert refused.json()["details"][0]["issue"] == "MALFORMED_REQUEST_JSON"
    order = {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": "10.00"}}],
    }
    assert api.post(ORDERS, order).status_code == 201


def test_the_413_closes_the_connection(http: TestClient) -> None:
    response = http.post(ORDERS, content=b" " * (MAX_BODY + 1))
    assert response.status_code == 413
    assert response.headers["connection"] == "close"
