"""ACP's wire shapes: request bodies into :class:`~cartagent.commerce.merchant.Changes`, a
:class:`~cartagent.commerce.checkout.Checkout` into a ``CheckoutSession``. Amounts are integers
in minor units and currencies lower case, as the spec says."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...addresses import Address, Contact
from ...errors import CheckoutError
from ...money import Money
from ...protocols.acp.schema import API_VERSION, json_path
from ...protocols.acp.shapes import fulfillment_details
from ...protocols.payment_token import is_payment_token
from ..checkout import Bill, Changes, Checkout, LineCost, Problem

__all__ = [
    "PAYPAL_HANDLER_ID",
    "cart",
    "changes_from",
    "discovery",
    "payment_handler",
    "payment_token",
    "price_warnings",
    "session",
]

PAYPAL_HANDLER_ID = "paypal"
PAYMENT_TOKEN_TYPES = ("paypal_payment_token", "vault_token")
ERROR_CODES = frozenset({"missing", "invalid", "out_of_stock", "payment_declined", "not_found"})
_PARAMS: dict[str, str] = {
    "lines": "line_items",
    "items": "line_items",
    "address": "fulfillment_details.address",
    "shipping_option": "selected_fulfillment_options",
    # The merchant's "the payment failed" (a decline): ACP's only instrument is this token.
    "payment": "payment_data.instrument.credential.token",
}
_STATUS = {
    "in_progress": "complete_in_progress",
    "completed": "completed",
    "canceled": "canceled",
}


def acp_param(param: tuple[str | int, ...]) -> str:
    """A neutral path (``("lines", 0)``) as the JSONPath of the ACP field it is about."""
    if not param:
        return "$"
    head, *rest = param
    mapped = _PARAMS.get(str(head), str(head))
    return json_path((*mapped.split("."), *rest))


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _address(data: dict[str, Any]) -> Address:
    return Address(
        name=data["name"],
        line_one=data["line_one"],
        line_two=data.get("line_two", ""),
        city=data["city"],
        state=data["state"],
        country=data["country"].upper(),
        postal_code=data["postal_code"],
    )


def changes_from(body: dict[str, Any]) -> Changes:
    """The changes a (schema-valid) create or update body asks for."""
    items = None
    if "line_items" in body:
        items = [(item["id"], item.get("quantity", 1)) for item in body["line_items"]]
    buyer = None
    if "buyer" in body:
        buyer = {key: value for key, value in body["buyer"].items() if isinstance(value, str)}
    contact = address = None
    if "fulfillment_details" in body:
        details = body["fulfillment_details"]
        contact = Contact(
            name=details.get("name", ""),
            email=details.get("email", ""),
            phone=details.get("phone_number", ""),
        )
        if "address" in details:
            address = _address(details["address"])
    shipping = None
    for index, chosen in enumerate(body.get("selected_fulfillment_options", [])):
        if chosen["type"] != "shipping":
            raise CheckoutError(
                f"this store only ships; there is no {chosen['type']} fulfillment",
                code="invalid",
                param=("selected_fulfillment_options", index, "type"),
            )
        shipping = chosen["option_id"]
    return Changes(
        items=items,
        buyer=buyer,
        contact=contact,
        address=address,
        shipping_option=shipping,
        metadata=body.get("metadata"),
    )


def payment_token(body: dict[str, Any]) -> str:
    """The PayPal payment token in a (schema-valid) complete body's ``payment_data``."""
    data = body["payment_data"]
    if "handler_id" not in data:
        raise CheckoutError(
            "this store takes payment through its PayPal handler, not by purchase order",
            code="unsupported",
            param=("payment_data", "handler_id"),
        )
    if data["handler_id"] != PAYPAL_HANDLER_ID:
        raise CheckoutError(
            f"unknown payment handler {data['handler_id']!r}; use {PAYPAL_HANDLER_ID!r}",
            code="invalid",
            param=("payment_data", "handler_id"),
        )
    credential = data["instrument"]["credential"]
    if credential["type"] not in PAYMENT_TOKEN_TYPES:
        raise CheckoutError(
            f"the PayPal handler takes a credential of type {' or '.join(PAYMENT_TOKEN_TYPES)}",
            code="invalid",
            param=("payment_data", "instrument", "credential", "type"),
        )
    token: str = credential["token"]
    if not is_payment_token(token):
        raise CheckoutError(
            "the payment token must be 1 to 255 letters, digits, '-' or '_'",
            code="invalid",
            param=("payment_data", "instrument", "credential", "token"),
        )
    return token


def payment_handler(environment: str) -> dict[str, Any]:
    """The PayPal handler this merchant offers (ACP ``PaymentHandler``)."""
    return {
        "id": PAYPAL_HANDLER_ID,
        "name": "com.paypal.checkout",
        "display_name": "PayPal",
        "version": API_VERSION,
        "spec": "https://developer.paypal.com/docs/api/orders/v2/",
        "requires_delegate_payment": False,
        "requires_pci_compliance": False,
        "psp": "paypal",
        "config_schema": "https://developer.paypal.com/docs/api/orders/v2/#orders_create",
        "instrument_schemas": ["https://developer.paypal.com/docs/api/orders/v2/#definition-token"],
        "config": {
            "environment": environment,
            "intent": "CAPTURE",
            "credential_types": list(PAYMENT_TOKEN_TYPES),
        },
    }


def _total(kind: str, text: str, money: Money) -> dict[str, Any]:
    return {"type": kind, "display_text": text, "amount": money.minor_units}


def _message(problem: Problem) -> dict[str, Any]:
    code = problem.code if problem.code in ERROR_CODES else "invalid"
    return {
        "type": "error",
        "code": code,
        "severity": "high" if problem.severity == "error" else "medium",
        "resolution": "requires_buyer_input" if code == "missing" else "recoverable",
        "param": acp_param(problem.param),
        "content_type": "plain",
        "content": problem.message,
    }


def _line_item(cost: LineCost) -> dict[str, Any]:
    offer = cost.offer
    unit = cost.unit_price.minor_units
    item: dict[str, Any] = {"id": cost.line.item_id, "unit_amount": unit}
    line: dict[str, Any] = {"id": cost.line.id, "item": item, "quantity": cost.line.quantity}
    if offer is not None:
        item["name"] = offer.name
        line |= {
            "name": offer.name,
            "product_id": offer.product_id,
            "variant_id": offer.item_id,
            "sku": offer.item_id,
            "availability_status": "in_stock" if offer.available else "out_of_stock",
            "variant_options": [
                {"name": name, "value": value} for name, value in offer.options.items()
            ],
        }
        if offer.category:
            line["category"] = offer.category
    line["unit_amount"] = unit
    line["totals"] = [
        _total("items_base_amount", "Items", cost.base),
        *([_total("discount", "Discount", cost.discount)] if cost.discount is not None else []),
        _total("subtotal", "Subtotal", cost.base),
        _total("tax", "Tax", cost.tax),
        _total("total", "Total", cost.total),
    ]
    return line


def session(
    checkout: Checkout,
    bill: Bill,
    *,
    base_url: str,
    environment: str,
    warnings: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``checkout`` as ACP's ``CheckoutSession`` (with ``order`` once completed)."""
    status = _STATUS.get(checkout.status)
    if status is None:
        status = "ready_for_payment" if bill.payable else "not_ready_for_payment"
    body: dict[str, Any] = {
        "id": checkout.id,
        "protocol": {"version": API_VERSION},
        "capabilities": {"payment": {"handlers": [payment_handler(environment)]}},
        "status": status,
        "currency": checkout.currency.lower(),
        "line_items": [_line_item(cost) for cost in bill.lines],
    }
    if checkout.buyer.get("email"):
        body["buyer"] = dict(checkout.buyer)
    details = fulfillment_details(checkout.contact, checkout.address)
    if details:
        body["fulfillment_details"] = details
    body["fulfillment_options"] = [
        {
            "type": "shipping",
            "id": option.id,
            "title": option.title,
            "earliest_delivery_time": _iso(option.earliest),
            "latest_delivery_time": _iso(option.latest),
            "totals": [_total("fulfillment", "Shipping", option.cost)],
        }
        for option in bill.options
    ]
    if bill.options:
        body["selected_fulfillment_options"] = [
            {
                "type": "shipping",
                "option_id": checkout.shipping_option or bill.options[0].id,
                "item_ids": [cost.line.id for cost in bill.lines],
            }
        ]
    body["totals"] = [
        _total("items_base_amount", "Items", bill.items),
        *([_total("discount", "Discount", bill.discount)] if bill.discounts else []),
        _total("subtotal", "Subtotal", bill.items),
        _total("fulfillment", "Shipping", bill.shipping),
        _total("tax", "Tax", bill.tax),
        _total("total", "Total", bill.total),
    ]
    messages = [] if checkout.status != "open" else [_message(p) for p in bill.problems]
    body["messages"] = messages + list(warnings or [])
    body["links"] = []
    body["created_at"] = _iso(checkout.created_at)
    body["updated_at"] = _iso(checkout.updated_at)
    body["expires_at"] = _iso(checkout.expires_at)
    if checkout.metadata:
        body["metadata"] = checkout.metadata
    if checkout.status == "completed" and checkout.order_id is not None:
        body["order"] = {
            "type": "order",
            "id": checkout.order_id,
            "checkout_session_id": checkout.id,
            "order_number": checkout.order_number,
            "permalink_url": f"{base_url.rstrip('/')}/orders/{checkout.order_id}",
            "status": "confirmed",
            "totals": body["totals"],
        }
    return body


def cart(
    checkout: Checkout, bill: Bill, warnings: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``checkout`` (an ACP cart) as ACP's ``Cart``: estimates only, shipping left to checkout."""
    body: dict[str, Any] = {
        "id": checkout.id,
        "line_items": [_line_item(cost) for cost in bill.lines],
        "currency": checkout.currency.lower(),
    }
    if checkout.buyer.get("email"):
        body["buyer"] = dict(checkout.buyer)
    body["totals"] = [
        _total("items_base_amount", "Items", bill.items),
        _total("subtotal", "Subtotal", bill.items),
        _total("tax", "Estimated tax", bill.tax),
        _total("total", "Estimated total before shipping", bill.items + bill.tax),
    ]
    problems = [p for p in bill.problems if p.param[:1] == ("lines",)]
    body["messages"] = [
        *(_message(problem) for problem in problems),
        {
            "type": "info",
            "content_type": "plain",
            "content": "Shipping is priced at checkout, once there is an address.",
        },
        *(warnings or []),
    ]
    body["expires_at"] = _iso(checkout.expires_at)
    return body


def price_warnings(body: dict[str, Any], bill: Bill) -> list[dict[str, Any]]:
    """``price_change`` warnings where the agent's ``unit_amount`` is not today's price."""
    prices = {cost.line.item_id: cost.unit_price.minor_units for cost in bill.lines}
    out = []
    for index, item in enumerate(body.get("line_items", [])):
        quoted = item.get("unit_amount")
        now = prices.get(item["id"])
        if quoted is not None and now is not None and quoted != now:
            out.append(
                {
                    "type": "warning",
                    "code": "price_change",
                    "severity": "medium",
                    "resolution": "requires_buyer_review",
                    "param": json_path(("line_items", index, "unit_amount")),
                    "content_type": "plain",
                    "content": f"item {item['id']} now costs {now} (minor units), not {quoted}",
                }
            )
    return out


def discovery(base_url: str, *, mcp: bool = False) -> dict[str, Any]:
    """The ``/.well-known/acp.json`` document (``mcp``: the MCP binding is served too)."""
    return {
        "protocol": {
            "name": "acp",
            "version": API_VERSION,
            "supported_versions": [API_VERSION],
        },
        "api_base_url": base_url.rstrip("/"),
        "transports": ["rest", "mcp"] if mcp else ["rest"],
        "capabilities": {"services": ["checkout", "carts"], "supported_currencies": ["usd"]},
    }
