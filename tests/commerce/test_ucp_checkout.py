"""UCP checkout sessions end to end: the merchant in-process, PayPal the in-process sandbox.

Also the helpers the other ``test_ucp_*`` modules share: a platform profile, an app serving
the UCP router, a client that sends an agent's headers, and response validation against the
shipped schemas (the OpenAPI file's response alternatives).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from cartagent.commerce import (
    Agents,
    CheckoutRecords,
    Merchant,
    MerchantCatalog,
    PayPalPayments,
)
from cartagent.commerce.terms import FreeShipping, ShippingRate, StoreTerms
from cartagent.commerce.ucp import (
    UCP_VERSION,
    KnownProfiles,
    PlatformProfiles,
    UcpService,
    UcpSettings,
    ucp_router,
)
from cartagent.money import Money, unit_tax
from cartagent.paypal import PayPalClient
from cartagent.protocols.ucp.profile import CHECKOUT, FULFILLMENT, LOOKUP, ORDER, SEARCH
from cartagent.protocols.ucp.schema import BASE, validator
from tests.commerce.conftest import ADDRESS, in_stock, out_of_stock, tau_products

BASE_URL = "https://merchant.test"
PLATFORM = "https://platform.test/.well-known/ucp"
ALL = (CHECKOUT, FULFILLMENT, SEARCH, LOOKUP, ORDER)
PAYPAL = "com.paypal.checkout"

# The release's response alternatives per operation (rest.openapi.json ``*_response``).
RESPONSES = {
    "checkout": (
        BASE + "shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout",
        BASE + "shopping/types/error_response.json",
    ),
    "search": (BASE + "shopping/catalog_search.json#/$defs/search_response",),
    "lookup": (BASE + "shopping/catalog_lookup.json#/$defs/lookup_response",),
    "product": (
        BASE + "shopping/catalog_lookup.json#/$defs/get_product_response",
        BASE + "shopping/types/error_response.json",
    ),
    "order": (BASE + "shopping/order.json", BASE + "shopping/types/error_response.json"),
    "profile": (BASE + "discovery/profile.json#/$defs/business_profile",),
}


def conforms(kind: str, body: Any) -> None:
    """``body`` matches exactly one of the release's response shapes for ``kind``."""
    problems = [
        [f"{list(e.absolute_path)}: {e.message}" for e in validator(ref).iter_errors(body)][:5]
        for ref in RESPONSES[kind]
    ]
    assert sum(not found for found in problems) == 1, problems


def platform_profile(
    capabilities: Sequence[str] = ALL,
    *,
    version: str = UCP_VERSION,
    capability_version: str = UCP_VERSION,
    handlers: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """A valid platform profile listing ``capabilities`` at ``capability_version``."""
    site = f"https://ucp.dev/{version}"
    caps: dict[str, list[dict[str, Any]]] = {}
    for name in capabilities:
        entry = {
            "version": capability_version,
            "spec": f"{site}/specification/{name.rsplit('.', 1)[-1]}",
            "schema": f"{site}/schemas/shopping/{name.rsplit('.', 1)[-1]}.json",
        }
        if name == FULFILLMENT:
            entry["extends"] = CHECKOUT
        caps[name] = [entry]
    if handlers is None:
        handlers = {
            PAYPAL: [
                {
                    "id": "platform_paypal",
                    "version": UCP_VERSION,
                    "spec": "https://developer.paypal.com/docs/api/orders/v2/",
                    "schema": "https://platform.test/schemas/paypal.json",
                    "available_instruments": [{"type": "paypal"}],
                }
            ]
        }
    return {
        "ucp": {
            "version": version,
            "services": {
                "dev.ucp.shopping": [
                    {
                        "version": version,
                        "spec": f"{site}/specification/overview",
                        "transport": "rest",
                        "schema": f"{site}/services/shopping/rest.openapi.json",
                    }
                ]
            },
            "capabilities": caps,
            "payment_handlers": dict(handlers),
        }
    }


@contextmanager
def serve(
    merchant: Merchant,
    agents: Agents,
    profiles: PlatformProfiles | None = None,
    **settings: Any,
) -> Iterator[TestClient]:
    """The UCP router alone in an app, platforms' profiles from ``profiles``."""
    service = UcpService(
        merchant,
        agents,
        UcpSettings(base_url=BASE_URL, **settings),
        profiles or KnownProfiles({PLATFORM: platform_profile()}),
    )
    app = FastAPI()
    app.include_router(ucp_router(service))
    try:
        with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as http:
            yield http
    finally:
        # The records fixture makes an engine per test; close its pooled connections now
        # rather than at garbage collection, so a long run stays under the server's limit.
        merchant.records.engine.dispose()


class UcpClient:
    """A platform calling the business: bearer token, ``UCP-Agent``, ``Request-Id`` and a
    fresh ``Idempotency-Key`` on each state-changing call unless the test gives one."""

    def __init__(self, http: TestClient, token: str, profile: str = PLATFORM) -> None:
        self.http = http
        self.token = token
        self.profile = profile

    def headers(self, extra: Mapping[str, str] | None = None, *, key: bool) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "UCP-Agent": f'profile="{self.profile}"',
            "Request-Id": str(uuid.uuid4()),
        }
        if key:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        return {**headers, **(extra or {})}

    def post(
        self, path: str, body: Any, headers: Mapping[str, str] | None = None, *, key: bool = True
    ) -> httpx.Response:
        return self.http.post(path, json=body, headers=self.headers(headers, key=key))

    def put(self, path: str, body: Any, headers: Mapping[str, str] | None = None) -> httpx.Response:
        return self.http.put(path, json=body, headers=self.headers(headers, key=True))

    def get(self, path: str, headers: Mapping[str, str] | None = None) -> httpx.Response:
        return self.http.get(path, headers=self.headers(headers, key=False))

    def search(self, body: Any) -> httpx.Response:
        return self.post("/catalog/search", body, key=False)


@pytest.fixture
def ucp(merchant: Merchant, agents: Agents, agent_token: str) -> Iterator[UcpClient]:
    with serve(merchant, agents) as http:
        yield UcpClient(http, agent_token)


def owner(client: UcpClient, agents: Agents) -> str:
    agent = agents.by_token(client.token)
    assert agent is not None
    return agent.name


DESTINATION = {
    "first_name": "Ada",
    "last_name": "Lovelace",
    "street_address": ADDRESS["line_one"],
    "address_locality": ADDRESS["city"],
    "address_region": ADDRESS["state"],
    "postal_code": ADDRESS["postal_code"],
    "address_country": ADDRESS["country"],
}
SHIPPING = {"methods": [{"type": "shipping", "destinations": [DESTINATION]}]}


def instrument(**changes: Any) -> dict[str, Any]:
    return {
        "id": "instr_1",
        "handler_id": "paypal",
        "type": "paypal",
        "selected": True,
        "credential": {"type": "paypal_payment_token", "token": "BA-TEST-TOKEN-1"},
        **changes,
    }


PAYMENT = {"payment": {"instruments": [instrument()]}}


def lines(*items: str | tuple[str, int]) -> list[dict[str, Any]]:
    return [
        {"item": {"id": item}, "quantity": 1}
        if isinstance(item, str)
        else {"item": {"id": item[0]}, "quantity": item[1]}
        for item in items
    ]


def create(client: UcpClient, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = client.post("/checkout-sessions", {"line_items": items, **extra})
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    conforms("checkout", session)
    return session


def ready(client: UcpClient, quantity: int = 1) -> dict[str, Any]:
    return create(
        client,
        lines((in_stock()[0], quantity)),
        buyer={"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"},
        fulfillment=SHIPPING,
    )


def totals(session: Mapping[str, Any]) -> dict[str, int]:
    return {total["type"]: total["amount"] for total in session["totals"]}


def price(item_id: str) -> Decimal:
    return next(v.price for p in tau_products() for v in p.variants if v.id == item_id)


# ---------------------------------------------------------------- tests


def test_a_session_without_a_destination_is_incomplete_and_says_where(ucp: UcpClient) -> None:
    session = create(ucp, lines(in_stock()[0]))
    assert session["status"] == "incomplete"
    assert session["currency"] == "USD"
    assert session["continue_url"] == f"{BASE_URL}/shop/checkout-sessions/{session['id']}"
    [message] = session["messages"]
    assert (message["type"], message["code"], message["severity"]) == (
        "error",
        "missing",
        "recoverable",
    )
    assert message["path"] == "$.fulfillment.methods[0].selected_destination_id"
    assert [t["type"] for t in session["totals"]] == ["subtotal", "tax", "total"]
    [method] = session["fulfillment"]["methods"]
    assert method["type"] == "shipping" and "destinations" not in method
    envelope = session["ucp"]
    assert envelope["version"] == UCP_VERSION and envelope["status"] == "success"
    assert set(envelope["capabilities"]) == {CHECKOUT, FULFILLMENT}
    [handler] = envelope["payment_handlers"][PAYPAL]
    assert handler["id"] == "paypal" and handler["available_instruments"] == [{"type": "paypal"}]


def test_totals_are_minor_units_with_tax_per_unit_and_shipping(ucp: UcpClient) -> None:
    session = ready(ucp, quantity=3)
    [line] = session["line_items"]
    unit = Money(price(line["item"]["id"]), "USD")
    tax = unit_tax(unit, "8") * 3
    shipping = Money(Decimal(0) if unit.amount * 3 >= 50 else Decimal("5.99"), "USD")
    assert session["status"] == "ready_for_complete" and session["messages"] == []
    assert totals(session) == {
        "subtotal": (unit * 3).minor_units,
        "fulfillment": shipping.minor_units,
        "tax": tax.minor_units,
        "total": (unit * 3 + tax + shipping).minor_units,
    }
    assert (
        sum(t["amount"] for t in session["totals"] if t["type"] != "total")
        == totals(session)["total"]
    )
    assert line["quantity"] == 3 and line["item"]["price"] == unit.minor_units
    [method] = session["fulfillment"]["methods"]
    [destination] = method["destinations"]
    assert method["selected_destination_id"] == destination["id"]
    assert destination["postal_code"] == ADDRESS["postal_code"]
    [group] = method["groups"]
    assert group["selected_option_id"] == "standard"
    assert group["options"][0]["totals"] == [
        {"type": "total", "display_text": "Shipping", "amount": shipping.minor_units}
    ]


def test_an_update_replaces_the_lines_and_an_echoed_selection_still_matches(
    ucp: UcpClient,
) -> None:
    first, second = in_stock(2)
    session = create(ucp, lines(first, (first, 2)), fulfillment=SHIPPING, buyer={"first_name": "A"})
    assert [(li["item"]["id"], li["quantity"]) for li in session["line_items"]] == [(first, 3)]
    path = f"/checkout-sessions/{session['id']}"
    echoed = session["fulfillment"]
    method = echoed["methods"][0]
    update = {
        "id": session["id"],  # deprecated, ignored: the id is in the path
        "line_items": lines(second),
        "fulfillment": {
            "methods": [
                {
                    "id": method["id"],
                    "type": "shipping",
                    "line_item_ids": method["line_item_ids"],
                    "selected_destination_id": method["selected_destination_id"],
                    "groups": [{"id": "package_1", "selected_option_id": "standard"}],
                }
            ]
        },
    }
    response = ucp.put(path, update)
    assert response.status_code == 200, response.text
    updated = response.json()
    conforms("checkout", updated)
    assert [li["item"]["id"] for li in updated["line_items"]] == [second]
    assert updated["buyer"] == {"first_name": "A"}  # omitted fields are left as they were
    assert updated["fulfillment"]["methods"][0]["destinations"] == method["destinations"]
    assert updated["status"] == "ready_for_complete"


def test_an_unknown_item_on_create_is_an_error_response(ucp: UcpClient) -> None:
    response = ucp.post("/checkout-sessions", {"line_items": lines(in_stock()[0], "nope")})
    assert response.status_code == 200
    body = response.json()
    conforms("checkout", body)
    assert body["ucp"]["status"] == "error"
    [message] = body["messages"]
    assert (message["code"], message["severity"]) == ("not_found", "unrecoverable")
    assert message["path"] == "$.line_items[1].item.id"


def test_a_rejected_update_answers_the_session_as_it_stands_with_the_reason(
    ucp: UcpClient,
) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}"
    response = ucp.put(path, {"line_items": lines("nope")})
    assert response.status_code == 200
    body = response.json()
    conforms("checkout", body)
    assert body["ucp"]["status"] == "success"
    assert body["line_items"] == session["line_items"]
    [message] = [m for m in body["messages"] if m["type"] == "error"]
    assert (message["code"], message["path"], message["severity"]) == (
        "not_found",
        "$.line_items[0].item.id",
        "recoverable",
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ({"type": "pickup", "line_item_ids": []}, "$.fulfillment.methods[0].type"),
        (
            {
                "line_item_ids": [],
                "groups": [{"id": "package_1", "selected_option_id": "teleport"}],
            },
            "$.fulfillment.methods[0].groups[0].selected_option_id",
        ),
        (
            {"line_item_ids": [], "selected_destination_id": "dest_elsewhere"},
            "$.fulfillment.methods[0].selected_destination_id",
        ),
        (
            {"line_item_ids": [], "destinations": [{**DESTINATION, "address_country": "USA"}]},
            "$.fulfillment.methods[0].destinations[0].address_country",
        ),
    ],
)
def test_fulfillment_this_store_cannot_do_is_refused_with_its_path(
    ucp: UcpClient, method: dict[str, Any], path: str
) -> None:
    session = ready(ucp)
    update = {"line_items": lines(in_stock()[0]), "fulfillment": {"methods": [method]}}
    body = ucp.put(f"/checkout-sessions/{session['id']}", update).json()
    conforms("checkout", body)
    assert [m["path"] for m in body["messages"] if m["type"] == "error"] == [path]
    before, after = session["fulfillment"]["methods"][0], body["fulfillment"]["methods"][0]
    assert after["destinations"] == before["destinations"]
    assert after["groups"][0]["selected_option_id"] == "standard"


def test_schema_violations_are_400_with_the_path(ucp: UcpClient) -> None:
    zero = ucp.post("/checkout-sessions", {"line_items": lines((in_stock()[0], 0))})
    assert zero.status_code == 400
    assert zero.json()["path"] == "$.line_items[0].quantity"
    missing = ucp.post("/checkout-sessions", {"buyer": {}})
    assert (missing.status_code, missing.json()["code"]) == (400, "missing")
    assert missing.json()["path"] == "$.line_items"
    session = ready(ucp)
    update = ucp.put(
        f"/checkout-sessions/{session['id']}",
        {"line_items": lines(in_stock()[0]), "fulfillment": {"methods": [{"type": "shipping"}]}},
    )
    assert update.json()["path"] == "$.fulfillment.methods[0].line_item_ids"
    complete = ucp.post(f"/checkout-sessions/{session['id']}/complete", {})
    assert (complete.status_code, complete.json()["path"]) == (400, "$.payment")


def test_an_out_of_stock_variant_blocks_completion(ucp: UcpClient) -> None:
    session = create(ucp, lines(out_of_stock()), fulfillment=SHIPPING)
    assert session["status"] == "incomplete"
    [message] = session["messages"]
    assert (message["code"], message["path"]) == ("out_of_stock", "$.line_items[0]")
    done = ucp.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert done.status_code == 200
    body = done.json()
    conforms("checkout", body)
    assert body["status"] == "incomplete" and "order" not in body
    assert [m["code"] for m in body["messages"]] == ["out_of_stock"]


def test_complete_pays_through_paypal_exactly_once(
    ucp: UcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    session = ready(ucp, quantity=2)
    path = f"/checkout-sessions/{session['id']}/complete"
    key = {"Idempotency-Key": "complete-1"}
    done = ucp.post(path, PAYMENT, headers=key)
    assert done.status_code == 200, done.text
    completed = done.json()
    conforms("checkout", completed)
    assert completed["status"] == "completed" and completed["messages"] == []
    assert "continue_url" not in completed
    order = completed["order"]
    assert order["permalink_url"] == f"{BASE_URL}/shop/orders/{order['id']}"
    assert "BA-TEST-TOKEN-1" not in done.text  # credentials are never echoed

    replay = ucp.post(path, PAYMENT, headers=key)
    assert (replay.status_code, replay.json()) == (200, completed)
    again = ucp.post(path, PAYMENT)  # a new key: the session is already completed
    assert again.json()["status"] == "completed"
    [refused] = again.json()["messages"]
    assert (refused["code"], refused["severity"]) == ("invalid_state", "unrecoverable")

    checkout = merchant.get(owner(ucp, agents), session["id"])
    assert checkout.protocol == "ucp" and checkout.payment.paypal_order_id is not None
    paid = merchant_paypal.get_order(checkout.payment.paypal_order_id)
    assert paid["status"] == "COMPLETED"
    captures = [c for unit in paid["purchase_units"] for c in unit["payments"]["captures"]]
    assert len(captures) == 1
    assert Money.of(captures[0]["amount"]["value"], "USD").minor_units == totals(completed)["total"]
    unit = paid["purchase_units"][0]
    assert unit["custom_id"] == session["id"] and unit["items"][0]["quantity"] == "2"
    assert unit["shipping"]["name"]["full_name"] == "Ada Lovelace"


def test_the_order_of_a_completed_checkout(
    ucp: UcpClient, merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    session = ready(ucp, quantity=2)
    completed = ucp.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT).json()
    order_id = completed["order"]["id"]
    response = ucp.get(f"/orders/{order_id}")
    assert response.status_code == 200
    order = response.json()
    conforms("order", order)
    assert list(order["ucp"]["capabilities"]) == [ORDER]
    assert (order["id"], order["checkout_id"]) == (order_id, session["id"])
    assert order["label"] == completed["order"]["label"]
    assert order["totals"] == completed["totals"]
    [line] = order["line_items"]
    assert line["quantity"] == {"original": 2, "total": 2, "fulfilled": 0}
    assert line["status"] == "processing"
    [expectation] = order["fulfillment"]["expectations"]
    assert expectation["destination"]["postal_code"] == ADDRESS["postal_code"]

    other = UcpClient(ucp.http, agent_token + "-b")
    for client, wanted in ((other, order_id), (ucp, "ord_missing"), (ucp, "ord_%")):
        missing = client.get(f"/orders/{wanted}").json()
        conforms("order", missing)
        assert missing["messages"][0]["code"] == "not_found"
    open_session = ready(ucp)
    assert ucp.get(f"/orders/{open_session['id']}").json()["ucp"]["status"] == "error"


def test_cancel_then_nothing_changes_it(ucp: UcpClient) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}"
    canceled = ucp.post(f"{path}/cancel", None)
    assert canceled.status_code == 200
    conforms("checkout", canceled.json())
    assert canceled.json()["status"] == "canceled" and "continue_url" not in canceled.json()
    for response in (
        ucp.post(f"{path}/cancel", None),
        ucp.put(path, {"line_items": lines(in_stock()[0])}),
        ucp.post(f"{path}/complete", PAYMENT),
    ):
        body = response.json()
        assert (response.status_code, body["status"]) == (200, "canceled")
        assert [(m["code"], m["severity"]) for m in body["messages"]] == [
            ("invalid_state", "unrecoverable")
        ]


def test_an_unknown_session_is_an_error_response(ucp: UcpClient) -> None:
    for response in (
        ucp.get("/checkout-sessions/cs_missing"),
        ucp.put("/checkout-sessions/cs_missing", {"line_items": lines(in_stock()[0])}),
        ucp.post("/checkout-sessions/cs_missing/cancel", None),
        ucp.get("/checkout-sessions/" + "x" * 300),
    ):
        assert response.status_code == 200
        conforms("checkout", response.json())
        [message] = response.json()["messages"]
        assert (message["code"], message["severity"]) == ("not_found", "unrecoverable")


def test_without_the_fulfillment_extension_the_buyer_must_give_the_address(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    profiles = KnownProfiles({PLATFORM: platform_profile((CHECKOUT, ORDER))})
    with serve(merchant, agents, profiles) as http:
        client = UcpClient(http, agent_token)
        # The extension's field is not part of the negotiated schema: it is ignored.
        session = create(client, lines(in_stock()[0]), fulfillment=SHIPPING)
    assert set(session["ucp"]["capabilities"]) == {CHECKOUT}
    assert "fulfillment" not in session
    assert session["status"] == "requires_escalation"
    assert session["continue_url"].endswith(session["id"])
    [message] = session["messages"]
    assert message["severity"] == "requires_buyer_input"


def test_a_whole_number_written_as_a_float_is_a_quantity(ucp: UcpClient) -> None:
    session = create(
        ucp,
        [{"item": {"id": in_stock()[0]}, "quantity": 2.0}],
        buyer={"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"},
        fulfillment=SHIPPING,
    )
    assert session["line_items"][0]["quantity"] == 2
    done = ucp.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert done.status_code == 200 and done.json()["status"] == "completed", done.text


def test_a_destination_with_only_a_country_gets_shipping_options_and_keeps_its_id(
    ucp: UcpClient,
) -> None:
    shipping = {
        "methods": [
            {
                "type": "shipping",
                "destinations": [{"id": "dest_1", "address_country": "us"}],
                "selected_destination_id": "dest_1",
            }
        ]
    }
    session = create(ucp, lines(in_stock()[0]), fulfillment=shipping)
    [method] = session["fulfillment"]["methods"]
    assert method["destinations"] == [{"id": "dest_1", "address_country": "US"}]
    assert method["selected_destination_id"] == "dest_1"
    assert [option["id"] for option in method["groups"][0]["options"]] == ["standard"]
    # what is missing is said on the session; it does not block paying
    [message] = session["messages"]
    assert (message["type"], message["code"]) == ("warning", "incomplete")
    assert "street address" in message["content"] and "recipient's name" in message["content"]
    assert session["status"] == "ready_for_complete"
    assert "fulfillment" in totals(session)


def test_an_update_with_a_partial_address_applies_it_with_the_rest_of_the_request(
    ucp: UcpClient,
) -> None:
    session = create(ucp, lines(in_stock()[0]))
    [line] = session["line_items"]
    destination = {"id": "home", "address_country": "CA", "postal_code": "H2X 1Y4"}
    method = {"id": "shipping", "type": "shipping", "line_item_ids": [line["id"]]}
    update = {
        "line_items": [{"id": line["id"], "item": {"id": line["item"]["id"]}, "quantity": 2}],
        "buyer": {"email": "ada@example.com"},
        "fulfillment": {"methods": [{**method, "destinations": [destination]}]},
    }
    response = ucp.put(f"/checkout-sessions/{session['id']}", update)
    assert response.status_code == 200, response.text
    updated = response.json()
    conforms("checkout", updated)
    assert [li["quantity"] for li in updated["line_items"]] == [2]
    assert updated["buyer"] == {"email": "ada@example.com"}
    [method] = updated["fulfillment"]["methods"]
    assert method["destinations"] == [destination]
    assert method["selected_destination_id"] == "home"
    assert not any(m["type"] == "error" for m in updated["messages"])


def test_a_destination_without_a_country_cannot_be_shipped_to_and_says_so(
    ucp: UcpClient,
) -> None:
    shipping = {"methods": [{"type": "shipping", "destinations": [{"postal_code": "10012"}]}]}
    session = create(ucp, lines(in_stock()[0]), fulfillment=shipping)
    assert session["status"] == "incomplete"
    errors = [m for m in session["messages"] if m["type"] == "error"]
    assert [(m["code"], m["content"]) for m in errors] == [("missing", "the country is needed")]
    assert "groups" not in session["fulfillment"]["methods"][0]


def test_a_country_only_checkout_is_paid_with_the_address_paypal_can_take(
    ucp: UcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    shipping = {"methods": [{"type": "shipping", "destinations": [{"address_country": "US"}]}]}
    session = create(ucp, lines(in_stock()[0]), fulfillment=shipping)
    done = ucp.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"
    checkout = merchant.get(owner(ucp, agents), session["id"])
    assert checkout.payment.paypal_order_id is not None
    unit = merchant_paypal.get_order(checkout.payment.paypal_order_id)["purchase_units"][0]
    assert unit["shipping"]["address"] == {"country_code": "US"}
    assert "name" not in unit["shipping"]


def test_a_country_that_is_not_a_code_is_refused_with_its_path(ucp: UcpClient) -> None:
    shipping = {"methods": [{"type": "shipping", "destinations": [{"address_country": "USA"}]}]}
    response = ucp.post(
        "/checkout-sessions", {"line_items": lines(in_stock()[0]), "fulfillment": shipping}
    )
    body = response.json()
    [message] = body["messages"]
    assert message["path"] == "$.fulfillment.methods[0].destinations[0].address_country"


def test_a_store_prices_by_its_terms_shipping_by_destination_and_tax_by_region(
    records: CheckoutRecords, merchant_paypal: PayPalClient, agents: Agents, agent_token: str
) -> None:
    terms = StoreTerms(
        tax_percent=Decimal(0),
        tax_regions={"US-NY": Decimal("8.875")},
        rates=(
            ShippingRate("std-ship", "Standard Shipping", Decimal(5)),
            ShippingRate("exp-ship-us", "Express (US)", Decimal(15), "express", "US"),
            ShippingRate("exp-ship-intl", "International Express", Decimal(25), "express"),
        ),
        promotions=(FreeShipping(min_items=Decimal(100)),),
        free_shipping_from=None,
    )
    store = Merchant(
        MerchantCatalog(tau_products()), records, PayPalPayments(merchant_paypal), terms=terms
    )
    item = in_stock()[0]
    unit = Money(price(item), "USD")
    with serve(store, agents) as http:
        ucp = UcpClient(http, agent_token)

        def priced(destination: dict[str, Any]) -> dict[str, Any]:
            method = {"type": "shipping", "destinations": [destination]}
            return create(ucp, lines(item), fulfillment={"methods": [method]})

        us = priced({"address_country": "US", "address_region": "NY", "postal_code": "10012"})
        [group] = us["fulfillment"]["methods"][0]["groups"]
        assert [(o["id"], o["totals"][0]["amount"]) for o in group["options"]] == [
            ("std-ship", 500 if unit.amount < 100 else 0),
            ("exp-ship-us", 1500),
        ]
        assert group["selected_option_id"] == "std-ship"  # the cheapest, until one is chosen
        assert totals(us)["tax"] == unit_tax(unit, "8.875").minor_units
        canada = priced({"address_country": "CA"})
        options = canada["fulfillment"]["methods"][0]["groups"][0]["options"]
        assert [o["id"] for o in options] == ["std-ship", "exp-ship-intl"]
        assert totals(canada)["tax"] == 0
        chosen = {
            "methods": [
                {
                    "id": "shipping",
                    "type": "shipping",
                    "line_item_ids": [canada["line_items"][0]["id"]],
                    "groups": [{"id": "package_1", "selected_option_id": "exp-ship-intl"}],
                }
            ]
        }
        line = canada["line_items"][0]
        update = {
            "line_items": [{"id": line["id"], "item": {"id": item}, "quantity": 1}],
            "fulfillment": chosen,
        }
        express = ucp.put(f"/checkout-sessions/{canada['id']}", update).json()
        assert totals(express)["fulfillment"] == 2500
        assert totals(express)["total"] == unit.minor_units + 2500
