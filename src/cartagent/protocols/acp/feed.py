"""ACP product feeds: the store exported as ``metadata.json`` + ``products.jsonl`` (one feed
``Product`` per line, prices in minor units), and any merchant's feed read back into
cartagent's catalog model so an agent can search it before it checks out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from ...catalog.product import Product, Variant
from ...money import Money

__all__ = ["FEED_ID", "feed_metadata", "feed_product", "products_from_feed"]

FEED_ID = "store"
MAX_FEED_PRODUCTS = 1_000_000


def feed_metadata(updated_at: datetime, country: str = "US") -> dict[str, Any]:
    return {
        "id": FEED_ID,
        "target_country": country,
        "updated_at": updated_at.isoformat().replace("+00:00", "Z"),
    }


def feed_product(product: Product) -> dict[str, Any]:
    """One catalog product as an ACP feed ``Product``."""
    category = " > ".join(product.category)
    out: dict[str, Any] = {"id": product.id, "title": product.title}
    if product.description:
        out["description"] = {"plain": product.description}
    out["variants"] = []
    for variant in product.variants:
        options = ", ".join(variant.options.values())
        entry: dict[str, Any] = {
            "id": variant.id,
            "title": f"{product.title} - {options}" if options else product.title,
            "price": {
                "amount": Money(variant.price, variant.currency).minor_units,
                "currency": variant.currency,
            },
            "availability": {
                "available": variant.available,
                "status": "in_stock" if variant.available else "out_of_stock",
            },
            "variant_options": [
                {"name": name, "value": value} for name, value in variant.options.items()
            ],
        }
        if category:
            entry["categories"] = [{"value": category}]
        out["variants"].append(entry)
    return out


def _variant(data: dict[str, Any]) -> Variant | None:
    price = data.get("price")
    if not isinstance(price, dict):
        return None  # a variant without a price cannot be offered to a buyer
    currency = str(price["currency"])
    amount = Money.from_minor(int(price["amount"]), currency).amount
    availability = data.get("availability") or {}
    return Variant(
        id=str(data["id"]),
        options={str(o["name"]): str(o["value"]) for o in data.get("variant_options", [])},
        price=Decimal(amount),
        currency=currency,
        available=bool(availability.get("available", True)),
    )


def products_from_feed(rows: Iterable[dict[str, Any]]) -> Iterator[Product]:
    """cartagent products from feed ``Product`` objects; variants without a price are left
    out, and so are products left with none. Raises ``ValueError`` for a malformed row."""
    for index, row in enumerate(rows):
        if index >= MAX_FEED_PRODUCTS:
            raise ValueError(f"the feed has more than {MAX_FEED_PRODUCTS} products")
        try:
            variants = [v for v in map(_variant, row.get("variants", [])) if v is not None]
            if not variants:
                continue
            categories = next(
                (v.get("categories") for v in row["variants"] if v.get("categories")), None
            )
            path = tuple(categories[0]["value"].split(" > ")) if categories else ()
            description = (row.get("description") or {}).get("plain", "")
            yield Product(
                id=str(row["id"]),
                title=str(row.get("title") or variants[0].id),
                description=description,
                category=path,
                variants=tuple(variants),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"feed product {index}: {error}") from error
