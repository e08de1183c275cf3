"""DenseIndex save/open, product lookups, and incremental updates without re-embedding."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from cartagent.catalog import Product, synthetic_catalog
from cartagent.retrieval.dense import DenseIndex
from cartagent.retrieval.filters import Hit
from cartagent.retrieval.product_vectors import embed_products
from cartagent.retrieval.query import SearchQuery
from cartagent.testing import HashingEmbedder

pytest.importorskip("faiss")

CATALOG = list(synthetic_catalog(200, seed=11))
BY_ID = {p.id: p for p in CATALOG}


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.product.id for h in hits]


def queries() -> list[SearchQuery]:
    return [SearchQuery(text=p.title) for p in CATALOG[:15]]


def embed(products: Sequence[Product], embedder: HashingEmbedder) -> np.ndarray:
    return embed_products(products, embedder)


def renamed(product: Product, title: str) -> Product:
    return product.model_copy(update={"title": title, "description": title})


@pytest.mark.parametrize("exact_below", [10_000, 0], ids=["exact", "approximate"])
def test_a_saved_index_opens_and_answers_alike(tmp_path: Path, exact_below: int) -> None:
    embedder = HashingEmbedder(dim=32)
    built = DenseIndex.build(CATALOG, embedder, exact_below=exact_below, ef_search=256)
    built.save(tmp_path / "dense")
    files = sorted(p.name for p in (tmp_path / "dense").iterdir())
    expected = ["dense.json", "ids.json", "vectors.npy"]
    assert files == sorted(expected + (["hnsw.faiss"] if exact_below == 0 else []))
    meta = json.loads((tmp_path / "dense" / "dense.json").read_text())
    assert meta["embedder"] == "HashingEmbedder" and meta["dim"] == 32
    assert meta["products"] == meta["rows"] == len(CATALOG)

    opened = DenseIndex.open(tmp_path / "dense", embedder, products=BY_ID.get, ef_search=256)
    assert opened.approximate == built.approximate and len(opened) == len(CATALOG)
    for query in queries():
        assert ids(opened.search(query, 5)) == ids(built.search(query, 5))
    assert opened.get(CATALOG[3].id) is CATALOG[3]


def test_hits_are_materialised_through_the_lookup_only_for_candidates(tmp_path: Path) -> None:
    embedder = HashingEmbedder(dim=32)
    DenseIndex.build(CATALOG, embedder).save(tmp_path)
    asked: list[str] = []

    def lookup(product_id: str) -> Product | None:
        asked.append(product_id)
        return BY_ID.get(product_id)

    index = DenseIndex.open(tmp_path, embedder, products=lookup)
    hits = index.search(SearchQuery(text=CATALOG[7].title), 3)
    assert hits[0].product.id == CATALOG[7].id
    assert 3 <= len(asked) <= 64  # one page of candidates, not the catalog


def test_an_index_without_a_lookup_cannot_search(tmp_path: Path) -> None:
    embedder = HashingEmbedder(dim=16)
    index = DenseIndex.from_vectors([p.id for p in CATALOG], embed(CATALOG, embedder), embedder)
    with pytest.raises(RuntimeError, match="products="):
        index.search(SearchQuery(text="anything"))
    index.save(tmp_path)  # saving needs no products
    assert len(DenseIndex.open(tmp_path, embedder)) == len(CATALOG)


def test_open_refuses_vectors_of_another_embedder_or_no_index(tmp_path: Path) -> None:
    DenseIndex.build(CATALOG[:5], HashingEmbedder(dim=16)).save(tmp_path)
    with pytest.raises(ValueError, match="16 dimensions"):
        DenseIndex.open(tmp_path, HashingEmbedder(dim=32))
    with pytest.raises(FileNotFoundError):
        DenseIndex.open(tmp_path / "nothing", HashingEmbedder(dim=16))


def test_updated_replaces_removes_and_adds_without_embedding_again() -> None:
    embedder = HashingEmbedder(dim=64)
    catalog = {p.id: p for p in CATALOG}
    index = DenseIndex.build(CATALOG, embedder)
    changed = renamed(CATALOG[0], "Zebra Quokka Xylophone")
    added = renamed(CATALOG[1], "Walrus Yodel Kazoo").model_copy(update={"id": "new-1"})
    catalog.update({changed.id: changed, added.id: added})
    del catalog[CATALOG[2].id]
    vectors = embed([changed, added], embedder)
    before = embedder.calls
    updated = index.updated(
        [changed.id, added.id], vectors, remove=[CATALOG[2].id, "unknown"], products=catalog.get
    )
    assert embedder.calls == before  # nothing embedded again
    assert len(updated) == len(CATALOG)
    assert updated.get(CATALOG[2].id) is None and updated.get("new-1") is added
    assert ids(updated.search(SearchQuery(text="zebra quokka xylophone"), 1)) == [changed.id]
    assert ids(updated.search(SearchQuery(text="walrus yodel kazoo"), 1)) == ["new-1"]
    with pytest.raises(RuntimeError, match="updated"):
        index.search(SearchQuery(text="anything"))


def test_updated_index_searches_the_new_vectors(tmp_path: Path) -> None:
    embedder = HashingEmbedder(dim=64)
    catalog = {p.id: p for p in CATALOG}
    index = DenseIndex.build(CATALOG, embedder)
    index.save(tmp_path)
    opened = DenseIndex.open(tmp_path, embedder, products=catalog.get)
    changed = renamed(CATALOG[0], "Zebra Quokka Xylophone")
    catalog[changed.id] = changed
    del catalog[CATALOG[2].id]
    updated = opened.updated([changed.id], embed([changed], embedder), remove=[CATALOG[2].id])
    hits = updated.search(SearchQuery(text="zebra quokka xylophone"), 3)
    assert ids(hits)[0] == changed.id and hits[0].product.title == "Zebra Quokka Xylophone"
    everything = updated.search(SearchQuery(text=CATALOG[2].title), len(CATALOG))
    assert CATALOG[2].id not in ids(everything) and len(everything) == len(CATALOG) - 1


def test_an_approximate_index_keeps_its_graph_until_a_quarter_is_tombstones(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(dim=32)
    catalog = {p.id: p for p in CATALOG}
    index = DenseIndex.build(CATALOG, embedder, exact_below=0, ef_search=256)
    changed = [renamed(p, f"Zebra Quokka {i}") for i, p in enumerate(CATALOG[:10])]
    catalog.update({p.id: p for p in changed})
    index = index.updated([p.id for p in changed], embed(changed, embedder), products=catalog.get)
    index.save(tmp_path / "a")
    meta = json.loads((tmp_path / "a" / "dense.json").read_text())
    assert (meta["rows"], meta["products"], meta["hnsw"]) == (210, 200, "hnsw.faiss")
    reopened = DenseIndex.open(tmp_path / "a", embedder, products=catalog.get, ef_search=256)
    assert ids(reopened.search(SearchQuery(text="zebra quokka 3"), 1)) == [CATALOG[3].id]

    gone = [p.id for p in CATALOG[10:70]]  # 70 of 210 rows dead: compact, rebuild the graph
    for product_id in gone:
        del catalog[product_id]
    compacted = reopened.updated(remove=gone)
    compacted.save(tmp_path / "b")
    meta = json.loads((tmp_path / "b" / "dense.json").read_text())
    assert (meta["rows"], meta["products"]) == (140, 140) and compacted.approximate
    found = compacted.search(SearchQuery(text="zebra quokka 3"), 200)
    assert ids(found)[0] == CATALOG[3].id and not set(gone) & set(ids(found))


def test_an_exact_index_that_grows_past_exact_below_becomes_approximate() -> None:
    embedder = HashingEmbedder(dim=16)
    index = DenseIndex.build(CATALOG[:5], embedder, exact_below=8)
    assert not index.approximate
    more = CATALOG[5:10]
    grown = index.updated([p.id for p in more], embed(more, embedder))
    assert grown.approximate and len(grown) == 10


def test_updated_checks_its_vectors() -> None:
    embedder = HashingEmbedder(dim=16)
    index = DenseIndex.build(CATALOG[:5], embedder)
    with pytest.raises(ValueError, match="shape"):
        index.updated(["a", "b"], np.zeros((1, 16), dtype=np.float32))
    with pytest.raises(ValueError, match="more than once"):
        index.updated(["a", "a"], np.zeros((2, 16), dtype=np.float32))


def test_saving_over_an_open_index_leaves_it_readable(tmp_path: Path) -> None:
    embedder = HashingEmbedder(dim=16)
    DenseIndex.build(CATALOG[:50], embedder).save(tmp_path)
    opened = DenseIndex.open(tmp_path, embedder, products=BY_ID.get)
    query = SearchQuery(text=CATALOG[4].title)
    expected = ids(opened.search(query, 3))
    DenseIndex.build(CATALOG[100:120], embedder).save(tmp_path)
    assert ids(opened.search(query, 3)) == expected  # still reads the files it mapped
    assert len(DenseIndex.open(tmp_path, embedder)) == 20
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_dense_search_checks_at_most_max_candidates_products() -> None:
    from decimal import Decimal

    from cartagent.catalog import Variant
    from cartagent.retrieval.query import PriceRange

    products = [
        Product(
            id=f"p{i}",
            title=f"Blue mug {i}",
            variants=(Variant(id=f"v{i}", options={}, price=Decimal(10)),),
        )
        for i in range(300)
    ]
    by_id = {p.id: p for p in products}
    looked_up: list[str] = []

    def lookup(product_id: str) -> Product | None:
        looked_up.append(product_id)
        return by_id.get(product_id)

    embedder = HashingEmbedder(dim=32)
    index = DenseIndex.from_vectors(
        [p.id for p in products],
        embed_products(products, embedder),
        embedder,
        products=lookup,
    )
    index.max_candidates = 100
    nothing_matches = SearchQuery(text="blue mug", price=PriceRange(max=Decimal(1)))
    assert index.search(nothing_matches, 5) == []
    assert len(looked_up) == 100
    looked_up.clear()
    assert len(index.search(SearchQuery(text="blue mug"), 5)) == 5
    assert len(looked_up) == 5
