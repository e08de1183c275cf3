"""The merchant's app as a whole: one body limit before any body is read (each protocol's error
shape), credentials checked before a body is read, and JSON that no text can hold refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, Merchant, create_merchant_app
from cartagent.commerce.acp import API_VERSION
from cartagent.commerce.paypal_cart import JwksKeys, JwtVerifier
from cartagent.commerce.requests import MAX_BODY
from cartagent.commerce.ucp import KnownProfiles
from tests import asgi
from tests.asgi import megabytes
from tests.commerce.conftest import BASE_URL
from tests.commerce.test_ucp_checkout import PLATFORM, platform_profile

pytestmark = pytest.mark.anyio

ACP = "/checkout_sessions"
UCP = "/ucp/checkout-sessions"
CART = "/api/paypal/v1/merchant-cart"
# Lone surrogates are valid JSON escapes, but no UTF-8 text.
LONE_SURROGATE = b'{"currency": "usd\\ud800", "line_items": [{"id": "x\\udfff", "quantity": 1}]}'


@pytest.fixture
def merchant_app(merchant: Merchant, agents: Agents) -> FastAPI:
    # PayPal's key set is empty here: no Cart API token is valid.
    cart = JwtVerifier(JwksKeys(lambda: {"keys": []}), issuer=None, audience="MERCHANT1")
    profiles = KnownProfiles({PLATFORM: platform_profile()})
    return create_merchant_app(
        merchant, agents, base_url=BASE_URL, paypal_cart=cart, ucp_profiles=profiles
    )


@pytest.fixture
def shop(merchant_app: FastAPI) -> Iterator[TestClient]:
    with TestClient(merchant_app, base_url=BASE_URL, raise_server_exceptions=False) as client:
        yield client


def credentials(path: str, token: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": str(uuid.uuid4())}
    if path == UCP:
        return {**headers, "UCP-Agent": f'profile="{PLATFORM}"'}
    return {**headers, "API-Version": API_VERSION, "Content-Type": "application/json"}


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", [ACP, UCP])
async def test_a_body_exactly_at_the_limit_is_read_and_one_byte_more_is_413(
    merchant_app: FastAPI, agent_token: str, path: str, declare: bool
) -> None:
    headers = credentials(path, agent_token)
    half = b" " * (MAX_BODY // 2)
    at_limit = await asgi.request(
        merchant_app, "POST", path, headers=headers, chunks=[half, half], declare=declare
    )
    # Read to the end, then judged by the protocol (an empty object is not a checkout).
    assert at_limit.status == 400 and at_limit.pulled == MAX_BODY
    over = await asgi.request(
        merchant_app, "POST", path, headers=headers, chunks=[half, half, b" "], declare=declare
    )
    assert (over.status, over.json()["code"]) == (413, "request_too_large")


async def test_the_413_has_the_error_shape_of_the_protocol_of_its_path(
    merchant_app: FastAPI,
) -> None:
    too_big = [b" " * (MAX_BODY + 1)]
    acp = await asgi.request(merchant_app, "POST", ACP, chunks=too_big, declare=True)
    assert acp.json()["type"] == "invalid_request" and "262,144 bytes" in acp.json()["message"]
    ucp = await asgi.request(merchant_app, "POST", UCP, chunks=too_big, declare=True)
    assert ucp.json()["code"] == "request_too_large" and "262,144" in ucp.json()["content"]
    cart = await asgi.request(merchant_app, "POST", CART, chunks=too_big, declare=True)
    assert (cart.status, cart.json()["name"]) == (413, "INVALID_REQUEST")
    assert all(sent.pulled == 0 for sent in (acp, ucp, cart))


@pytest.mark.parametrize("path", [ACP, UCP, CART, f"{ACP}/cs_1/complete", f"{CART}/c_1"])
@pytest.mark.parametrize("token", [None, "not-an-agent-token"])
async def test_a_big_body_without_a_valid_token_gets_401_and_is_never_read(
    merchant_app: FastAPI, path: str, token: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    method = "PUT" if path.startswith(f"{CART}/") else "POST"
    sent = await asgi.request(merchant_app, method, path, headers=headers, chunks=megabytes(64))
    assert sent.status == 401
    assert sent.pulled == 0


@pytest.mark.parametrize("path", [ACP, UCP])
def test_a_lone_surrogate_in_the_json_is_400_saying_so_and_the_next_call_is_answered(
    shop: TestClient, agent_token: str, path: str
) -> None:
    headers = credentials(path, agent_token)
    refused = shop.post(path, content=LONE_SURROGATE, headers=headers)
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_json")
    answer = refused.json().get("message") or refused.json()["content"]
    assert "surrogate" in answer
    assert shop.get("/.well-known/acp.json").status_code == 200
    again = shop.post(path, content=b"{}", headers=credentials(path, agent_token))
    assert again.status_code == 400 and again.json()["code"] != "invalid_json"
