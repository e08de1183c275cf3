"""The default catalog searcher: hybrid, its vectors cached on disk by content."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from cartagent.catalog import Product, tau_catalog
from cartagent.errors import ConfigurationError
from cartagent.retrieval.catalog_search import (
    SearchMode,
    cached_dense_index,
    catalog_searcher,
    vectors_key,
)
from cartagent.retrieval.rules import parse
from cartagent.retrieval.search import Searcher
from cartagent.testing import HashingEmbedder
from tests.conftest import TAU


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=32)
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += len(texts)
        return super().embed(texts)


@pytest.fixture(scope="module")
def products() -> list[Product]:
    return tau_catalog(TAU)[:12]


def test_the_second_build_opens_the_saved_vectors(products: list[Product], tmp_path: Path) -> None:
    first = CountingEmbedder()
    built = cached_dense_index(products, first, tmp_path)
    assert first.texts > 0
    [saved] = (tmp_path / "vectors").iterdir()
    assert saved.name == vectors_key(products, first)
    again = CountingEmbedder()
    opened = cached_dense_index(products, again, tmp_path)
    assert again.texts == 0  # nothing embedded: the vectors were read back
    assert len(opened) == len(built)
    query = parse("red t-shirt")
    assert [h.product.id for h in opened.search(query, 5)] == [
        h.product.id for h in built.search(query, 5)
    ]


def test_a_changed_catalog_or_embedder_gets_new_vectors(
    products: list[Product], tmp_path: Path
) -> None:
    embedder = CountingEmbedder()
    renamed = [products[0].model_copy(update={"title": "Renamed"}), *products[1:]]
    assert vectors_key(products, embedder) != vectors_key(renamed, embedder)
    assert vectors_key(products, embedder) != vectors_key(products, HashingEmbedder(dim=16))
    cached_dense_index(products, embedder, tmp_path)
    cached_dense_index(renamed, embedder, tmp_path)
    assert len(list((tmp_path / "vectors").iterdir())) == 2


def test_an_unreadable_cache_is_built_again(products: list[Product], tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    cached_dense_index(products, embedder, tmp_path)
    [saved] = (tmp_path / "vectors").iterdir()
    (saved / "ids.json").write_text("[")  # torn
    again = CountingEmbedder()
    index = cached_dense_index(products, again, tmp_path)
    assert again.texts > 0 and len(index) == len(products)
    reopened = CountingEmbedder()
    cached_dense_index(products, reopened, tmp_path)
    assert reopened.texts == 0


def test_each_mode(products: list[Product], tmp_path: Path) -> None:
    def searcher(mode: SearchMode) -> Searcher:
        return catalog_searcher(
            products, parse, mode=mode, cache=tmp_path, embedder=CountingEmbedder
        )

    hybrid, dense, lexical = searcher("hybrid"), searcher("dense"), searcher("lexical")
    assert hybrid.dense is not None and lexical.dense is None and dense.dense is None
    assert "embed" in hybrid.search("red t-shirt").timings
    assert "embed" in dense.search("red t-shirt").timings
    assert "embed" not in lexical.search("red t-shirt").timings
    with pytest.raises(ConfigurationError, match="unknown search mode"):
        searcher("semantic")  # type: ignore[arg-type]


def test_a_repeated_query_is_embedded_once(products: list[Product], tmp_path: Path) -> None:
    made: list[CountingEmbedder] = []

    def counting() -> CountingEmbedder:
        made.append(CountingEmbedder())
        return made[-1]

    searcher = catalog_searcher(products, parse, cache=tmp_path, embedder=counting)
    searcher.search("red t-shirt")
    first = made[0].texts
    searcher.search("red t-shirt")
    assert made[0].texts == first
    searcher.search("blue backpack")
    assert made[0].texts > first
    uncached = catalog_searcher(products, parse, cache=tmp_path, embedder=counting, query_cache=0)
    uncached.search("red t-shirt")  # the vectors open from the cache: only queries embed
    once = made[1].texts
    uncached.search("red t-shirt")
    assert once > 0 and made[1].texts == 2 * once
