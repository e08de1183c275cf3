"""The request body of PayPal Cart API v1 (``PayPalCartWritable``) as JSON Schema, and its check.

Shapes and rules follow ``@paypal/agentic-commerce-spec`` 1.1.0 (``types.gen.ts``,
``zod.gen.ts``): ``Money`` (a 3-letter ``currency_code``, a decimal ``value`` of at most 32
characters), ``CartItem`` (``quantity`` an integer from 1), ``Customer`` (name parts of at most
140 characters, E.164 phone digits, an e-mail address of 3 to 254), ``Address`` (the documented
lengths, ``country_code`` two capital letters), ``PaymentMethod`` (``type: "paypal"``),
``ShippingOption``, ``Coupon``, ``CheckoutField``. Like the spec's Zod objects, unknown members
are allowed (PayPal may send a cart back with its read-only fields) and ignored.

Where the spec sets no bound, one is set here so untrusted input stays small: identifiers and
names at most 255 characters, the payment token 128, arrays of options, coupons, checkout fields
and attributes at most 50 entries. A body over 256 KiB is refused before parsing. The number of
items and their quantities are the store's business rules (422), not format (400).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from ..requests import MAX_BODY

__all__ = ["MAX_BODY", "problems"]
MAX_TEXT = 255
MAX_LIST = 50


def _text(max_length: int = MAX_TEXT, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_length, **extra}


MONEY = {
    "type": "object",
    "required": ["currency_code", "value"],
    "properties": {
        "currency_code": _text(3, minLength=3),
        "value": _text(32, pattern=r"^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$"),
    },
}

ADDRESS = {
    "type": "object",
    "required": ["country_code"],
    "properties": {
        "address_line_1": _text(300),
        "address_line_2": _text(300),
        "admin_area_2": _text(120),
        "admin_area_1": _text(300),
        "postal_code": _text(60),
        "country_code": _text(2, pattern=r"^[A-Z]{2}$"),
    },
}

NAMED_VALUES = {
    "type": "array",
    "maxItems": MAX_LIST,
    "items": {"type": "object", "properties": {"name": _text(), "value": _text()}},
}

ITEM = {
    "type": "object",
    "required": ["quantity"],
    "anyOf": [{"required": ["variant_id"]}, {"required": ["item_id"]}],
    "properties": {
        "item_id": _text(minLength=1),
        "variant_id": _text(minLength=1),
        "parent_id": _text(),
        "quantity": {"type": "integer", "minimum": 1},
        "name": _text(),
        "description": _text(4096),
        "item_url": _text(2048),
        "price": MONEY,
        "selected_attributes": NAMED_VALUES,
        "custom_options": NAMED_VALUES,
        "gift_options": {"type": "object"},
    },
}

CUSTOMER = {
    "type": "object",
    "properties": {
        "name": {
            "type": "object",
            "properties": {"given_name": _text(140), "surname": _text(140)},
        },
        "phone": {
            "type": "object",
            "required": ["country_code", "national_number"],
            "properties": {
                "country_code": _text(3, pattern=r"^[0-9]{1,3}$"),
                "national_number": _text(14, pattern=r"^[0-9]{1,14}$"),
                "extension_number": _text(15, pattern=r"^[0-9]{1,15}$"),
            },
        },
        # The spec's RFC 5322 pattern, simplified: something@something, no spaces.
        "email_address": _text(254, minLength=3, pattern=r"^[^@\s]+@[^@\s]+$"),
    },
}

SHIPPING_OPTION = {
    "type": "object",
    "required": ["id", "name", "price", "is_selected"],
    "properties": {
        "id": _text(),
        "name": _text(),
        "description": _text(1024),
        "price": MONEY,
        "is_selected": {"type": "boolean"},
        "estimated_delivery": _text(10),
    },
}

CART = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "minItems": 1, "items": ITEM},
        "customer": CUSTOMER,
        "shipping_address": ADDRESS,
        "billing_address": ADDRESS,
        "payment_method": {
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"enum": ["paypal"]},
                "token": _text(128, minLength=1),
                "payer_id": _text(64, minLength=1),
                "approval_url": _text(2048),
            },
        },
        "available_shipping_options": {
            "type": "array",
            "maxItems": MAX_LIST,
            "items": SHIPPING_OPTION,
        },
        "coupons": {
            "type": "array",
            "maxItems": MAX_LIST,
            "items": {
                "type": "object",
                "required": ["code", "action"],
                "properties": {"code": _text(), "action": {"enum": ["APPLY", "REMOVE"]}},
            },
        },
        "checkout_fields": {
            "type": "array",
            "maxItems": MAX_LIST,
            "items": {
                "type": "object",
                "required": ["type", "status"],
                "properties": {
                    "type": _text(64),
                    "status": {"enum": ["PENDING", "COMPLETED", "REJECTED", "ERROR"]},
                },
            },
        },
        "geo_coordinates": {"type": "object"},
    },
}


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(CART)


def _field(path: tuple[str | int, ...]) -> str:
    """``("items", 0, "quantity")`` as ``items[0].quantity``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def problems(body: Any, limit: int = 10) -> list[dict[str, str]]:
    """Where ``body`` breaks the request schema, as ``Error.details`` items (at most ``limit``;
    none if it is valid): ``{"field", "issue", "description"}``."""
    if not isinstance(body, dict):
        return [
            {
                "field": "",
                "issue": "INVALID_PARAMETER_SYNTAX",
                "description": "the body must be a JSON object",
            }
        ]
    found = []
    errors = sorted(_validator().iter_errors(body), key=lambda e: list(map(str, e.path)))
    for error in errors[:limit]:
        path = tuple(error.absolute_path)
        issue = "INVALID_PARAMETER_SYNTAX"
        description = error.message[:300]
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = next((key for key in error.validator_value if key not in error.instance), "")
            path = (*path, missing)
            issue = "MISSING_REQUIRED_PARAMETER"
        elif error.validator == "anyOf":
            path = (*path, "variant_id")
            issue = "MISSING_REQUIRED_PARAMETER"
            description = "an item needs its variant_id (or the deprecated item_id)"
        found.append({"field": _field(path), "issue": issue, "description": description})
    return found
