"""tau_catalog: all 50 tau-bench products and 591 variants, mapped faithfully."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cartagent.catalog import Product, tau_catalog
from cartagent.catalog.tau import TAU_CATEGORIES
from tests.conftest import TAU


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TAU / "products.json").read_text())
    return data


@pytest.fixture(scope="module")
def catalog() -> list[Product]:
    return tau_catalog(TAU)


def test_every_product_and_variant_is_mapped(catalog: list[Product], raw: dict[str, Any]) -> None:
    assert len(catalog) == 50
    assert sum(len(p.variants) for p in catalog) == 591
    assert [p.id for p in catalog] == list(raw)
    for product in catalog:
        source = raw[product.id]
        assert product.title == source["name"]
        assert product.category == TAU_CATEGORIES[source["name"]]
        assert len(product.category) == 3
        assert product.currency == "USD"
        assert [v.id for v in product.variants] == list(source["variants"])
        for variant in product.variants:
            item = source["variants"][variant.id]
            assert variant.options == item["options"]
            assert variant.available is item["available"]
            assert variant.price == Decimal(str(item["price"]))


def test_a_t_shirt_spot_check(catalog: list[Product]) -> None:
    shirt = next(p for p in catalog if p.id == "9523456873")
    assert shirt.title == "T-Shirt"
    assert shirt.category == ("Clothing", "Tops", "T-Shirts")
    # size and colour pick a variant; material and style describe the product
    assert shirt.attributes == {
        "material": ("cotton", "polyester"),
        "style": ("crew neck", "v-neck"),
    }
    item = shirt.variant("9612497925")
    assert item is not None
    assert item.options == {
        "color": "blue",
        "size": "M",
        "material": "cotton",
        "style": "crew neck",
    }
    assert item.price == Decimal("50.88")
    assert item.available
    assert "color: blue" in shirt.description and "v-neck" in shirt.description


def test_size_and_colour_like_options_are_not_attributes(catalog: list[Product]) -> None:
    by_title = {p.title: p for p in catalog}
    assert set(by_title["Sunglasses"].attributes) == {"frame material", "lens type"}
    assert set(by_title["Laptop"].attributes) == {"processor", "ram", "storage"}
    assert set(by_title["Hiking Boots"].attributes) == {"material", "waterproof"}
    assert by_title["Notebook"].attributes == {"cover type": ("hard cover", "soft cover")}
    makeup = by_title["Makeup Kit"]  # its variants come in three brands: not the product's
    assert makeup.brand is None
    assert makeup.attributes["brand"] == ("Brand A", "Brand B", "Brand C")


def test_the_file_itself_may_be_given(catalog: list[Product]) -> None:
    assert tau_catalog(TAU / "products.json") == catalog


def test_a_missing_or_malformed_catalog_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        tau_catalog(tmp_path)
    (tmp_path / "products.json").write_text('{"1": {"name": "Mug"}}')
    with pytest.raises(ValueError, match="product '1' is not in the tau-bench shape"):
        tau_catalog(tmp_path)
    (tmp_path / "products.json").write_text("[]")
    with pytest.raises(ValueError, match="expected an object"):
        tau_catalog(tmp_path)
