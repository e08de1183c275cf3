"""PayPal Cart API v1's wire shapes: a ``PayPalCartWritable`` body into
:class:`~cartagent.commerce.merchant.Changes`, a :class:`~cartagent.commerce.checkout.Checkout`
and its :class:`~cartagent.commerce.checkout.Bill` into a ``PayPalCart``, refusals into ``Error``
and ``BusinessError`` (all as in ``types.gen.ts`` of ``@paypal/agentic-commerce-spec`` 1.1.0).
Money is PayPal's ``{currency_code, value}``.

A cart is rendered from the neutral checkout, except what the checkout has no place for: the
``customer``, ``shipping_address`` and ``billing_address`` as sent, and the prices the caller
quoted for its items, kept in the checkout's ``metadata`` so that a ``GET`` answers what the last
``POST``/``PUT`` set (a ``PUT`` replaces them all). A shipping address without a first line,
city or postal code is kept but not shipped to (``SHIPPING_ADDRESS_INVALID``).

``status``: ``COMPLETED`` once paid; ``INCOMPLETE`` while ``validation_issues`` is not empty;
otherwise ``CREATED`` in the answer to the create and ``READY`` after. ``validation_status``:
``VALID`` without issues, ``REQUIRES_ADDITIONAL_INFORMATION`` when every issue is a missing
field, else ``INVALID``. The ``payment_method.token`` (the PayPal order the buyer approves) is
shown only while the cart can be paid, or once it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from ...addresses import Address, Contact
from ...errors import CheckoutError
from ..checkout import Bill, Changes, Checkout, LineCost, Problem

__all__ = [
    "PROTOCOL",
    "business_error",
    "cart",
    "changes_from",
    "error",
    "issues",
    "refusal",
    "same_items",
    "unavailable_issue",
]

PROTOCOL = "paypal_cart"
ADDRESS_NEEDS = ("address_line_1", "admin_area_2", "postal_code")
KEPT = ("customer", "shipping_address", "billing_address")

# Every ``specific_issue`` of the spec's ``BusinessIssueCode`` this merchant uses.
SPEC_ISSUES = frozenset(
    {
        "ITEM_NOT_FOUND",
        "ITEM_OUT_OF_STOCK",
        "MAXIMUM_QUANTITY_EXCEEDED",
        "CART_LIMIT_EXCEEDED",
        "CURRENCY_NOT_SUPPORTED",
        "REQUIRED_FIELD_MISSING",
        "MISSING_SHIPPING_ADDRESS",
        "SHIPPING_ADDRESS_INVALID",
        "NO_SHIPPING_OPTIONS",
        "PAYMENT_DECLINED",
        "PAYMENT_PROCESSOR_UNAVAILABLE",
        "PRICE_MISMATCH",
        "ITEM_ATTRIBUTE_MISMATCH",
    }
)

# A refusal's code and the first and last named parts of its param → (ValidationIssue code,
# type, specific issue, BusinessError name when there is no specific issue); ``_BY_CODE`` when
# no entry matches.
Refused = tuple[str, str, str | None, str]
_REFUSALS: dict[tuple[str, str, str], Refused] = {
    ("not_found", "items", "id"): ("DATA_ERROR", "INVALID_DATA", "ITEM_NOT_FOUND", ""),
    ("invalid", "items", "quantity"): (
        "BUSINESS_RULE_ERROR",
        "BUSINESS_RULE",
        "MAXIMUM_QUANTITY_EXCEEDED",
        "",
    ),
    ("invalid", "items", "items"): (
        "BUSINESS_RULE_ERROR",
        "BUSINESS_RULE",
        "CART_LIMIT_EXCEEDED",
        "",
    ),
    ("invalid", "items", "id"): ("PRICING_ERROR", "BUSINESS_RULE", "CURRENCY_NOT_SUPPORTED", ""),
    ("invalid", "shipping_option", "shipping_option"): (
        "SHIPPING_ERROR",
        "INVALID_DATA",
        "NO_SHIPPING_OPTIONS",
        "",
    ),
    ("missing", "address", "address"): (
        "SHIPPING_ERROR",
        "MISSING_FIELD",
        "MISSING_SHIPPING_ADDRESS",
        "",
    ),
    ("invalid", "payment", "payment"): ("PAYMENT_ERROR", "INVALID_DATA", None, "TOKEN_MISMATCH"),
}
_BY_CODE: dict[str, Refused] = {
    "not_found": ("DATA_ERROR", "INVALID_DATA", "ITEM_NOT_FOUND", ""),
    "out_of_stock": ("INVENTORY_ISSUE", "BUSINESS_RULE", "ITEM_OUT_OF_STOCK", ""),
    "missing": ("DATA_ERROR", "MISSING_FIELD", "REQUIRED_FIELD_MISSING", ""),
    "items_changed": ("DATA_ERROR", "INVALID_DATA", "ITEM_ATTRIBUTE_MISMATCH", ""),
    "payment_declined": ("PAYMENT_ERROR", "BUSINESS_RULE", "PAYMENT_DECLINED", ""),
    "payment_not_approved": ("PAYMENT_ERROR", "BUSINESS_RULE", None, "ORDER_NOT_APPROVED"),
    "invalid_state": ("BUSINESS_RULE_ERROR", "BUSINESS_RULE", None, "CART_NOT_OPEN"),
}
_ACTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "ITEM_NOT_FOUND": (("REMOVE_ITEM", "Remove the item"),),
    "ITEM_OUT_OF_STOCK": (
        ("REMOVE_ITEM", "Remove the item"),
        ("CHOOSE_DIFFERENT_VARIANT", "Choose another variant"),
    ),
    "MISSING_SHIPPING_ADDRESS": (("PROVIDE_MISSING_FIELD", "Add a shipping address"),),
    "SHIPPING_ADDRESS_INVALID": (("UPDATE_ADDRESS", "Complete the shipping address"),),
    "NO_SHIPPING_OPTIONS": (("UPDATE_SHIPPING_METHOD", "Choose an offered shipping option"),),
    "PAYMENT_DECLINED": (("USE_DIFFERENT_PAYMENT", "Pay with another funding source"),),
    "PAYMENT_PROCESSOR_UNAVAILABLE": (("RETRY_LATER", "Update the cart again shortly"),),
    "ITEM_ATTRIBUTE_MISMATCH": (("MODIFY_CART", "Update the cart with these items first"),),
    "PRICE_MISMATCH": (("ACCEPT_NEW_PRICE", "Continue with today's price"),),
}
_FIELDS = {
    "lines": "items",
    "address": "shipping_address",
    "shipping_option": "available_shipping_options",
    "payment": "payment_method.token",
    "id": "variant_id",
}


def _field(param: Sequence[str | int]) -> str:
    """A neutral path (``("items", 0, "id")``) as the cart field it is about
    (``items[0].variant_id``)."""
    out = ""
    for part in param:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = _FIELDS.get(part, part)
            out += f".{name}" if out else name
    return out


# Requests ------------------------------------------------------------------------------------


def _full_name(customer: dict[str, Any] | None) -> str:
    name = (customer or {}).get("name") or {}
    return " ".join(
        part.strip() for part in (name.get("given_name", ""), name.get("surname", "")) if part
    ).strip()


def _contact(customer: dict[str, Any]) -> Contact:
    phone = customer.get("phone")
    number = f"+{phone['country_code']}{phone['national_number']}" if phone else ""
    return Contact(_full_name(customer), customer.get("email_address", ""), number)


def _address(given: dict[str, Any], customer: dict[str, Any] | None) -> Address | None:
    if any(not str(given.get(key, "")).strip() for key in ADDRESS_NEEDS):
        return None
    return Address(
        name=_full_name(customer),
        line_one=given["address_line_1"],
        line_two=given.get("address_line_2", ""),
        city=given["admin_area_2"],
        state=given.get("admin_area_1", ""),
        country=given["country_code"],
        postal_code=given["postal_code"],
    )


def _item_id(item: dict[str, Any]) -> str:
    found: str = item.get("variant_id") or item["item_id"]
    return found


def changes_from(body: dict[str, Any]) -> Changes:
    """What a (schema-valid) cart body sets. Everything a ``PUT`` leaves out is cleared, so
    ``metadata`` is always given; a shipping option counts only with a usable address."""
    items = None
    quotes: dict[str, dict[str, str]] = {}
    if "items" in body:
        items = [(_item_id(item), item["quantity"]) for item in body["items"]]
        quotes = {_item_id(item): item["price"] for item in body["items"] if "price" in item}
    customer = body.get("customer")
    address = None
    if "shipping_address" in body:
        address = _address(body["shipping_address"], customer)
    chosen = None
    if address is not None:
        selected = (o for o in body.get("available_shipping_options", []) if o["is_selected"])
        chosen = next((option["id"] for option in selected), None)
    metadata: dict[str, Any] = {key: body[key] for key in KEPT if key in body}
    if quotes:
        metadata["quoted_prices"] = quotes
    return Changes(
        items=items,
        contact=_contact(customer) if customer else None,
        address=address,
        shipping_option=chosen,
        metadata=metadata,
    )


def same_items(body: dict[str, Any], checkout: Checkout) -> bool:
    """Whether a checkout body's ``items`` (if it has any) are the cart's, quantities merged."""
    if "items" not in body:
        return True
    wanted: dict[str, int] = {}
    for item in body["items"]:
        wanted[_item_id(item)] = wanted.get(_item_id(item), 0) + item["quantity"]
    return wanted == {line.item_id: line.quantity for line in checkout.lines}


# Validation issues ---------------------------------------------------------------------------


def _issue(
    code: str,
    kind: str,
    message: str,
    *,
    specific: str | None = None,
    field: str = "",
    item_id: str = "",
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``ValidationIssue``."""
    issue: dict[str, Any] = {"code": code, "type": kind, "message": message}
    if item_id:
        issue["item_id"] = item_id
    if field:
        issue["field"] = field
    details = {"specific_issue": specific} if specific else {}
    details |= context or {}
    if details:
        issue["context"] = details
    actions = _ACTIONS.get(specific or "", ())
    if actions:
        issue["resolution_options"] = [{"action": a, "label": label} for a, label in actions]
    return issue


def _problem(problem: Problem, checkout: Checkout) -> dict[str, Any]:
    param = problem.param
    field = _field(param)
    if param[:1] == ("lines",) and len(param) > 1 and isinstance(param[1], int):
        line = checkout.lines[param[1]]
        if problem.code == "out_of_stock":
            context = {
                "variant_id": line.item_id,
                "available_quantity": 0,
                "requested_quantity": line.quantity,
            }
            return _issue(
                "INVENTORY_ISSUE",
                "BUSINESS_RULE",
                problem.message,
                specific="ITEM_OUT_OF_STOCK",
                field=field,
                item_id=line.item_id,
                context=context,
            )
        return _issue(
            "DATA_ERROR",
            "INVALID_DATA",
            problem.message,
            specific="ITEM_NOT_FOUND",
            field=field,
            item_id=line.item_id,
        )
    if param[:1] == ("address",):
        given = checkout.metadata.get("shipping_address")
        if given:
            missing = [key for key in ADDRESS_NEEDS if not str(given.get(key, "")).strip()]
            return _issue(
                "SHIPPING_ERROR",
                "INVALID_DATA",
                f"the shipping address is incomplete: {', '.join(missing)} missing",
                specific="SHIPPING_ADDRESS_INVALID",
                field=field,
                context={"validation_failures": [f"missing_{key}" for key in missing]},
            )
        return _issue(
            "SHIPPING_ERROR",
            "MISSING_FIELD",
            problem.message,
            specific="MISSING_SHIPPING_ADDRESS",
            field=field,
        )
    if param[:1] == ("shipping_option",):
        return _issue(
            "SHIPPING_ERROR",
            "INVALID_DATA",
            problem.message,
            specific="NO_SHIPPING_OPTIONS",
            field=field,
        )
    return _issue("DATA_ERROR", "INVALID_DATA", problem.message, field=field)


def _price_issues(checkout: Checkout, bill: Bill) -> Iterable[dict[str, Any]]:
    quotes: dict[str, dict[str, str]] = checkout.metadata.get("quoted_prices") or {}
    for index, cost in enumerate(bill.lines):
        quote = quotes.get(cost.line.item_id)
        now = cost.unit_price
        if quote is None or cost.offer is None:
            continue
        if quote["currency_code"] == now.currency and Decimal(quote["value"]) == now.amount:
            continue
        yield _issue(
            "PRICING_ERROR",
            "BUSINESS_RULE",
            f"{cost.offer.name} costs {now}, not {quote['value']} {quote['currency_code']}",
            specific="PRICE_MISMATCH",
            field=f"items[{index}].price",
            item_id=cost.line.item_id,
            context={
                "item_id": cost.line.item_id,
                "original_price": quote["value"],
                "current_price": str(now.amount),
                "currency_code": now.currency,
            },
        )


def issues(checkout: Checkout, bill: Bill) -> list[dict[str, Any]]:
    """What stops an open cart from being paid, as ``ValidationIssue`` objects (a price the
    caller quoted that is not today's price included: it is resolved by sending the cart again
    with today's price or none)."""
    if checkout.status != "open":
        return []
    found = [_problem(p, checkout) for p in bill.problems if p.severity == "error"]
    return found + list(_price_issues(checkout, bill))


def unavailable_issue(reason: str) -> dict[str, Any]:
    """The issue shown when PayPal could not give the cart a payment token just now."""
    return _issue(
        "PAYMENT_ERROR",
        "BUSINESS_RULE",
        f"PayPal could not be reached to create the payment; update the cart again: {reason}",
        specific="PAYMENT_PROCESSOR_UNAVAILABLE",
        field="payment_method",
    )


# Carts ---------------------------------------------------------------------------------------


def _item(cost: LineCost) -> dict[str, Any]:
    item: dict[str, Any] = {"variant_id": cost.line.item_id, "quantity": cost.line.quantity}
    if cost.offer is not None:
        item |= {
            "parent_id": cost.offer.product_id,
            "name": cost.offer.name,
            "price": cost.unit_price.to_paypal(),
        }
        if cost.offer.options:
            item["selected_attributes"] = [
                {"name": name, "value": value} for name, value in cost.offer.options.items()
            ]
    return item


def _status(checkout: Checkout, found: Sequence[dict[str, Any]], created: bool) -> str:
    if checkout.status == "completed":
        return "COMPLETED"
    if found or checkout.status == "canceled":
        return "INCOMPLETE"
    return "CREATED" if created else "READY"


def _validation(found: Sequence[dict[str, Any]]) -> str:
    if not found:
        return "VALID"
    if all(issue["type"] == "MISSING_FIELD" for issue in found):
        return "REQUIRES_ADDITIONAL_INFORMATION"
    return "INVALID"


def cart(
    checkout: Checkout,
    bill: Bill,
    *,
    created: bool = False,
    extra: Sequence[dict[str, Any]] = (),
    payer_id: str | None = None,
) -> dict[str, Any]:
    """``checkout`` as a ``PayPalCart`` (``extra``: issues of this answer only, such as PayPal
    being unreachable; ``payer_id``: the payer the checkout call named)."""
    found = issues(checkout, bill) + list(extra)
    body: dict[str, Any] = {
        "id": checkout.id,
        "status": _status(checkout, found, created),
        "validation_status": _validation(found),
        "validation_issues": found,
        "items": [_item(cost) for cost in bill.lines],
        "totals": {
            "subtotal": bill.items.to_paypal(),
            "shipping": bill.shipping.to_paypal(),
            "tax": bill.tax.to_paypal(),
            "total": bill.total.to_paypal(),
        },
        "applied_coupons": [],
    }
    chosen = checkout.shipping_option or (bill.options[0].id if bill.options else None)
    body["available_shipping_options"] = [
        {
            "id": option.id,
            "name": option.title,
            "price": option.cost.to_paypal(),
            "is_selected": option.id == chosen,
            "estimated_delivery": option.latest.date().isoformat(),
        }
        for option in bill.options
    ]
    body |= {key: checkout.metadata[key] for key in KEPT if key in checkout.metadata}
    token = checkout.payment.paypal_order_id
    if token and (checkout.status == "completed" or not found):
        body["payment_method"] = {"type": "paypal", "token": token}
        if payer_id:
            body["payment_method"]["payer_id"] = payer_id
    if checkout.status == "completed" and checkout.order_number:
        body["payment_confirmation"] = {"merchant_order_number": checkout.order_number}
    return body


# Errors --------------------------------------------------------------------------------------


def error(
    name: str, message: str, debug_id: str, details: Sequence[dict[str, str]] = ()
) -> dict[str, Any]:
    """An ``Error`` (400, 401, 404, 5xx)."""
    body: dict[str, Any] = {"name": name, "message": message, "debug_id": debug_id}
    if details:
        body["details"] = list(details)
    return body


def business_error(issue: dict[str, Any], debug_id: str, name: str = "") -> dict[str, Any]:
    """A ``BusinessError`` (422) about ``issue``; its ``name`` is the specific issue when the
    spec has one for it, else ``name`` or ``UNPROCESSABLE_ENTITY``."""
    specific = (issue.get("context") or {}).get("specific_issue")
    detail: dict[str, str] = {"description": issue["message"]}
    if issue.get("field"):
        detail["field"] = issue["field"]
    if specific in SPEC_ISSUES:
        detail["issue"] = specific
    return {
        "name": specific or name or "UNPROCESSABLE_ENTITY",
        "message": issue["message"],
        "debug_id": debug_id,
        "business_context": issue,
        "details": [detail],
    }


def refusal(failure: CheckoutError, debug_id: str) -> tuple[int, dict[str, Any]]:
    """The status and body answering a refused request: 404 ``Error`` for an unknown cart, 409
    for a concurrent change (retry), otherwise a 422 ``BusinessError``."""
    if failure.status == 404:
        return 404, error("RESOURCE_NOT_FOUND", failure.message, debug_id)
    if failure.code in ("conflict", "in_progress"):
        return 409, error("RESOURCE_CONFLICT", failure.message, debug_id)
    names = [part for part in failure.param if isinstance(part, str)]
    key = (failure.code, names[0], names[-1]) if names else None
    found = (_REFUSALS.get(key) if key else None) or _BY_CODE.get(failure.code)
    code, kind, specific, name = found or ("DATA_ERROR", "INVALID_DATA", None, "")
    issue = _issue(code, kind, failure.message, specific=specific, field=_field(failure.param))
    return 422, business_error(issue, debug_id, name)
