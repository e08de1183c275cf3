"""A UCP sample shop folder (products.csv + inventory.csv) read as a catalog."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from cartagent.catalog.source import read_catalog
from cartagent.catalog.ucp_shop import is_ucp_shop, ucp_shop_catalog
from cartagent.errors import ConfigurationError

REPO = Path(__file__).resolve().parents[2]
FLOWER_SHOP = REPO / "third_party" / "ucp-conformance" / "test_data" / "flower_shop"


def shop(folder: Path, products: str, inventory: str = "product_id,quantity\n") -> Path:
    folder.mkdir()
    (folder / "products.csv").write_text(products)
    (folder / "inventory.csv").write_text(inventory)
    return folder


def test_the_flower_shop_is_read_as_one_variant_per_product_priced_from_minor_units() -> None:
    products = {p.id: p for p in read_catalog(FLOWER_SHOP, lambda problem: None)}
    assert len(products) == 6
    roses = products["bouquet_roses"]
    assert roses.title == "Bouquet of Red Roses"
    [variant] = roses.variants
    assert (variant.id, variant.price, variant.currency) == ("bouquet_roses", Decimal("35"), "USD")
    assert variant.available
    assert not products["gardenias"].variants[0].available  # inventory 0


def test_a_product_without_inventory_is_not_available_and_cents_stay_exact(tmp_path: Path) -> None:
    folder = shop(
        tmp_path / "s",
        "id,title,price\na,A,1999\nb,B,5\n",
        "product_id,quantity\na,3\n",
    )
    assert is_ucp_shop(folder)
    a, b = ucp_shop_catalog(folder)
    assert (a.variants[0].price, a.variants[0].available) == (Decimal("19.99"), True)
    assert (b.variants[0].price, b.variants[0].available) == (Decimal("0.05"), False)


@pytest.mark.parametrize(
    ("products", "inventory", "problem"),
    [
        ("id,title\na,A\n", "product_id,quantity\n", "lacks the column(s) price"),
        ("id,title,price\na,A,1.5\n", "product_id,quantity\n", "products.csv:2: price '1.5'"),
        ("id,title,price\na,A,x\n", "product_id,quantity\n", "products.csv:2: price 'x'"),
        ("id,title,price\na,A,1\na,B,2\n", "product_id,quantity\n", "products.csv:3: product 'a'"),
        ("id,title,price\na,A,1\n", "product_id,quantity\na,-1\n", "inventory.csv:2: a negative"),
        ("id,title,price\na,A,1\n", "product_id,quantity\na,many\n", "inventory.csv:2: quantity"),
        ("id,title,price\na,,1\n", "product_id,quantity\n", "products.csv:2:"),
    ],
)
def test_bad_rows_stop_the_read_with_the_file_and_line(
    tmp_path: Path, products: str, inventory: str, problem: str
) -> None:
    folder = shop(tmp_path / "s", products, inventory)
    with pytest.raises(ConfigurationError) as raised:
        ucp_shop_catalog(folder)
    assert problem in str(raised.value)


def test_a_folder_without_inventory_is_not_a_ucp_shop(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "products.csv").write_text("id,title,price\n")
    assert not is_ucp_shop(folder)


def test_a_counted_stock_caps_what_a_cart_may_hold(tmp_path: Path) -> None:
    from cartagent.commerce import MerchantCatalog
    from cartagent.commerce.checkout import Checkout, bill, merge_items
    from cartagent.commerce.terms import StoreTerms
    from cartagent.errors import CheckoutError

    folder = shop(tmp_path / "s", "id,title,price\na,A,100\n", "product_id,quantity\na,3\n")
    catalog = MerchantCatalog(ucp_shop_catalog(folder))
    assert catalog.offer("a") is not None and catalog.offer("a").stock == 3  # type: ignore[union-attr]
    [line] = merge_items([("a", 2), ("a", 1)], catalog, "USD")
    assert line.quantity == 3
    with pytest.raises(CheckoutError) as refused:
        merge_items([("a", 2), ("a", 2)], catalog, "USD")
    assert (refused.value.code, refused.value.param) == ("out_of_stock", ("items", 1, "quantity"))
    assert refused.value.message.startswith("Insufficient stock: 3 of A left")
    # A cart made before the count fell says so on its bill.
    fewer = MerchantCatalog(
        ucp_shop_catalog(
            shop(tmp_path / "t", "id,title,price\na,A,100\n", "product_id,quantity\na,1\n")
        )
    )
    now = datetime.now(UTC)
    cart = Checkout(
        id="cs_1", owner="o", protocol="ucp", currency="USD", lines=(line,),
        created_at=now, updated_at=now, expires_at=now,
    )  # fmt: skip
    problems = bill(cart, fewer, StoreTerms(), now).problems
    assert ("out_of_stock", ("lines", 0)) in [(p.code, p.param) for p in problems]


def test_the_shops_image_urls_are_the_products_pictures() -> None:
    products = {p.id: p for p in read_catalog(FLOWER_SHOP, lambda problem: None)}
    assert products["bouquet_roses"].image == "https://example.com/roses.jpg"
