"""Product and Variant: validation, normalisation and the derived properties."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from cartagent.catalog import Product, Variant


def jeans(*variants: Variant) -> Product:
    return Product(
        id="p1",
        title="Levi's Women's High-Waist Baggy Denim Jeans",
        brand="Levi's",
        category=("Clothing", "Women", "Jeans"),
        attributes={"material": ("denim",), "fit": ("baggy",)},
        variants=variants,
        rating=4.5,
        rating_count=12,
    )


def test_prices_currency_and_availability_come_from_the_variants() -> None:
    product = jeans(
        Variant(id="a", options={"size": "30", "color": "blue"}, price=Decimal("59.50")),
        Variant(id="b", options={"size": "32", "color": "blue"}, price=Decimal("64.00")),
        Variant(
            id="c",
            options={"size": "30", "color": "black"},
            price=Decimal("49.99"),
            available=False,
        ),
    )
    assert product.price_min == Decimal("49.99")  # unavailable variants still have a price
    assert product.price_max == Decimal("64.00")
    assert product.currency == "USD"
    assert product.available
    assert product.option_values() == {"size": {"30", "32"}, "color": {"blue", "black"}}
    assert product.variant("b") is product.variants[1]
    assert product.variant("zzz") is None


def test_a_product_without_variants_has_no_price_and_is_not_available() -> None:
    product = jeans()
    assert product.price_min is None and product.price_max is None and product.currency is None
    assert not product.available
    assert product.option_values() == {}
    sold_out = jeans(Variant(id="a", price=Decimal(10), available=False))
    assert not sold_out.available


def test_inputs_are_normalised_where_nothing_is_lost() -> None:
    product = Product.model_validate(
        {
            "id": " p2 ",
            "title": "Mug",
            "brand": "  ",
            "category": "Home & Kitchen > Kitchen >  Mugs ",
            "attributes": {"material": "ceramic", "feature": ["dishwasher-safe", " "]},
            "variants": [
                {
                    "id": "v",
                    "options": {"capacity": 12, "lid": True},
                    "price": 9.9,
                    "currency": "eur",
                }
            ],
        }
    )
    assert product.id == "p2"
    assert product.brand is None
    assert product.category == ("Home & Kitchen", "Kitchen", "Mugs")
    assert product.attributes == {"material": ("ceramic",), "feature": ("dishwasher-safe",)}
    variant = product.variants[0]
    assert variant.options == {"capacity": "12", "lid": "yes"}
    assert variant.price == Decimal("9.9")  # a float is read through its shortest repr
    assert variant.currency == "EUR"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"price": "-1"}, "price"),
        ({"price": "NaN"}, "price"),
        ({"price": "ten"}, "price"),
        ({"currency": "dollars"}, "currency"),
        ({"id": ""}, "id"),
        ({"options": {"size": ["S", "M"]}}, "options.size"),
        ({"colour": "red"}, "colour"),  # unknown fields are refused
    ],
)
def test_bad_variants_are_refused_naming_the_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Variant.model_validate({"id": "v", "price": "1", **data})
    assert field in {".".join(map(str, e["loc"])) for e in caught.value.errors()}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"title": ""}, "title"),
        ({"rating": 5.5}, "rating"),
        ({"rating": float("nan")}, "rating"),
        ({"rating_count": -1}, "rating_count"),
        ({"category": ["Clothing", " "]}, "category"),
        ({"attributes": {"fit": [1]}}, "attributes.fit.0"),
        (
            {"variants": [{"id": "a", "price": 1}, {"id": "a", "price": 2}]},
            "appears more than once",
        ),
        (
            {"variants": [{"id": "a", "price": 1}, {"id": "b", "price": 2, "currency": "EUR"}]},
            "mix currencies",
        ),
    ],
)
def test_bad_products_are_refused(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Product.model_validate({"id": "p", "title": "Thing", **data})


def test_models_are_frozen_and_survive_a_json_round_trip() -> None:
    product = jeans(Variant(id="a", options={"size": "30"}, price=Decimal("59.50")))
    with pytest.raises(ValidationError):
        product.title = "changed"
    with pytest.raises(ValidationError):
        product.variants[0].price = Decimal(1)
    again = Product.model_validate_json(product.model_dump_json())
    assert again == product
    assert again.variants[0].price == Decimal("59.50")


@pytest.mark.parametrize(
    "image",
    ["https://cdn.example.com/a/mug.jpg?w=400", "http://shop.test/m.png", "pictures/mug.PNG",
     "mug.webp", "a/b/c.gif"],
)  # fmt: skip
def test_a_picture_is_an_address_or_a_file_inside_the_catalogs_folder(image: str) -> None:
    assert Product(id="p", title="Mug", image=f"  {image} ").image == image


@pytest.mark.parametrize(
    "image",
    ["../mug.png", "a/../../mug.png", "/etc/mug.png", "a\\mug.png", "C:/mug.png", "mug.svg",
     "mug", "javascript:alert(1)", "https:/mug.png", "https://", "mug\n.png", "x" * 2049],
)  # fmt: skip
def test_any_other_picture_is_refused(image: str) -> None:
    with pytest.raises(ValidationError, match="image"):
        Product(id="p", title="Mug", image=image)


def test_a_blank_picture_is_none() -> None:
    assert Product(id="p", title="Mug", image="  ").image is None
