"""UCP's testing surface, on only with a simulation secret: the test payment handler (tokens and
a test card), simulated shipping behind the secret (the order's events and the platform's
webhook), order updates checked against the release's order schema, and saved addresses."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.ucp import KnownProfiles, UcpPolicy
from cartagent.commerce.ucp.address_book import AddressBook, seed_rows
from cartagent.commerce.ucp.testing import HANDLER_ID, HANDLER_NAME
from cartagent.errors import ConfigurationError
from tests.commerce.conftest import in_stock
from tests.commerce.test_ucp_2026_01_11 import (
    OLD,
    PROFILES,
    SHIP_TO,
    create_body,
)
from tests.commerce.test_ucp_checkout import (
    PLATFORM,
    SHIPPING,
    UcpClient,
    create,
    lines,
    platform_profile,
    serve,
)

SECRET = "test-simulation-secret"
PAYPAL_HANDLERS = platform_profile()["ucp"]["payment_handlers"]
FLOWER_SHOP = (
    Path(__file__).resolve().parents[2] / "third_party/ucp-conformance/test_data/flower_shop"
)


@pytest.fixture
def testing_shop(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    policy = UcpPolicy(simulation_secret=SECRET)
    with serve(merchant, agents, PROFILES, policy=policy) as http:
        yield http


def mock(credential: dict[str, Any]) -> dict[str, Any]:
    return {
        "payment_data": {
            "id": "instr_test",
            "handler_id": HANDLER_ID,
            "type": "card",
            "brand": "visa",
            "last_digits": "4242",
            "credential": credential,
        }
    }


def card(number: str) -> dict[str, Any]:
    return {
        "type": "card",
        "card_number_type": "fpan",
        "number": number,
        "expiry_month": 12,
        "expiry_year": 2030,
        "cvc": "123",
    }


def ready(client: UcpClient) -> str:
    response = client.post("/checkout-sessions", create_body(in_stock()[0], fulfillment=SHIP_TO))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_the_test_handler_pays_with_its_tokens_and_test_card(
    testing_shop: TestClient, agent_token: str, merchant: Merchant, agents: Agents
) -> None:
    old = UcpClient(testing_shop, agent_token, OLD)
    handlers = testing_shop.get("/.well-known/ucp/2026-01-11").json()["payment"]["handlers"]
    assert [h["id"] for h in handlers] == ["paypal", HANDLER_ID]
    current = testing_shop.get("/.well-known/ucp").json()["ucp"]["payment_handlers"]
    assert current[HANDLER_NAME][0]["id"] == HANDLER_ID
    for credential, status in (
        ({"type": "token", "token": "fail_token"}, 402),
        ({"type": "token", "token": "other"}, 402),
        (card("4000000000000002"), 402),
        ({"type": "token", "token": "success_token"}, 200),
        (card("4242424242424242"), 200),
    ):
        session = ready(old)
        response = old.post(f"/checkout-sessions/{session}/complete", mock(credential))
        assert response.status_code == status, (credential, response.text)
        if status == 200:
            assert response.json()["status"] == "completed"
            agent = agents.by_token(agent_token)
            assert agent is not None
            paid = merchant.get(agent.name, session).payment
            assert paid.capture_id is not None and paid.capture_id.startswith("TEST-")
            assert "4242424242424242" not in response.text
        else:
            assert response.json()["messages"][0]["code"] == "payment_failed"


def completed_order(client: UcpClient) -> dict[str, Any]:
    session = ready(client)
    token = {"type": "token", "token": "success_token"}
    done = client.post(f"/checkout-sessions/{session}/complete", mock(token))
    assert done.status_code == 200, done.text
    order = client.get(f"/orders/{done.json()['order']['id']}")
    assert order.status_code == 200
    body: dict[str, Any] = order.json()
    return body


def test_simulated_shipping_needs_the_secret_and_tells_the_platform(
    testing_shop: TestClient, agent_token: str, merchant: Merchant, agents: Agents
) -> None:
    old = UcpClient(testing_shop, agent_token, OLD)
    order = completed_order(old)
    path = f"/testing/simulate-shipping/{order['id']}"
    assert testing_shop.post(path).status_code == 403
    assert testing_shop.post(path, headers={"Simulation-Secret": "guess"}).status_code == 403
    nowhere = "/testing/simulate-shipping/ord_nothing"
    assert testing_shop.post(nowhere, headers={"Simulation-Secret": SECRET}).status_code == 404
    shipped = testing_shop.post(path, headers={"Simulation-Secret": SECRET})
    assert shipped.status_code == 200, shipped.text
    after = old.get(f"/orders/{order['id']}").json()
    [event] = after["fulfillment"]["events"]
    assert event["type"] == "shipped" and event["tracking_number"].startswith("TEST")
    assert [line["status"] for line in after["line_items"]] == ["fulfilled"]
    agent = agents.by_token(agent_token)
    assert agent is not None
    later = datetime.now(UTC) + timedelta(minutes=5)
    bodies = [
        orjson.loads(pending.body)
        for pending in merchant.records.due_events(later, 10, [agent.name], ["ucp"])
    ]
    kinds = [body["event_type"] for body in bodies]
    assert kinds == ["order_placed", "order_shipped"]  # v2026-01-11's platform: its shape
    assert bodies[1]["order"]["id"] == bodies[1]["id"] == order["id"]
    assert bodies[1]["checkout_id"] == order["checkout_id"] and "event_id" in bodies[1]


def test_orders_take_events_and_adjustments_checked_against_the_schema(
    testing_shop: TestClient, agent_token: str
) -> None:
    old = UcpClient(testing_shop, agent_token, OLD)
    order = completed_order(old)
    path = f"/orders/{order['id']}"
    line = order["line_items"][0]
    now = datetime.now(UTC).isoformat()
    event = {
        "id": "evt_1",
        "occurred_at": now,
        "type": "shipped",
        "line_items": [{"id": line["id"], "quantity": line["quantity"]["total"]}],
        "tracking_number": "TRACK123",
    }
    refund = {"id": "adj_1", "type": "refund", "occurred_at": now, "status": "pending"}
    update = {**order, "fulfillment": {**order["fulfillment"], "events": [event]}}
    update["adjustments"] = [{**refund, "amount": 500}]
    updated = old.put(path, update)
    assert updated.status_code == 200, updated.text
    assert updated.json()["fulfillment"]["events"][0]["tracking_number"] == "TRACK123"
    assert old.get(path).json()["adjustments"][0]["amount"] == 500
    bad_status = {**order, "adjustments": [{**refund, "status": "INVALID"}]}
    assert old.put(path, bad_status).status_code == 422
    not_a_list = {**order, "adjustments": {"id": "adj_1"}}
    response = old.put(path, not_a_list)
    assert response.status_code == 422 and response.json()["path"] == "$.adjustments"


def test_without_a_secret_there_is_no_testing_surface(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    with serve(merchant, agents, PROFILES) as http:
        old = UcpClient(http, agent_token, OLD)
        session = ready(old)
        token = {"type": "token", "token": "success_token"}
        refused = old.post(f"/checkout-sessions/{session}/complete", mock(token))
        assert refused.status_code == 400
        assert refused.json()["messages"][0]["path"] == "$.payment_data.handler_id"
        # A credential the schema refuses is not repeated back.
        bad = mock({"type": "card", "number": "4111111111111111"})
        refused = old.post(f"/checkout-sessions/{session}/complete", bad)
        assert refused.status_code == 400 and "4111" not in refused.text, refused.text
        assert http.post("/testing/simulate-shipping/ord_x").status_code == 404
        assert old.put("/orders/ord_x", {}).status_code == 405


@pytest.mark.postgres
def test_saved_addresses_are_offered_reused_and_remembered(
    testing_shop: TestClient, agent_token: str, merchant: Merchant
) -> None:
    book = AddressBook(merchant.records.engine)  # the table the business reads
    book.seed(seed_rows(FLOWER_SHOP))
    book.seed(seed_rows(FLOWER_SHOP))  # seeding again keeps what is there
    old = UcpClient(testing_shop, agent_token, OLD)
    john = {"first_name": "John", "email": "John.Doe@example.com"}
    body = create_body(in_stock()[0], buyer=john, fulfillment={"methods": [{"type": "shipping"}]})
    created = old.post("/checkout-sessions", body)
    assert created.status_code == 201, created.text
    session = created.json()
    [method] = session["fulfillment"]["methods"]
    assert [d["id"] for d in method["destinations"]] == ["addr_1", "addr_2"]
    assert "selected_destination_id" not in method and session["status"] == "incomplete"
    update = {
        "id": session["id"],
        "currency": "USD",
        "line_items": [
            {"id": line["id"], "item": {"id": line["item"]["id"]}, "quantity": 1}
            for line in session["line_items"]
        ],
        "payment": {},
        "fulfillment": {"methods": [{"type": "shipping", "selected_destination_id": "addr_2"}]},
    }
    chosen = old.put(f"/checkout-sessions/{session['id']}", update).json()
    [method] = chosen["fulfillment"]["methods"]
    assert method["selected_destination_id"] == "addr_2"
    picked = next(d for d in method["destinations"] if d["id"] == "addr_2")
    assert (picked["street_address"], picked["postal_code"]) == ("456 Oak Ave", "10012")
    assert method["groups"][0]["options"]  # shipping is priced for the saved address
    # A new buyer's address is saved with an id; the same place keeps it next time.
    newcomer = {"email": "new@example.com"}
    place = {"street_address": "1 Elm St", "postal_code": "10001", "address_country": "US"}
    ship = {"methods": [{"type": "shipping", "destinations": [place]}]}
    first = old.post(
        "/checkout-sessions", create_body(in_stock()[0], buyer=newcomer, fulfillment=ship)
    )
    saved_id = first.json()["fulfillment"]["methods"][0]["destinations"][0]["id"]
    assert saved_id.startswith("addr_")
    spaced = {**place, "street_address": "1  ELM st"}
    again = create_body(
        in_stock()[0],
        buyer=newcomer,
        fulfillment={"methods": [{"type": "shipping", "destinations": [spaced]}]},
    )
    second = old.post("/checkout-sessions", again).json()
    assert second["fulfillment"]["methods"][0]["destinations"][0]["id"] == saved_id
    # A stranger's email gets nothing.
    stranger = create_body(
        in_stock()[0],
        buyer={"email": "nobody@example.com"},
        fulfillment={"methods": [{"type": "shipping"}]},
    )
    assert (
        "destinations"
        not in old.post("/checkout-sessions", stranger).json()["fulfillment"]["methods"][0]
    )


def test_the_address_book_reads_the_shop_folder_and_names_a_bad_row(tmp_path: Path) -> None:
    rows = seed_rows(FLOWER_SHOP)
    assert [(i, email) for i, email, _ in rows] == [
        ("addr_1", "john.doe@example.com"),
        ("addr_2", "john.doe@example.com"),
        ("addr_3", "jane.smith@example.com"),
    ]
    assert rows[0][2].city == "Springfield" and rows[0][2].name == "John Doe"
    (tmp_path / "customers.csv").write_text("id,name,email\nc1,A,a@example.com\n")
    (tmp_path / "addresses.csv").write_text(
        "id,customer_id,street_address,city,state,postal_code,country\na1,c9,x,y,z,1,US\n"
    )
    with pytest.raises(ConfigurationError, match=r"addresses\.csv:2: an unknown customer"):
        seed_rows(tmp_path)


def test_the_test_handler_serves_a_platform_at_the_current_release_too(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    mock = {
        "id": "platform_mock",
        "version": "2026-04-08",
        "spec": "https://ucp.dev/specification/payment-handler-guide",
        "schema": "https://platform.test/schemas/mock.json",
        "available_instruments": [{"type": "card"}],
    }
    handlers = {**PAYPAL_HANDLERS, HANDLER_NAME: [mock]}
    profiles = KnownProfiles({PLATFORM: platform_profile(handlers=handlers)})
    with serve(merchant, agents, profiles, policy=UcpPolicy(simulation_secret=SECRET)) as http:
        client = UcpClient(http, agent_token)
        session = create(client, lines(in_stock()[0]), fulfillment=SHIPPING)
        paying = {
            "payment": {
                "instruments": [
                    {
                        "id": "instr_1",
                        "handler_id": HANDLER_ID,
                        "type": "card",
                        "selected": True,
                        "credential": {"type": "token", "token": "success_token"},
                    }
                ]
            }
        }
        done = client.post(f"/checkout-sessions/{session['id']}/complete", paying)
        assert done.status_code == 200 and done.json()["status"] == "completed", done.text
