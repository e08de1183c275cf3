"""UCP's checkout shapes: request bodies into :class:`~cartagent.commerce.merchant.Changes`, a
:class:`~cartagent.commerce.checkout.Checkout` into ``shopping/checkout.json`` (composed with
the fulfillment extension, ``shopping/fulfillment.json``, when it is negotiated).

Amounts are integers in minor units, currencies ISO 4217 upper case. Fulfillment is the
extension's simplest conforming subset: one ``shipping`` method covering every line, one
destination (the checkout's address, its id derived from its content so an echoed selection
still matches), one group (``package_1``) whose options are the store's shipping options.

On update the release contradicts itself: checkout.md calls PUT a full replacement ("clients
must include all previously set fields"), the OpenAPI operation says an omitted optional field
leaves the session unchanged. Both agree on what is sent; for what is omitted the OpenAPI rule
is followed (``line_items`` is required on update anyway).

Business outcomes are answered 200 with ``messages``. Where the release leaves the shape open,
a rejected change to an existing session is answered with the session as it stands and the
reason as an error message (the shape checkout.md's eligibility example uses at completion);
a create that cannot make a session, or a session that does not exist, is
``types/error_response.json`` (``ucp.status: "error"``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...addresses import Address
from ...errors import CheckoutError
from ...money import Money
from ...protocols.ucp.schema import json_path
from ...protocols.ucp.shapes import GROUP_ID, METHOD_ID, postal_address
from ..checkout import Bill, Changes, Checkout, LineCost, Problem

__all__ = [
    "OFFERED_KEY",
    "STOREFRONT",
    "Site",
    "changes_from",
    "checkout_json",
    "destination_id",
    "error_message",
    "error_response",
    "item_json",
    "offered_destinations",
    "totals",
    "ucp_path",
]

STOREFRONT = "/shop"
"""Where the merchant's own buyer pages are (:mod:`~cartagent.commerce.storefront`), the
default site of ``continue_url`` and order permalinks."""
OFFERED_KEY = "ucp.offered_destinations"
"""The checkout metadata key holding the destinations the business offered (saved addresses)."""
MAX_TEXT = 256
MAX_ID = 128
MAX_BUYER_FIELDS = 20
MAX_DESTINATIONS = 10

_STATUS = {
    "in_progress": "complete_in_progress",
    "completed": "completed",
    "canceled": "canceled",
}
# Neutral paths (checkout.py, merchant.py) whose head is no UCP field.
_PATHS: dict[str, tuple[str | int, ...]] = {
    "address": ("fulfillment", "methods", 0, "selected_destination_id"),
    "shipping_option": ("fulfillment", "methods", 0, "groups", 0, "selected_option_id"),
    "discount_codes": ("discounts", "codes"),
}
MAX_CODES = 10
CONSENTS = ("analytics", "preferences", "marketing", "sale_of_data")
# Neutral codes renamed to UCP's standard ones (checkout.md, "Standard Errors").
_CODES = {"payment_declined": "payment_failed"}


@dataclass(frozen=True)
class Site:
    """Where things are: the REST endpoint, the buyer-facing site and the legal links."""

    endpoint: str
    storefront: str
    links: tuple[tuple[str, str], ...] = ()

    def continue_url(self, checkout_id: str) -> str:
        return f"{self.storefront.rstrip('/')}/checkout-sessions/{checkout_id}"

    def order_url(self, order_id: str) -> str:
        return f"{self.storefront.rstrip('/')}/orders/{order_id}"


def ucp_path(param: tuple[str | int, ...]) -> str:
    """A neutral path (``("items", 1, "id")``) or a UCP one as the JSONPath of the UCP field."""
    if not param:
        return "$"
    head, *rest = param
    if head in ("items", "lines"):
        if len(rest) >= 2 and rest[1] == "id":
            rest[1:2] = ["item", "id"]
        return json_path(("line_items", *rest))
    if isinstance(head, str) and head in _PATHS:
        return json_path((*_PATHS[head], *rest))
    if param == ("payment",):  # the merchant's "the payment failed"
        return "$.payment.instruments"
    return json_path(param)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _text(value: Any, path: tuple[str | int, ...], *, required: bool = False) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if required and not text:
        raise CheckoutError(f"{json_path(path)} is required", code="missing", param=path)
    if len(text) > MAX_TEXT:
        raise CheckoutError(
            f"{json_path(path)} is longer than {MAX_TEXT} characters", code="invalid", param=path
        )
    return text


# ---------------------------------------------------------------- requests


def buyer_from(data: dict[str, Any]) -> dict[str, str]:
    if len(data) > MAX_BUYER_FIELDS:
        raise CheckoutError(
            f"buyer has more than {MAX_BUYER_FIELDS} fields", code="invalid", param=("buyer",)
        )
    return {
        key: _text(value, ("buyer", key))
        for key, value in data.items()
        if isinstance(value, str) and len(key) <= 64
    }


def consent_from(data: dict[str, Any]) -> dict[str, bool]:
    """The buyer consent extension's ``buyer.consent``: the purposes it names, true or false."""
    consent = data.get("consent")
    if not isinstance(consent, dict):
        return {}
    return {name: consent[name] for name in CONSENTS if isinstance(consent.get(name), bool)}


def codes_from(data: dict[str, Any]) -> tuple[str, ...]:
    """The discount extension's ``discounts.codes``: up to :data:`MAX_CODES`, each once
    (codes are case-insensitive), in the order given."""
    codes = data.get("codes") or []
    if len(codes) > MAX_CODES:
        raise CheckoutError(
            f"send at most {MAX_CODES} discount codes", code="invalid", param=("discounts", "codes")
        )
    seen: dict[str, str] = {}
    for index, code in enumerate(codes):
        text = _text(code, ("discounts", "codes", index))[:64]
        if text and text.upper() not in seen:
            seen[text.upper()] = text
    return tuple(seen.values())


def _full_name(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def destination_id(address: Address) -> str:
    """A shipping destination's id: the platform's, else derived from its content, so the same
    address keeps it."""
    if address.id:
        return address.id
    digest = hashlib.sha256(repr(sorted(postal_address(address).items())).encode()).hexdigest()
    return f"dest_{digest[:12]}"


def _address(data: dict[str, Any], buyer_name: str, path: tuple[str | int, ...]) -> Address:
    """A destination as far as it is given: every field is optional (UCP's postal address);
    what is missing is said on the session (the bill's ``incomplete`` warning)."""

    def field(name: str) -> str:
        return _text(data.get(name), (*path, name))

    country = field("address_country").upper()
    if country and (len(country) != 2 or not country.isalpha()):
        raise CheckoutError(
            "address_country must be an ISO 3166-1 alpha-2 code such as US",
            code="invalid",
            param=(*path, "address_country"),
        )
    return Address(
        name=_full_name(field("first_name"), field("last_name"))
        or field("full_name")
        or buyer_name,
        line_one=field("street_address"),
        line_two=field("extended_address"),
        city=field("address_locality"),
        state=field("address_region"),
        country=country,
        postal_code=field("postal_code"),
        id=field("id")[:MAX_ID],
    )


def offered_destinations(checkout: Checkout) -> list[Address]:
    """The destinations the business offered the session (a buyer's saved addresses), by the
    session's metadata (:data:`OFFERED_KEY`)."""
    return [Address(**entry) for entry in checkout.metadata.get(OFFERED_KEY, [])]


def _fulfillment(
    data: dict[str, Any],
    buyer_name: str,
    current: Address | None,
    offered: Sequence[Address] = (),
) -> tuple[Address | None, str | None]:
    """The address and shipping option a request's ``fulfillment`` chooses (a destination the
    business ``offered`` may be chosen by its id alone)."""
    methods = data.get("methods") or []
    if len(methods) > 1:
        raise CheckoutError(
            "this store ships every line through one shipping method",
            code="invalid",
            param=("fulfillment", "methods", 1),
        )
    if not methods:
        return None, None
    method = methods[0]
    base: tuple[str | int, ...] = ("fulfillment", "methods", 0)
    if method.get("type", "shipping") != "shipping":
        raise CheckoutError(
            "this store only ships; there is no pickup", code="invalid", param=(*base, "type")
        )
    address = None
    chosen = method.get("selected_destination_id")
    destinations = method.get("destinations") or []
    if len(destinations) > MAX_DESTINATIONS:
        raise CheckoutError(
            f"send at most {MAX_DESTINATIONS} destinations",
            code="invalid",
            param=(*base, "destinations"),
        )
    if destinations:
        parsed = [
            _address(d, buyer_name, (*base, "destinations", i)) for i, d in enumerate(destinations)
        ]
        index = 0
        if chosen is not None:
            index = next(
                (
                    i
                    for i, d in enumerate(destinations)
                    if chosen in (d.get("id"), destination_id(parsed[i]))
                ),
                -1,
            )
            if index < 0:
                raise CheckoutError(
                    f"no destination has the id {str(chosen)[:64]!r}",
                    code="invalid",
                    param=(*base, "selected_destination_id"),
                )
        address = parsed[index]
    elif chosen is not None and any(d.id == chosen for d in offered):
        address = next(d for d in offered if d.id == chosen)
    elif chosen is not None and (current is None or chosen != destination_id(current)):
        raise CheckoutError(
            f"no destination has the id {str(chosen)[:64]!r}",
            code="invalid",
            param=(*base, "selected_destination_id"),
        )
    option = None
    for index, group in enumerate(method.get("groups") or []):
        if group.get("id") not in (None, GROUP_ID):
            raise CheckoutError(
                f"there is no fulfillment group {str(group['id'])[:64]!r}; use {GROUP_ID!r}",
                code="invalid",
                param=(*base, "groups", index, "id"),
            )
        if group.get("selected_option_id"):
            option = str(group["selected_option_id"])
    return address, option


def changes_from(
    body: dict[str, Any],
    *,
    fulfillment: bool,
    current: Checkout | None,
    discounts: bool = False,
    consent: bool = False,
) -> Changes:
    """The changes a (schema-valid) create or update body asks for. ``fulfillment``,
    ``discounts``, ``consent``: whether those extensions are negotiated (their fields are
    ignored otherwise); ``current``: the session an update applies to (its buyer names the
    recipient when the destination does not)."""
    items = None
    if "line_items" in body:
        items = [(line["item"]["id"], line["quantity"]) for line in body["line_items"]]
    buyer = buyer_from(body["buyer"]) if "buyer" in body else None
    known = buyer if buyer is not None else (current.buyer if current is not None else {})
    buyer_name = _full_name(known.get("first_name", ""), known.get("last_name", ""))
    address = option = None
    if fulfillment and "fulfillment" in body:
        current_address = current.address if current is not None else None
        offered = offered_destinations(current) if current is not None else []
        address, option = _fulfillment(body["fulfillment"], buyer_name, current_address, offered)
    codes = codes_from(body["discounts"]) if discounts and "discounts" in body else None
    agreed = consent_from(body["buyer"]) if consent and "buyer" in body else None
    return Changes(
        items=items,
        buyer=buyer,
        address=address,
        shipping_option=option,
        consent=agreed,
        discount_codes=codes,
    )


# ---------------------------------------------------------------- responses


def _total(kind: str, text: str, money: Money) -> dict[str, Any]:
    return {"type": kind, "display_text": text, "amount": money.minor_units}


def totals(bill: Bill, *, shipped: bool) -> list[dict[str, Any]]:
    """``types/totals.json``: subtotal, the codes' discount (negative), shipping (once there
    is an address), tax, total."""
    out = [_total("subtotal", "Subtotal", bill.items)]
    if bill.discounts:
        out.append(_total("discount", "Discount", Money.zero(bill.items.currency) - bill.discount))
    if shipped:
        out.append(_total("fulfillment", "Shipping", bill.shipping))
    out.append(_total("tax", "Tax", bill.tax))
    out.append(_total("total", "Total", bill.total))
    return out


def item_json(cost: LineCost) -> dict[str, Any]:
    """``types/item.json`` for a line: id, title, unit price."""
    offer = cost.offer
    return {
        "id": cost.line.item_id,
        "title": offer.name if offer is not None else cost.line.item_id,
        "price": cost.unit_price.minor_units,
    }


def _line_item(cost: LineCost) -> dict[str, Any]:
    return {
        "id": cost.line.id,
        "item": item_json(cost),
        "quantity": cost.line.quantity,
        "totals": [
            _total("subtotal", "Subtotal", cost.base),
            *(
                [_total("discount", "Discount", Money.zero(cost.base.currency) - cost.discount)]
                if cost.discount is not None
                else []
            ),
            _total("tax", "Tax", cost.tax),
            _total("total", "Total", cost.total),
        ],
    }


def _problem_message(problem: Problem, *, fulfillment: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"type": problem.severity, "code": problem.code}
    if problem.code == "not_found" and problem.param[:1] == ("lines",):
        message["code"] = "item_unavailable"  # a line whose item is no longer sold
    message["path"] = ucp_path(problem.param)
    message["content"] = problem.message
    if problem.severity == "error":
        # Without the fulfillment extension the API cannot take an address: the buyer must.
        needs_buyer = problem.param == ("address",) and not fulfillment
        message["severity"] = "requires_buyer_input" if needs_buyer else "recoverable"
    return message


def error_message(error: CheckoutError, *, severity: str = "recoverable") -> dict[str, Any]:
    """A refusal as a ``types/message_error.json``."""
    message: dict[str, Any] = {"type": "error", "code": _CODES.get(error.code, error.code)}
    if error.param:
        message["path"] = ucp_path(error.param)
    message |= {"content": error.message, "severity": severity}
    return message


def error_response(
    ucp: dict[str, Any], messages: Sequence[dict[str, Any]], continue_url: str | None = None
) -> dict[str, Any]:
    """``types/error_response.json``: no resource, only why."""
    body: dict[str, Any] = {"ucp": {**ucp, "status": "error"}, "messages": list(messages)}
    if continue_url is not None:
        body["continue_url"] = continue_url
    return body


def _fulfillment_json(checkout: Checkout, bill: Bill) -> dict[str, Any]:
    line_ids = [cost.line.id for cost in bill.lines]
    method: dict[str, Any] = {"id": METHOD_ID, "type": "shipping", "line_item_ids": line_ids}
    offered = offered_destinations(checkout)
    if checkout.address is not None:
        chosen = destination_id(checkout.address)
        if not any(d.id == chosen for d in offered):
            offered = [checkout.address]
        method["selected_destination_id"] = chosen
    if offered:
        method["destinations"] = [{"id": destination_id(d), **postal_address(d)} for d in offered]
    if bill.options:
        method["groups"] = [
            {
                "id": GROUP_ID,
                "line_item_ids": line_ids,
                "options": [
                    {
                        "id": option.id,
                        "title": option.title,
                        "description": (
                            f"Arrives between {option.earliest:%b} {option.earliest.day} "
                            f"and {option.latest:%b} {option.latest.day}"
                        ),
                        "earliest_fulfillment_time": _iso(option.earliest),
                        "latest_fulfillment_time": _iso(option.latest),
                        "totals": [_total("total", "Shipping", option.cost)],
                    }
                    for option in bill.options
                ],
                "selected_option_id": checkout.shipping_option or bill.options[0].id,
            }
        ]
    return {"methods": [method]}


def discounts_json(checkout: Checkout, bill: Bill) -> dict[str, Any]:
    """The discount extension's ``discounts``: the codes as given, and what each promotion the
    cart earned and each code the store knows took off, from which line (amounts positive)."""
    return {
        "codes": list(checkout.discount_codes),
        "applied": [
            {
                **({"automatic": True} if applied.automatic else {"code": applied.code}),
                "title": applied.title,
                "amount": applied.amount.minor_units,
                "method": "across",
                "priority": priority,
                "allocations": [
                    {"path": f"$.line_items[{index}]", "amount": share.minor_units}
                    for index, share in applied.allocations
                ],
            }
            for priority, applied in enumerate(bill.discounts, start=1)
        ],
    }


def checkout_json(
    checkout: Checkout,
    bill: Bill,
    *,
    ucp: dict[str, Any],
    site: Site,
    fulfillment: bool,
    extra: Sequence[dict[str, Any]] = (),
    discounts: bool = False,
    consent: bool = False,
) -> dict[str, Any]:
    """``checkout`` as UCP's checkout (with ``order`` once completed); ``extra`` messages (a
    refusal) follow the checkout's own; ``discounts``, ``consent``: those extensions are
    active."""
    messages = []
    if checkout.status == "open":
        messages = [_problem_message(p, fulfillment=fulfillment) for p in bill.problems]
    status = _STATUS.get(checkout.status)
    if status is None:
        escalate = any(m.get("severity", "").startswith("requires_") for m in messages)
        if escalate:
            status = "requires_escalation"
        else:
            status = "ready_for_complete" if bill.payable else "incomplete"
    body: dict[str, Any] = {
        "ucp": ucp,
        "id": checkout.id,
        "status": status,
        "currency": checkout.currency,
        "line_items": [_line_item(cost) for cost in bill.lines],
    }
    if checkout.buyer or (consent and checkout.consent):
        body["buyer"] = dict(checkout.buyer)
        if consent and checkout.consent:
            body["buyer"]["consent"] = dict(checkout.consent)
    if fulfillment:
        body["fulfillment"] = _fulfillment_json(checkout, bill)
    if discounts:
        body["discounts"] = discounts_json(checkout, bill)
    body["totals"] = totals(bill, shipped=checkout.address is not None)
    seen = {(m.get("code"), m.get("path")) for m in messages}
    body["messages"] = messages + [m for m in extra if (m.get("code"), m.get("path")) not in seen]
    body["links"] = [{"type": kind, "url": url} for kind, url in site.links]
    body["expires_at"] = _iso(checkout.expires_at)
    if status not in ("completed", "canceled"):
        body["continue_url"] = site.continue_url(checkout.id)
    if checkout.status == "completed" and checkout.order_id is not None:
        body["order"] = {
            "id": checkout.order_id,
            "label": checkout.order_number,
            "permalink_url": site.order_url(checkout.order_id),
        }
    return body
