from __future__ import annotations

import numpy as np
import pytest

from cartagent.catalog import Product, synthetic_catalog
from cartagent.retrieval.product_vectors import (
    FIELD_WEIGHTS,
    TextVectors,
    embed_products,
    product_fields,
)
from cartagent.testing import HashingEmbedder


def product(pid: str, title: str, **extra: object) -> Product:
    return Product.model_validate({"id": pid, "title": title, **extra})


def test_fields_split_head_options_and_description() -> None:
    shoe = product(
        "p1",
        "Trail Runner",
        brand="Acme",
        category="Shoes > Running",
        attributes={"material": ["mesh"]},
        description="Light and grippy.",
        variants=[
            {"id": "v1", "price": "50", "options": {"size": "9", "color": "red"}},
            {"id": "v2", "price": "50", "options": {"size": "10", "color": "blue"}},
        ],
    )
    assert product_fields(shoe) == {
        "head": "Trail Runner. Acme. Shoes > Running. material: mesh",
        "options": "color: blue, red. size: 10, 9",
        "description": "Light and grippy.",
    }


def test_empty_fields_are_left_out() -> None:
    assert product_fields(product("p", "Mug")) == {"head": "Mug"}


def test_a_product_vector_is_the_normalised_weighted_sum_of_its_fields() -> None:
    embedder = HashingEmbedder(32)
    mug = product("p", "Mug", description="Holds coffee.")
    [got] = embed_products([mug], embedder)
    head, description = embedder.embed(["Mug", "Holds coffee."])
    expected = FIELD_WEIGHTS["head"] * head + FIELD_WEIGHTS["description"] * description
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert got.dtype == np.float32


def test_each_distinct_field_text_is_embedded_once_across_batches() -> None:
    embedder = HashingEmbedder(16)
    cache = TextVectors(embedder)
    products = list(synthetic_catalog(400, seed=3))
    first = embed_products(products[:200], cache)
    second = embed_products(products[200:], cache)
    distinct = {t for p in products for t in product_fields(p).values()}
    assert embedder.calls == cache.embedded == len(distinct) < 3 * len(products)
    again = embed_products(products, cache)
    assert embedder.calls == len(distinct)
    np.testing.assert_allclose(again, np.concatenate([first, second]), rtol=1e-6)


def test_the_cache_forgets_least_recently_used_texts_beyond_capacity() -> None:
    embedder = HashingEmbedder(8)
    cache = TextVectors(embedder, capacity=2)
    cache.vectors(["a", "b"])
    cache.vectors(["a"])  # b is now the oldest
    cache.vectors(["c"])
    cache.vectors(["a", "c"])
    assert embedder.calls == 3
    cache.vectors(["b"])
    assert embedder.calls == 4


def test_no_products_give_an_empty_matrix() -> None:
    assert embed_products([], HashingEmbedder(8)).shape == (0, 8)


def test_a_negative_capacity_is_refused() -> None:
    with pytest.raises(ValueError, match="capacity"):
        TextVectors(HashingEmbedder(8), capacity=-1)
