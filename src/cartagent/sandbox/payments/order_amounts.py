"""PayPal's checks on an order's purchase units: currencies, breakdown and item sums."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..amounts import parse_amount
from ..errors import unprocessable

ADDED = ("item_total", "tax_total", "shipping", "handling", "insurance")
SUBTRACTED = ("shipping_discount", "discount")


def check_purchase_units(units: list[dict[str, Any]]) -> str:
    """Validate every unit's arithmetic as PayPal does; return the order's currency."""
    currency: str | None = None
    references: set[str] = set()
    for index, unit in enumerate(units):
        where = f"/purchase_units/{index}"
        reference = unit.get("reference_id")
        if len(units) > 1 and not reference:
            raise unprocessable(
                "REFERENCE_ID_REQUIRED",
                "'reference_id' is required for each 'purchase_unit' if multiple purchase units "
                "are provided.",
                field=f"{where}/reference_id",
            )
        if reference in references:
            raise unprocessable(
                "DUPLICATE_REFERENCE_ID",
                "`reference_id` must be unique if multiple purchase_unit are provided.",
                field=f"{where}/reference_id",
                value=str(reference),
            )
        references.add(reference or "default")
        currency = check_unit(unit, where, currency)
    if currency is None:  # the schema requires at least one unit
        raise unprocessable("MISSING_REQUIRED_PARAMETER", field="/purchase_units")
    return currency


def _amount(obj: object, field: str, currency: str | None) -> tuple[Decimal, str]:
    return parse_amount(
        obj,
        field,
        currency=currency,
        unsupported_issue="INVALID_CURRENCY_CODE",
        mismatch_issue="MULTI_CURRENCY_ORDER",
    )


def check_unit(unit: dict[str, Any], where: str, currency: str | None) -> str:
    total, currency = _amount(unit.get("amount"), f"{where}/amount", currency)
    if total <= 0:
        raise unprocessable(
            "CANNOT_BE_ZERO_OR_NEGATIVE",
            "Must be greater than zero.",
            field=f"{where}/amount/value",
            value=unit["amount"]["value"],
        )
    breakdown = unit["amount"].get("breakdown")
    items = unit.get("items") or []
    if items and not (breakdown and "item_total" in breakdown):
        raise unprocessable(
            "ITEM_TOTAL_REQUIRED",
            "If item details are specified (items.unit_amount and items.quantity) corresponding "
            "amount.breakdown.item_total is required.",
            field=f"{where}/amount/breakdown/item_total",
        )
    if not breakdown:
        return currency
    parts: dict[str, Decimal] = {}
    for name in (*ADDED, *SUBTRACTED):
        if name in breakdown:
            parts[name], _ = _amount(breakdown[name], f"{where}/amount/breakdown/{name}", currency)
    expected = sum((parts.get(n, Decimal(0)) for n in ADDED), Decimal(0)) - sum(
        (parts.get(n, Decimal(0)) for n in SUBTRACTED), Decimal(0)
    )
    if expected != total:
        raise unprocessable(
            "AMOUNT_MISMATCH",
            "Should equal item_total + tax_total + shipping + handling + insurance - "
            "shipping_discount - discount.",
            field=f"{where}/amount/value",
            value=unit["amount"]["value"],
        )
    if items:
        check_items(items, parts, where, currency)
    return currency


def check_items(
    items: list[dict[str, Any]], parts: dict[str, Decimal], where: str, currency: str
) -> None:
    item_total = Decimal(0)
    tax_total = Decimal(0)
    any_tax = False
    for index, item in enumerate(items):
        field = f"{where}/items/{index}"
        quantity = int(item.get("quantity", "1"))
        unit_amount, _ = _amount(item.get("unit_amount"), f"{field}/unit_amount", currency)
        item_total += unit_amount * quantity
        if "tax" in item:
            any_tax = True
            tax, _ = _amount(item["tax"], f"{field}/tax", currency)
            tax_total += tax * quantity
    if item_total != parts["item_total"]:
        raise unprocessable(
            "ITEM_TOTAL_MISMATCH",
            "Should equal sum of (unit_amount * quantity) across all items for a given "
            "purchase_unit.",
            field=f"{where}/amount/breakdown/item_total/value",
            value=str(parts["item_total"]),
        )
    if any_tax and "tax_total" not in parts:
        raise unprocessable(
            "TAX_TOTAL_REQUIRED",
            "If item details are specified (items.tax_total and items.quantity) corresponding "
            "amount.breakdown.tax_total is required.",
            field=f"{where}/amount/breakdown/tax_total",
        )
    if any_tax and tax_total != parts["tax_total"]:
        raise unprocessable(
            "TAX_TOTAL_MISMATCH",
            "Should equal sum of (tax * quantity) across all items for a given purchase_unit.",
            field=f"{where}/amount/breakdown/tax_total/value",
            value=str(parts["tax_total"]),
        )
