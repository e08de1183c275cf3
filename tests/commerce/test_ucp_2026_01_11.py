"""UCP v2026-01-11 platforms, answered in their release by the business built on v2026-04-08:
the release's profile, its request and answer shapes (checked against its own schemas), its
refusals, and the policies a business sets (which profile is the root, open access, the
intersection)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Address, Agents, Merchant
from cartagent.commerce.ucp import KnownProfiles, UcpPolicy
from cartagent.errors import CheckoutError
from cartagent.protocols.ucp.profile import BUYER_CONSENT, CHECKOUT, DISCOUNT, FULFILLMENT, ORDER
from cartagent.protocols.ucp.schema import BASE, validator
from cartagent.shopping.ucp import UcpClient as Shop
from tests.commerce.conftest import ADDRESS, in_stock, out_of_stock
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PLATFORM,
    UcpClient,
    platform_profile,
    serve,
)
from tests.paypal.conftest import TestClientTransport

V0111 = "2026-01-11"
OLD = "https://old-platform.test/profile.json"
ONLY_ORDERS = "https://orders-only.test/profile.json"
HOOK = "https://old-platform.test/hooks/orders"


def old_profile(capabilities: Sequence[str] = (CHECKOUT, FULFILLMENT, ORDER)) -> dict[str, Any]:
    """A v2026-01-11 platform profile: capabilities as a list, no services."""
    entries: list[dict[str, Any]] = []
    for name in capabilities:
        short = name.rsplit(".", 1)[-1]
        entry: dict[str, Any] = {
            "name": name,
            "version": V0111,
            "spec": f"https://ucp.dev/specification/{short}",
            "schema": f"https://ucp.dev/schemas/shopping/{short}.json",
        }
        if name == ORDER:
            entry["config"] = {"webhook_url": HOOK}
        entries.append(entry)
    return {"ucp": {"version": V0111, "capabilities": entries}}


PROFILES = KnownProfiles(
    {
        PLATFORM: platform_profile(),
        OLD: old_profile(),
        ONLY_ORDERS: old_profile([ORDER]),
    }
)


def conforms(body: Any, ref: str) -> None:
    """``body`` is valid against ``ref`` in the v2026-01-11 schemas."""
    problems = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in validator(BASE + ref, version=V0111).iter_errors(body)
    ]
    assert not problems, problems[:5]


CHECKOUT_SHAPES = ("shopping/fulfillment.json#/$defs/checkout", "shopping/checkout.json")


@pytest.fixture
def business(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    with serve(merchant, agents, PROFILES, api_prefix="/ucp") as client:
        yield client


@pytest.fixture
def old(business: TestClient, agent_token: str) -> UcpClient:
    return UcpClient(business, agent_token, OLD)


DESTINATION = {
    "id": "dest_1",
    "full_name": "Ada Lovelace",
    "street_address": ADDRESS["line_one"],
    "address_locality": ADDRESS["city"],
    "address_region": ADDRESS["state"],
    "postal_code": ADDRESS["postal_code"],
    "address_country": ADDRESS["country"],
}


def create_body(item: str, **extra: Any) -> dict[str, Any]:
    """A create body as a v2026-01-11 platform sends it (currency, payment, its own id)."""
    return {
        "id": "platform-side-id",
        "currency": "USD",
        "line_items": [{"item": {"id": item, "title": "Anything"}, "quantity": 1}],
        "payment": {"instruments": [], "selected_instrument_id": "instr_1"},
        **extra,
    }


SHIP_TO = {
    "methods": [
        {"type": "shipping", "destinations": [DESTINATION], "selected_destination_id": "dest_1"}
    ]
}


def card(token: str = "BA-TEST-TOKEN-1", handler: str = "paypal") -> dict[str, Any]:
    """The release's one instrument shape, a card, carrying a PayPal token credential."""
    return {
        "payment_data": {
            "id": "instr_1",
            "handler_id": handler,
            "type": "card",
            "brand": "visa",
            "last_digits": "1111",
            "credential": {"type": "paypal_payment_token", "token": token},
        },
        "risk_signals": {},
    }


def created(client: UcpClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/ucp/checkout-sessions", body)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    conforms(session, CHECKOUT_SHAPES[0])
    return session


def test_each_release_has_its_profile(business: TestClient) -> None:
    http = business
    current = http.get("/.well-known/ucp").json()
    older_url = current["ucp"]["supported_versions"][V0111]
    response = http.get(older_url.removeprefix(BASE_URL))
    assert response.status_code == 200
    profile = response.json()
    conforms(profile, "discovery/profile.json")
    ucp = profile["ucp"]
    assert ucp["version"] == V0111 and "supported_versions" not in ucp
    shopping = ucp["services"]["dev.ucp.shopping"]
    assert shopping["rest"]["endpoint"] == f"{BASE_URL}/ucp"
    names = [entry["name"] for entry in ucp["capabilities"]]
    assert names == [CHECKOUT, FULFILLMENT, DISCOUNT, BUYER_CONSENT, ORDER]
    [paypal] = profile["payment"]["handlers"]
    assert (paypal["id"], paypal["name"]) == ("paypal", "com.paypal.checkout")
    assert profile["signing_keys"] == current["signing_keys"]
    assert http.get("/.well-known/ucp/2025-01-01").status_code == 404


def test_the_root_profile_follows_the_policy(merchant: Merchant, agents: Agents) -> None:
    with serve(merchant, agents, PROFILES, policy=UcpPolicy(version=V0111)) as http:
        root = http.get("/.well-known/ucp").json()
    assert root["ucp"]["version"] == V0111 and isinstance(root["ucp"]["capabilities"], list)


def test_an_old_platform_checks_out_in_its_own_release(old: UcpClient) -> None:
    first = in_stock()[0]
    session = created(old, create_body(first, fulfillment={"methods": [{"type": "shipping"}]}))
    assert session["ucp"]["version"] == V0111
    assert {c["name"] for c in session["ucp"]["capabilities"]} == {CHECKOUT, FULFILLMENT}
    assert session["status"] == "incomplete"
    assert session["payment"]["handlers"][0]["id"] == "paypal"
    assert session["id"] != "platform-side-id"
    # An update as the release's own conformance suite sends it: no method id, no
    # line_item_ids, no group id, a payment object with a null in it.
    path = f"/ucp/checkout-sessions/{session['id']}"
    update = {
        "id": session["id"],
        "currency": "USD",
        "line_items": [
            {"id": line["id"], "item": {"id": first, "title": "x"}, "quantity": 2}
            for line in session["line_items"]
        ],
        "payment": {"selected_instrument_id": None, "instruments": []},
        "fulfillment": SHIP_TO,
    }
    response = old.put(path, update)
    assert response.status_code == 200, response.text
    updated = response.json()
    conforms(updated, CHECKOUT_SHAPES[0])
    [method] = updated["fulfillment"]["methods"]
    assert method["selected_destination_id"] == "dest_1"
    option = method["groups"][0]["options"][0]["id"]
    update["fulfillment"] = {
        "methods": [{**SHIP_TO["methods"][0], "groups": [{"selected_option_id": option}]}]
    }
    ready = old.put(path, update).json()
    assert ready["status"] == "ready_for_complete", ready["messages"]
    assert ready["line_items"][0]["quantity"] == 2
    response = old.post(f"{path}/complete", card())
    assert response.status_code == 200, response.text
    done = response.json()
    conforms(done, CHECKOUT_SHAPES[0])
    assert done["status"] == "completed" and done["payment"]["selected_instrument_id"] == "instr_1"
    order = old.get(f"/ucp/orders/{done['order']['id']}")
    assert order.status_code == 200
    conforms(order.json(), "shopping/order.json")
    assert order.json()["ucp"]["version"] == V0111


def refusal(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == "requires_escalation"
    assert body["messages"][0]["code"] == code
    assert body["detail"] == body["messages"][0]["content"]
    return body


def test_refusals_are_the_releases_error_shape_with_an_http_status(old: UcpClient) -> None:
    unknown = old.post("/ucp/checkout-sessions", create_body("pink-wumpus"))
    assert "not found" in refusal(unknown, 400, "not_found")["detail"]
    gone = old.post("/ucp/checkout-sessions", create_body(out_of_stock()))
    assert refusal(gone, 400, "out_of_stock")["detail"].startswith("Insufficient stock")
    euros = old.post("/ucp/checkout-sessions", {**create_body(in_stock()[0]), "currency": "EUR"})
    assert "USD only" in refusal(euros, 400, "invalid")["detail"]
    missing = old.get("/ucp/checkout-sessions/cs_nothing_here")
    refusal(missing, 404, "not_found")
    first = in_stock()[0]
    session = created(old, create_body(first))
    path = f"/ucp/checkout-sessions/{session['id']}"
    early = refusal(old.post(f"{path}/complete", card()), 400, "missing")
    assert early["detail"].startswith("Fulfillment address and option must be selected")
    schema = old.post(f"{path}/complete", {"payment_data": {"id": "x"}})
    assert schema.status_code == 400 and schema.json()["path"].startswith("$.payment_data")
    stranger = old.post(f"{path}/complete", card(handler="someone_else"))
    refusal(stranger, 400, "invalid")
    assert old.post(f"{path}/cancel", {}).status_code == 200
    lines = [{"id": session["line_items"][0]["id"], "item": {"id": first}, "quantity": 1}]
    update = {"id": session["id"], "currency": "USD", "line_items": lines, "payment": {}}
    closed = old.put(path, update)
    assert refusal(closed, 409, "invalid_state")["detail"]


def test_the_intersection_is_the_default(
    old: UcpClient, merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    orders_only = UcpClient(old.http, agent_token, ONLY_ORDERS)
    refused = orders_only.post("/ucp/checkout-sessions", create_body(in_stock()[0]))
    refusal(refused, 400, "capabilities_incompatible")
    policy = UcpPolicy(intersect=False)
    with serve(merchant, agents, PROFILES, api_prefix="/ucp", policy=policy) as http:
        everything = UcpClient(http, agent_token, ONLY_ORDERS)
        session = created(everything, create_body(in_stock()[0]))
    names = {c["name"] for c in session["ucp"]["capabilities"]}
    assert names == {CHECKOUT, FULFILLMENT, DISCOUNT, BUYER_CONSENT}


def test_open_access_takes_platforms_without_a_token(merchant: Merchant, agents: Agents) -> None:
    body = create_body(in_stock()[0])
    with serve(merchant, agents, PROFILES, api_prefix="/ucp") as http:
        assert UcpClient(http, "", OLD).post("/ucp/checkout-sessions", body).status_code == 401
    with serve(merchant, agents, PROFILES, policy=UcpPolicy(open_access=True)) as http:
        anonymous = UcpClient(http, "", OLD)
        headers = anonymous.headers(key=True)
        del headers["Authorization"]
        response = http.post("/checkout-sessions", json=body, headers=headers)
        assert response.status_code == 201, response.text
        session = response.json()["id"]
        # A token that is wrong is still refused: open access is for callers without one.
        assert UcpClient(http, "wrong", OLD).get(f"/checkout-sessions/{session}").status_code == 401
        del headers["Idempotency-Key"]
        assert http.get(f"/checkout-sessions/{session}", headers=headers).status_code == 200


def test_an_unknown_release_is_unsupported(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    future = {"ucp": {"version": "2099-01-01", "capabilities": []}}
    with serve(merchant, agents, KnownProfiles({OLD: future})) as http:
        response = UcpClient(http, agent_token, OLD).post("/checkout-sessions", create_body("x"))
    assert response.status_code == 422
    assert response.json()["code"] == "version_unsupported"
    assert "2026-04-08, 2026-01-11" in response.json()["content"]


def test_the_client_speaks_the_old_release_too(business: TestClient, agent_token: str) -> None:
    transport = TestClientTransport(business)
    home = Address("Ada Lovelace", "1 Analytical Way", "San Francisco", "CA", "US", "94102")
    with Shop.discover(
        BASE_URL, agent_token, profile_url=OLD, transport=transport, version=V0111
    ) as shop:
        assert shop.base_url == f"{BASE_URL}/ucp" and shop.payment_handler == "paypal"
        session = shop.create([(in_stock()[0], 1)], address=home)
        assert session.status == "ready_for_complete", session.messages
        assert session.raw["ucp"]["version"] == V0111
        more = shop.update(session.id, items=[(in_stock()[0], 2)])
        assert [line.quantity for line in more.lines] == [2]
        paid = shop.complete(session.id, "BA-TEST-TOKEN-1")
        assert paid.status == "completed" and paid.order is not None
        with pytest.raises(CheckoutError) as refused:
            shop.create([(out_of_stock(), 1)], address=home)
        assert (refused.value.code, refused.value.status) == ("out_of_stock", 400)
