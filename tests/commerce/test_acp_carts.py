"""ACP carts (rfc.cart): estimates before checkout, full replacement, canceled means gone."""

from __future__ import annotations

from typing import Any

from cartagent.money import Money, unit_tax
from tests.commerce.conftest import AcpClient, in_stock, out_of_stock
from tests.commerce.test_acp_checkout import conforms, price


def _cart(acp: AcpClient, body: dict[str, Any]) -> dict[str, Any]:
    response = acp.post("/carts", body)
    assert response.status_code == 201, response.text
    cart: dict[str, Any] = response.json()
    conforms("Cart", cart)
    return cart


def _put(acp: AcpClient, cart_id: str, body: dict[str, Any]) -> Any:
    headers = acp.headers(post=True)
    return acp.http.put(f"/carts/{cart_id}", json=body, headers=headers)


def test_a_cart_estimates_items_and_tax_and_leaves_shipping_to_checkout(acp: AcpClient) -> None:
    item = in_stock()[0]
    cart = _cart(acp, {"line_items": [{"id": item, "quantity": 2}], "buyer": {"email": "a@b.co"}})
    unit = Money(price(item), "USD")
    totals = {t["type"]: t["amount"] for t in cart["totals"]}
    assert totals["subtotal"] == (unit * 2).minor_units
    assert totals["tax"] == (unit_tax(unit, "8") * 2).minor_units
    assert "fulfillment" not in totals
    assert cart["id"].startswith("cart_") and cart["buyer"]["email"] == "a@b.co"
    assert any(m["type"] == "info" and "Shipping" in m["content"] for m in cart["messages"])
    assert acp.get(f"/carts/{cart['id']}").json() == cart


def test_put_replaces_the_whole_cart_and_keeps_unavailable_items_with_a_message(
    acp: AcpClient,
) -> None:
    first, second = in_stock(2)
    cart = _cart(acp, {"line_items": [{"id": first}], "buyer": {"email": "a@b.co"}})
    replaced = _put(acp, cart["id"], {"line_items": [{"id": second}, {"id": out_of_stock()}]})
    assert replaced.status_code == 200, replaced.text
    body = replaced.json()
    conforms("Cart", body)
    assert [li["item"]["id"] for li in body["line_items"]] == [second, out_of_stock()]
    assert "buyer" not in body  # a full replacement: what is not sent is gone
    errors = [m for m in body["messages"] if m["type"] == "error"]
    assert [(m["code"], m["param"]) for m in errors] == [("out_of_stock", "$.line_items[1]")]


def test_a_canceled_cart_is_answered_once_then_gone(acp: AcpClient) -> None:
    cart = _cart(acp, {"line_items": [{"id": in_stock()[0]}]})
    canceled = acp.post(f"/carts/{cart['id']}/cancel", {})
    assert canceled.status_code == 200 and canceled.json()["id"] == cart["id"]
    assert acp.get(f"/carts/{cart['id']}").status_code == 404
    assert _put(acp, cart["id"], {"line_items": [{"id": in_stock()[0]}]}).status_code == 404
    assert acp.post(f"/carts/{cart['id']}/cancel", {}).status_code == 404


def test_carts_and_checkout_sessions_do_not_mix(acp: AcpClient, other_acp: AcpClient) -> None:
    cart = _cart(acp, {"line_items": [{"id": in_stock()[0]}]})
    assert acp.get(f"/checkout_sessions/{cart['id']}").status_code == 404
    assert acp.post(f"/checkout_sessions/{cart['id']}/complete", {"payment_data": {
        "handler_id": "paypal", "instrument": {"type": "paypal", "credential": {
            "type": "paypal_payment_token", "token": "BA-1"}}}}).status_code == 404  # fmt: skip
    assert other_acp.get(f"/carts/{cart['id']}").status_code == 404


def test_cart_writes_are_idempotent_and_validated(acp: AcpClient) -> None:
    body = {"line_items": [{"id": in_stock()[0]}]}
    first = acp.post("/carts", body, headers={"Idempotency-Key": "cart-1"})
    again = acp.post("/carts", body, headers={"Idempotency-Key": "cart-1"})
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()
    no_key = acp.http.put(
        f"/carts/{first.json()['id']}", json=body, headers=acp.headers(post=False)
    )
    assert (no_key.status_code, no_key.json()["code"]) == (400, "idempotency_key_required")
    empty = acp.post("/carts", {"line_items": []})
    assert (empty.status_code, empty.json()["param"]) == (400, "$.line_items")
    unknown = acp.post("/carts", {"line_items": [{"id": "nope"}]})
    assert (unknown.status_code, unknown.json()["code"]) == (400, "not_found")


def test_discovery_lists_carts(acp: AcpClient) -> None:
    services = acp.http.get("/.well-known/acp.json").json()["capabilities"]["services"]
    assert services == ["checkout", "carts"]
