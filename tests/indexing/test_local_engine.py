"""LocalEngine: batches in source order, fingerprints, bad rows reported, only wanted embedded;
the source streamed, a batch at a time."""

from __future__ import annotations

import csv
import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cartagent.catalog import Product, RowProblem, read_catalog, synthetic_catalog, tau_catalog
from cartagent.errors import ConfigurationError
from cartagent.heap import frozen_heap
from cartagent.indexing import LocalEngine, PreparedBatch, build_index, content_hash
from cartagent.retrieval.product_vectors import embed_products, product_fields
from cartagent.testing import HashingEmbedder
from tests.conftest import TAU

PRODUCTS = list(synthetic_catalog(7, seed=5))


def write_jsonl(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    rows = [p.model_dump_json() for p in PRODUCTS]
    rows.insert(3, json.dumps({"id": "no-title"}))  # line 4
    return write_jsonl(tmp_path / "catalog.jsonl", rows)


def test_batches_keep_source_order_with_fingerprints_and_report_bad_rows(catalog: Path) -> None:
    problems: list[RowProblem] = []
    batches = list(
        LocalEngine().prepare(catalog, embedder=None, batch_size=3, on_problem=problems.append)
    )
    assert [len(batch) for batch in batches] == [3, 3, 1]
    products = [p for batch in batches for p in batch.products]
    assert products == PRODUCTS
    assert [h for batch in batches for h in batch.hashes] == [content_hash(p) for p in PRODUCTS]
    assert all(batch.vectors is None for batch in batches)
    assert [problem.line for problem in problems] == [4]
    assert problems[0].message.startswith("title:")


def test_only_wanted_fingerprints_are_embedded(catalog: Path) -> None:
    embedder = HashingEmbedder(dim=16)
    wanted = {content_hash(PRODUCTS[1]), content_hash(PRODUCTS[5])}
    batches = list(
        LocalEngine().prepare(
            catalog,
            embedder=embedder,
            batch_size=4,
            on_problem=lambda _: None,
            wanted=wanted.__contains__,
        )
    )
    assert embedder.calls == len(
        {text for p in PRODUCTS[1:6:4] for text in product_fields(p).values()}
    )
    vectors = [row for batch in batches if batch.vectors is not None for row in batch.vectors]
    assert len(vectors) == len(PRODUCTS)
    for product, vector in zip(PRODUCTS, vectors, strict=True):
        if content_hash(product) in wanted:
            expected = embed_products([product], HashingEmbedder(dim=16))[0]
            assert vector.tolist() == pytest.approx(expected.tolist())
        else:
            assert not vector.any()


def test_without_wanted_everything_is_embedded(catalog: Path) -> None:
    embedder = HashingEmbedder(dim=8)
    batches = list(
        LocalEngine().prepare(catalog, embedder=embedder, batch_size=100, on_problem=print)
    )
    assert embedder.calls == len({t for p in PRODUCTS for t in product_fields(p).values()})
    assert batches[0].vectors is not None and batches[0].vectors.shape == (len(PRODUCTS), 8)


def test_a_tau_bench_folder_or_its_products_file_is_read_as_tau() -> None:
    expected = tau_catalog(TAU)
    assert read_catalog(TAU, print) == expected
    assert read_catalog(TAU / "products.json", print) == expected


def test_an_unreadable_source_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        read_catalog(tmp_path / "missing.jsonl", print)
    (tmp_path / "catalog.txt").write_text("hello")
    with pytest.raises(ConfigurationError, match="cannot read"):
        read_catalog(tmp_path / "catalog.txt", print)
    with pytest.raises(ConfigurationError, match=r"holds no products\.json"):
        read_catalog(tmp_path, print)


def test_a_batch_size_below_one_is_refused(catalog: Path) -> None:
    with pytest.raises(ConfigurationError, match="batch_size"):
        next(LocalEngine().prepare(catalog, embedder=None, batch_size=0, on_problem=print))


# --- streaming: a build holds a batch of products, never the catalog -------------------------


def _live_products() -> int:
    return sum(isinstance(thing, Product) for thing in gc.get_objects())


def _write(path: Path, products: list[Product]) -> Path:
    """``products`` in the format ``path``'s suffix names (CSV: one row a variant)."""
    if path.suffix == ".jsonl":
        return write_jsonl(path, [p.model_dump_json() for p in products])
    if path.suffix == ".json":
        path.write_text(json.dumps([p.model_dump(mode="json") for p in products], indent=1))
        return path
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "title", "brand", "price", "options", "variant_id"])
        for p in products:
            for v in p.variants:
                options = json.dumps(v.options)
                writer.writerow([p.id, p.title, p.brand or "", v.price, options, v.id])
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_a_build_holds_a_batch_of_products_however_long_the_catalog(
    tmp_path: Path, suffix: str
) -> None:
    size, batch_size = 600, 25
    source = _write(tmp_path / f"catalog{suffix}", list(synthetic_catalog(size, seed=3)))
    live: list[int] = []

    class Watched:
        """The local engine, counting the products alive as it hands on each batch."""

        def prepare(self, *args: Any, **kwargs: Any) -> Iterator[PreparedBatch]:
            for batch in LocalEngine().prepare(*args, **kwargs):
                gc.collect()
                live.append(_live_products() - before)
                yield batch

        def close(self) -> None:
            pass

    # What lived before is frozen, out of the count: each count (and collection) walks only
    # what the build made, not the heap the session's earlier tests left.
    with frozen_heap():
        before = _live_products()
        report = build_index(source, tmp_path / "index", engine=Watched(), batch_size=batch_size)
    assert report.manifest.products == size
    assert len(live) == size // batch_size
    # the batch handed on, the one the build indexes and the reader's look-ahead: never all
    assert max(live) <= 3 * batch_size, live


def test_the_engine_reads_the_source_as_batches_are_asked_for(tmp_path: Path) -> None:
    source = _write(tmp_path / "catalog.jsonl", list(synthetic_catalog(50, seed=3)))
    batches = LocalEngine().prepare(source, embedder=None, batch_size=10, on_problem=print)
    first = next(batches)
    with source.open("a", encoding="utf-8") as handle:  # rows added after the first batch
        handle.write(next(iter(synthetic_catalog(1, seed=9))).model_dump_json() + "\n")
    assert len(first) == 10
    assert sum(len(batch) for batch in batches) == 41
