"""synthetic_catalog: deterministic, realistic, streamed."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from decimal import Decimal

import pytest

from cartagent.catalog import Product, synthetic_catalog
from cartagent.catalog.synthetic import KINDS


@pytest.fixture(scope="module")
def sample() -> list[Product]:
    return list(synthetic_catalog(3000, seed=11))


def test_the_same_seed_gives_the_same_products_and_another_seed_others() -> None:
    first = list(synthetic_catalog(300, seed=7))
    assert list(synthetic_catalog(300, seed=7)) == first
    other = list(synthetic_catalog(300, seed=8))
    assert [p.title for p in other] != [p.title for p in first]
    assert sum(a.model_dump(exclude={"id"}) != b.model_dump(exclude={"id"}) for a, b in zip(
        first, other, strict=True
    )) > 290  # fmt: skip
    # a shorter stream is a prefix of a longer one
    assert list(synthetic_catalog(40, seed=7)) == first[:40]


@pytest.mark.parametrize("n", [0, 1, 37])
def test_n_products_with_unique_ids(n: int) -> None:
    products = list(synthetic_catalog(n))
    assert len(products) == n
    assert len({p.id for p in products}) == n


def test_negative_n_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        list(synthetic_catalog(-1))


def test_it_streams() -> None:
    stream = synthetic_catalog(10**12, seed=3)  # far too many to build: only a few are made
    assert len(list(itertools.islice(stream, 5))) == 5


def test_products_are_what_validation_would_make(sample: list[Product]) -> None:
    for product in sample[:500]:
        validated = Product.model_validate(product.model_dump())
        assert validated == product
        assert Product.model_validate_json(product.model_dump_json()) == product
        assert product.model_fields_set == validated.model_fields_set


def test_titles_brands_and_categories_look_like_a_shop(sample: list[Product]) -> None:
    nouns = {kind.noun for kind in KINDS}
    departments = Counter(p.category[0] for p in sample)
    assert len(departments) >= 8
    assert len({p.brand for p in sample}) >= 100
    assert len({p.title for p in sample}) > len(sample) // 3
    for product in sample:
        assert product.brand and product.title.startswith(product.brand + " ")
        assert any(product.title.endswith(noun) for noun in nouns)
        assert len(product.category) == 3 and all(product.category)
        assert product.attributes and all(
            len(values) == 1 and values[0] for values in product.attributes.values()
        )
        assert product.description.startswith(tuple(nouns)) and product.brand in product.description
    jeans = [p for p in sample if p.category[2] == "Jeans"]
    assert jeans and all(re.search(r"\b(Women|Men)'s\b", p.title) for p in jeans)
    assert {p.category[1] for p in jeans} == {"Women", "Men"}


def test_variants_have_sizes_colours_prices_and_stock(sample: list[Product]) -> None:
    variants = [v for p in sample for v in p.variants]
    assert len(variants) > 3 * len(sample)
    for product in sample:
        assert product.variants
        assert len({v.id for v in product.variants}) == len(product.variants)
        assert len({tuple(sorted(v.options.items())) for v in product.variants}) == len(
            product.variants
        )
    for variant in variants:
        assert variant.price > 0
        assert variant.price.as_tuple().exponent == -2  # dollars and cents
        assert str(variant.price)[-2:] in {"99", "49", "00", "95"}
        assert variant.currency == "USD"
    option_names = Counter(name for v in variants for name in v.options)
    assert {"size", "color", "storage", "capacity", "pack"} <= set(option_names)
    unavailable = sum(not v.available for v in variants) / len(variants)
    assert 0.05 < unavailable < 0.25
    prices = [p.price_min for p in sample if p.price_min is not None]
    assert min(prices) < Decimal(20) and max(prices) > Decimal(500)
    # bigger capacities cost more
    bottles = [p for p in sample if p.title.endswith("Water Bottle") and len(p.variants) > 3]
    assert bottles
    for bottle in bottles:
        by_capacity = {v.options["capacity"]: v.price for v in bottle.variants}
        ordered = [by_capacity[c] for c in ("16 oz", "24 oz", "32 oz", "40 oz") if c in by_capacity]
        assert ordered == sorted(ordered)


def test_ratings_are_plausible(sample: list[Product]) -> None:
    rated = [p for p in sample if p.rating is not None]
    assert 0.8 < len(rated) / len(sample) < 0.97
    assert all(1 <= p.rating <= 5 and p.rating_count >= 1 for p in rated if p.rating)
    assert all(p.rating_count == 0 for p in sample if p.rating is None)
    assert 3.9 < sum(p.rating or 0 for p in rated) / len(rated) < 4.5
