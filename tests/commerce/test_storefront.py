"""The merchant's buyer pages: a UCP session's ``continue_url`` opens a page a buyer can use
(the cart, what is missing, a PayPal button), PayPal's approval comes back and is captured
once, and the order's ``permalink_url`` shows the order; what a platform or a buyer put in
the session is escaped."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.server import create_merchant_app
from cartagent.commerce.ucp import KnownProfiles
from tests.commerce.conftest import ADDRESS, BASE_URL, in_stock
from tests.commerce.test_ucp_checkout import PLATFORM, SHIPPING, UcpClient, lines, platform_profile


@pytest.fixture
def shop(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    profiles = KnownProfiles({PLATFORM: platform_profile()})
    app = create_merchant_app(merchant, agents, base_url=BASE_URL, ucp_profiles=profiles)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as client:
        yield client


def path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_a_buyer_follows_continue_url_pays_on_paypal_and_sees_the_order(
    shop: TestClient, agent_token: str, http: TestClient
) -> None:
    platform = UcpClient(shop, agent_token)
    buyer = {"first_name": "Ada", "email": "ada@example.com"}
    created = platform.post(
        "/ucp/checkout-sessions", {"line_items": lines(in_stock()[0]), "buyer": buyer}
    )
    session = created.json()
    page = shop.get(path(session["continue_url"]))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "a shipping address is needed" in page.text and "Pay " not in page.text
    # The destination arrives; the name the platform sent is shown escaped, never run.
    [line] = session["line_items"]
    [destination] = SHIPPING["methods"][0]["destinations"]
    method = {
        "id": "shipping",
        "type": "shipping",
        "line_item_ids": [line["id"]],
        "destinations": [{**destination, "first_name": "<script>alert(1)</script>"}],
    }
    update = {
        "line_items": [{**lines(in_stock()[0])[0], "id": line["id"]}],
        "fulfillment": {"methods": [method]},
        "buyer": buyer,
    }
    updated = platform.put(f"/ucp/checkout-sessions/{session['id']}", update)
    assert updated.status_code == 200, updated.text
    page = shop.get(path(session["continue_url"]))
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "with PayPal</button>" in page.text
    paying = shop.post(path(session["continue_url"]) + "/pay", follow_redirects=False)
    assert paying.status_code == 303
    approval = paying.headers["location"]
    assert "/checkoutnow?token=" in approval
    # The buyer approves on PayPal (the sandbox's page), which sends them back.
    approved = http.post(path(approval), data={}, follow_redirects=False)
    assert approved.status_code == 303
    back = approved.headers["location"]
    assert back.startswith(f"{BASE_URL}/shop/checkout-sessions/{session['id']}/paid?token=")
    done = shop.get(path(back), follow_redirects=False)
    assert done.status_code == 303, done.text
    order_page = shop.get(path(done.headers["location"]))
    assert order_page.status_code == 200 and "paid" in order_page.text
    state = platform.get(f"/ucp/checkout-sessions/{session['id']}").json()
    assert state["status"] == "completed"
    assert state["order"]["permalink_url"] == done.headers["location"]
    # Coming back twice does not pay twice: the completed checkout is answered as it is.
    again = shop.get(path(back), follow_redirects=False)
    assert again.status_code == 303


def test_unknown_pages_are_404(shop: TestClient) -> None:
    assert shop.get("/shop/checkout-sessions/cs_nothing").status_code == 404
    assert shop.get("/shop/orders/ord_nothing").status_code == 404
    assert shop.post("/shop/checkout-sessions/cs_nothing/pay").status_code == 404
    assert shop.get("/shop/checkout-sessions/" + "x" * 300).status_code == 404


def test_an_acp_checkout_paid_on_its_page_shows_its_order(
    shop: TestClient, agent_token: str, http: TestClient
) -> None:
    headers = {
        "Authorization": f"Bearer {agent_token}",
        "API-Version": "2026-04-17",
        "Idempotency-Key": "acp-storefront-1",
    }
    body = {
        "line_items": [{"id": in_stock()[0], "quantity": 1}],
        "currency": "usd",
        "capabilities": {},
        "fulfillment_details": {"name": "Ada Lovelace", "address": ADDRESS},
    }
    created = shop.post("/checkout_sessions", json=body, headers=headers)
    assert created.status_code == 201, created.text
    page = f"/shop/checkout-sessions/{created.json()['id']}"
    paying = shop.post(page + "/pay", follow_redirects=False)
    approved = http.post(path(paying.headers["location"]), data={}, follow_redirects=False)
    done = shop.get(path(approved.headers["location"]), follow_redirects=False)
    assert done.status_code == 303, done.text
    assert shop.get(path(done.headers["location"])).status_code == 200
