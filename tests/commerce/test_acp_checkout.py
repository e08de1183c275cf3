"""ACP checkout sessions end to end: the merchant in-process, PayPal the in-process sandbox."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from cartagent.commerce import Agents, Merchant
from cartagent.money import Money, unit_tax
from cartagent.paypal import PayPalClient
from cartagent.protocols.acp.schema import definitions
from tests.commerce.conftest import ADDRESS, AcpClient, in_stock, out_of_stock, tau_products

PAYMENT = {
    "handler_id": "paypal",
    "instrument": {
        "type": "paypal",
        "credential": {"type": "paypal_payment_token", "token": "BA-TEST-TOKEN-1"},
    },
}


def conforms(name: str, body: Any) -> None:
    """``body`` is valid against the shipped ACP schema's ``$defs[name]``."""
    schema = {"$defs": definitions(), "$ref": f"#/$defs/{name}"}
    errors = sorted(
        Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(body),
        key=str,
    )
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def totals(session: dict[str, Any]) -> dict[str, int]:
    return {total["type"]: total["amount"] for total in session["totals"]}


def create(acp: AcpClient, items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = acp.post(
        "/checkout_sessions",
        {"line_items": items, "currency": "usd", "capabilities": {}, **extra},
    )
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    conforms("CheckoutSession", session)
    return session


def ready(acp: AcpClient, quantity: int = 1) -> dict[str, Any]:
    item = in_stock()[0]
    return create(
        acp,
        [{"id": item, "quantity": quantity}],
        fulfillment_details={"name": "Ada", "email": "ada@example.com", "address": ADDRESS},
    )


def price(item_id: str) -> Decimal:
    return next(v.price for p in tau_products() for v in p.variants if v.id == item_id)


def test_a_session_without_an_address_is_not_ready_and_says_why(acp: AcpClient) -> None:
    session = create(acp, [{"id": in_stock()[0]}])
    assert session["status"] == "not_ready_for_payment"
    assert session["fulfillment_options"] == []
    [message] = session["messages"]
    assert (message["code"], message["param"]) == ("missing", "$.fulfillment_details.address")


def test_totals_are_minor_units_with_tax_per_unit_and_shipping(acp: AcpClient) -> None:
    session = ready(acp, quantity=3)
    item = session["line_items"][0]["item"]["id"]
    unit = Money(price(item), "USD")
    tax = unit_tax(unit, "8") * 3
    shipping = Money(Decimal(0) if unit.amount * 3 >= 50 else Decimal("5.99"), "USD")
    assert session["status"] == "ready_for_payment"
    assert totals(session) == {
        "items_base_amount": (unit * 3).minor_units,
        "subtotal": (unit * 3).minor_units,
        "fulfillment": shipping.minor_units,
        "tax": tax.minor_units,
        "total": (unit * 3 + tax + shipping).minor_units,
    }
    [line] = session["line_items"]
    assert line["quantity"] == 3 and line["unit_amount"] == unit.minor_units
    assert session["selected_fulfillment_options"][0]["option_id"] == "standard"


def test_repeated_items_add_up_and_the_update_replaces_the_lines(acp: AcpClient) -> None:
    first, second = in_stock(2)
    session = create(acp, [{"id": first}, {"id": first, "quantity": 2}])
    assert [(li["item"]["id"], li["quantity"]) for li in session["line_items"]] == [(first, 3)]
    response = acp.post(f"/checkout_sessions/{session['id']}", {"line_items": [{"id": second}]})
    assert response.status_code == 200, response.text
    conforms("CheckoutSession", response.json())
    assert [li["item"]["id"] for li in response.json()["line_items"]] == [second]


def test_an_unknown_item_is_refused_with_its_path(acp: AcpClient) -> None:
    response = acp.post(
        "/checkout_sessions",
        {
            "line_items": [{"id": in_stock()[0]}, {"id": "nope"}],
            "currency": "usd",
            "capabilities": {},
        },
    )
    assert response.status_code == 400
    conforms("Error", response.json())
    assert response.json()["code"] == "not_found"
    assert response.json()["param"] == "$.line_items[1].id"


def test_schema_violations_name_the_field(acp: AcpClient) -> None:
    response = acp.post(
        "/checkout_sessions",
        {
            "line_items": [{"id": in_stock()[0], "quantity": 0}],
            "currency": "usd",
            "capabilities": {},
        },
    )
    assert response.status_code == 400
    assert response.json()["param"] == "$.line_items[0].quantity"
    missing = acp.post("/checkout_sessions", {"line_items": [{"id": "x"}], "currency": "usd"})
    assert (missing.json()["code"], missing.json()["param"]) == ("missing", "$.capabilities")


def test_another_currency_is_refused(acp: AcpClient) -> None:
    response = acp.post(
        "/checkout_sessions",
        {"line_items": [{"id": in_stock()[0]}], "currency": "eur", "capabilities": {}},
    )
    assert (response.status_code, response.json()["param"]) == (400, "$.currency")


def test_an_out_of_stock_variant_blocks_payment(acp: AcpClient) -> None:
    session = create(
        acp,
        [{"id": out_of_stock()}],
        fulfillment_details={"address": ADDRESS},
    )
    assert session["status"] == "not_ready_for_payment"
    assert session["line_items"][0]["availability_status"] == "out_of_stock"
    assert [m["code"] for m in session["messages"]] == ["out_of_stock"]
    response = acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": PAYMENT})
    assert (response.status_code, response.json()["code"]) == (400, "out_of_stock")


def test_a_stale_price_is_answered_with_a_warning(acp: AcpClient) -> None:
    item = in_stock()[0]
    now = Money(price(item), "USD").minor_units
    session = create(acp, [{"id": item, "unit_amount": now + 100}])
    warning = next(m for m in session["messages"] if m["type"] == "warning")
    assert (warning["code"], warning["param"]) == ("price_change", "$.line_items[0].unit_amount")
    assert session["line_items"][0]["unit_amount"] == now


def test_choosing_an_option_that_is_not_offered_is_refused(acp: AcpClient) -> None:
    session = ready(acp)
    response = acp.post(
        f"/checkout_sessions/{session['id']}",
        {
            "selected_fulfillment_options": [
                {"type": "shipping", "option_id": "teleport", "item_ids": []}
            ]
        },
    )
    assert (response.status_code, response.json()["param"]) == (
        400,
        "$.selected_fulfillment_options",
    )


def owner(acp: AcpClient, agents: Agents) -> str:
    agent = agents.by_token(acp.token)
    assert agent is not None
    return agent.name


def test_complete_pays_through_paypal_exactly_once(
    acp: AcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    session = ready(acp, quantity=2)
    key = {"Idempotency-Key": "complete-1"}
    path = f"/checkout_sessions/{session['id']}/complete"
    body = {"payment_data": PAYMENT, "buyer": {"email": "ada@example.com", "first_name": "Ada"}}
    done = acp.post(path, body, headers=key)
    assert done.status_code == 200, done.text
    completed = done.json()
    conforms("CheckoutSession", completed)
    assert completed["status"] == "completed" and completed["messages"] == []
    assert completed["order"]["checkout_session_id"] == session["id"]
    assert completed["buyer"]["email"] == "ada@example.com"

    replay = acp.post(path, body, headers=key)
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == completed
    again = acp.post(path, body)  # a new key: the session is already completed
    assert again.status_code == 409 and again.json()["code"] == "invalid_state"

    checkout = merchant.get(owner(acp, agents), session["id"])
    assert checkout.payment.paypal_order_id is not None
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id)
    assert order["status"] == "COMPLETED"
    captures = [c for unit in order["purchase_units"] for c in unit["payments"]["captures"]]
    assert len(captures) == 1
    assert Money.of(captures[0]["amount"]["value"], "USD").minor_units == totals(completed)["total"]
    unit = order["purchase_units"][0]
    assert unit["custom_id"] == session["id"] and unit["items"][0]["quantity"] == "2"


def test_a_whole_number_written_as_a_float_is_a_quantity(acp: AcpClient) -> None:
    session = create(
        acp,
        [{"id": in_stock()[0], "quantity": 2.0}],
        fulfillment_details={"address": ADDRESS},
    )
    assert session["line_items"][0]["quantity"] == 2 and isinstance(
        session["line_items"][0]["quantity"], int
    )
    done = acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": PAYMENT})
    assert done.status_code == 200 and done.json()["status"] == "completed"
