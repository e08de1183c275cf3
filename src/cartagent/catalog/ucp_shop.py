"""A UCP sample shop folder as ``Product`` s: ``ucp_shop_catalog(folder)``.

The UCP conformance suite seeds the business it tests from a folder of CSV files
(``test_data/flower_shop``): ``products.csv`` (``id,title,price,image_url``, the price in minor
units) and ``inventory.csv`` (``product_id,quantity``), beside the store's terms (discounts,
promotions, shipping rates, customers). Each product
is sold as one variant whose id is the product's (the suite buys ``item.id = product id``);
it is available while its inventory is above zero, and a product with no inventory row is not.
"""

from __future__ import annotations

import csv
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..errors import ConfigurationError
from .product import Product, Variant

__all__ = ["UCP_PRODUCTS", "is_ucp_shop", "ucp_shop_catalog", "ucp_shop_stock"]

UCP_PRODUCTS = "products.csv"
UCP_INVENTORY = "inventory.csv"
MINOR_UNITS = Decimal(100)


def is_ucp_shop(path: Path) -> bool:
    """Whether ``path`` is a folder in the UCP sample shop's shape."""
    return path.is_dir() and (path / UCP_PRODUCTS).is_file() and (path / UCP_INVENTORY).is_file()


def _rows(path: Path, columns: set[str]) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = columns - set(reader.fieldnames or ())
            if missing:
                raise ConfigurationError(f"{path} lacks the column(s) {', '.join(sorted(missing))}")
            return [{k: (v or "").strip() for k, v in row.items() if k} for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error


def ucp_shop_stock(folder: Path) -> dict[str, int]:
    """Units in stock per product id (``inventory.csv``)."""
    path = folder / UCP_INVENTORY
    stock: dict[str, int] = {}
    for line, row in enumerate(_rows(path, {"product_id", "quantity"}), start=2):
        try:
            quantity = int(row["quantity"])
        except ValueError:
            raise ConfigurationError(f"{path}:{line}: quantity {row['quantity']!r}") from None
        if quantity < 0:
            raise ConfigurationError(f"{path}:{line}: a negative quantity")
        stock[row["product_id"]] = quantity
    return stock


def ucp_shop_catalog(folder: Path, currency: str = "USD") -> list[Product]:
    """The folder's products, priced from minor units, in stock as ``inventory.csv`` says.

    Raises :class:`~cartagent.errors.ConfigurationError` on a missing column, a price that
    is not a whole number of minor units, or a product id given twice.
    """
    path = folder / UCP_PRODUCTS
    stock = ucp_shop_stock(folder)
    products: dict[str, Product] = {}
    for line, row in enumerate(_rows(path, {"id", "title", "price"}), start=2):
        try:
            cents = Decimal(row["price"])
        except InvalidOperation:
            raise ConfigurationError(f"{path}:{line}: price {row['price']!r}") from None
        if not cents.is_finite() or cents != cents.to_integral_value() or cents < 0:
            raise ConfigurationError(f"{path}:{line}: price {row['price']!r} (minor units)")
        if row["id"] in products:
            raise ConfigurationError(f"{path}:{line}: product {row['id']!r} given twice")
        try:
            products[row["id"]] = Product(
                id=row["id"],
                title=row["title"],
                image=row.get("image_url") or None,
                variants=(
                    Variant(
                        id=row["id"],
                        price=cents / MINOR_UNITS,
                        currency=currency,
                        available=stock.get(row["id"], 0) > 0,
                        stock=stock.get(row["id"], 0),
                    ),
                ),
            )
        except ValueError as error:
            raise ConfigurationError(f"{path}:{line}: {error}") from None
    return list(products.values())
