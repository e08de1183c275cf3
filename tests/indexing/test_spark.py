"""SparkEngine: the same products, hashes, vectors and problems as the local loader."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cartagent.catalog import LoadReport, Product, RowProblem, load_products, synthetic_catalog
from cartagent.errors import ConfigurationError
from cartagent.indexing import PreparedBatch, content_hash
from cartagent.indexing.spark import SparkEngine
from cartagent.retrieval.product_vectors import embed_products
from cartagent.testing import HashingEmbedder

pytestmark = pytest.mark.spark

PARTITION_BYTES = 4096  # the test files span several partitions
COLUMNS = (
    "id", "title", "description", "brand", "category", "attributes", "price", "currency",
    "available", "rating", "rating_count", "options", "variant_id",
)  # fmt: skip


@pytest.fixture(scope="module")
def engine() -> Iterator[SparkEngine]:
    conf = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.files.maxPartitionBytes": str(PARTITION_BYTES),
    }
    with SparkEngine("local[2]", conf=conf) as spark_engine:
        yield spark_engine


@contextmanager
def partition_bytes(engine: SparkEngine, size: int) -> Iterator[None]:
    settings = engine.session.conf
    settings.set("spark.sql.files.maxPartitionBytes", str(size))
    try:
        yield
    finally:
        settings.set("spark.sql.files.maxPartitionBytes", str(PARTITION_BYTES))


def products(n: int, seed: int) -> list[Product]:
    return list(synthetic_catalog(n, seed=seed))


def partitions(engine: SparkEngine, path: Path) -> int:
    return engine.session.read.text(str(path)).rdd.getNumPartitions()


def prepare(
    engine: SparkEngine, path: Path, **options: Any
) -> tuple[list[PreparedBatch], list[RowProblem]]:
    problems: list[RowProblem] = []
    options.setdefault("embedder", None)
    options.setdefault("batch_size", 7)
    batches = list(engine.prepare(path, on_problem=problems.append, **options))
    return batches, problems


def assert_same_as_local(engine: SparkEngine, path: Path, *, embed: bool = False) -> LoadReport:
    local = load_products(path)
    embedder = HashingEmbedder(dim=32) if embed else None
    batches, problems = prepare(engine, path, embedder=embedder)
    assert [p for batch in batches for p in batch.products] == local.products
    assert problems == local.problems
    assert [h for batch in batches for h in batch.hashes] == [
        content_hash(p) for p in local.products
    ]
    assert all(1 <= len(batch) <= 7 for batch in batches)
    if embedder is None:
        assert all(batch.vectors is None for batch in batches)
    else:
        vectors = np.concatenate([batch.vectors for batch in batches if batch.vectors is not None])
        assert vectors.dtype == np.float32
        expected = embed_products(local.products, HashingEmbedder(dim=32))
        np.testing.assert_allclose(vectors, expected, atol=1e-6)
    return local


# --- JSON Lines ---------------------------------------------------------------------------------


def write_jsonl(path: Path) -> Path:
    good = products(30, seed=1)
    rows = [b"\xef\xbb\xbf" + good[0].model_dump_json().encode()]  # a BOM on line 1
    rows += [p.model_dump_json().encode() for p in good[1:15]]
    rows += [
        b"",
        b'{"id": "c1", "title": ""}',
        b'{"id": "c2", "title": ',
        b'{"id": "c3", "title": "Bad \xff byte"}',
        b'"a string"',
        b'{"id": "c4", "title": "Cup", "variants": [{"id": "v", "price": "2.50"}]}\r',
    ]
    rows += [p.model_dump_json().encode() for p in good[15:]]
    rows += [good[3].model_dump_json().encode(), b'{"id": "c5", "title": "Plate"']  # no newline
    path.write_bytes(b"\n".join(rows))
    return path


def test_json_lines_give_the_local_loaders_products_hashes_and_problems(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "catalog.jsonl")
    assert partitions(engine, path) >= 3
    local = assert_same_as_local(engine, path)
    assert len(local.products) == 31
    assert [p.line for p in local.problems] == [17, 18, 19, 20, 37, 38]


def test_embedding_in_executors_gives_the_drivers_vectors(
    engine: SparkEngine, tmp_path: Path
) -> None:
    assert_same_as_local(engine, write_jsonl(tmp_path / "catalog.jsonl"), embed=True)


def test_only_wanted_fingerprints_are_embedded_the_others_get_zero_vectors(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "catalog.jsonl")
    local = load_products(path).products
    keep = {content_hash(p) for p in local[::3]}
    batches, _ = prepare(
        engine, path, embedder=HashingEmbedder(dim=16), wanted=keep.__contains__, batch_size=50
    )
    [batch] = batches
    assert batch.vectors is not None
    for product, content, vector in zip(batch.products, batch.hashes, batch.vectors, strict=True):
        if content in keep:
            expected = embed_products([product], HashingEmbedder(dim=16))[0]
            np.testing.assert_allclose(vector, expected, atol=1e-6)
        else:
            assert not vector.any()


def test_batches_hold_at_most_batch_size_products_in_file_order(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.jsonl"
    catalog = products(23, seed=2)
    path.write_text("".join(p.model_dump_json() + "\n" for p in catalog))
    batches, problems = prepare(engine, path, batch_size=5)
    assert [len(batch) for batch in batches] == [5, 5, 5, 5, 3]
    assert [p for batch in batches for p in batch.products] == catalog
    assert problems == []


# --- CSV ----------------------------------------------------------------------------------------


def variant_rows(product: Product) -> list[dict[str, str]]:
    """The CSV rows of ``product``: product cells on the first row only."""
    first = {
        "id": product.id,
        "title": product.title,
        "description": product.description,
        "brand": product.brand or "",
        "category": " > ".join(product.category),
        "attributes": json.dumps({k: list(v) for k, v in product.attributes.items()}),
        "rating": "" if product.rating is None else str(product.rating),
        "rating_count": str(product.rating_count),
    }
    rows = []
    for n, variant in enumerate(product.variants):
        row = dict(first) if n == 0 else {"id": product.id}
        row.update(
            price=str(variant.price),
            currency=variant.currency,
            available="yes" if variant.available else "no",
            options=json.dumps(variant.options),
            variant_id=variant.id,
        )
        rows.append(row)
    return rows or [first]


def write_csv(path: Path) -> Path:
    catalog = products(12, seed=3)
    per_product = [variant_rows(p) for p in catalog]
    # the second and later variants come after every product's first, so that a product's
    # rows lie in several partitions
    rows = [rows[0] for rows in per_product] + [row for rows in per_product for row in rows[1:]]
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, [*COLUMNS, "colour"], lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows[:5])
    long = "Line one of a long description.\n" * 280 + 'It says "hello",\r\nand ends.'
    writer.writerow({"id": "m1", "title": "Multi-line Mug", "description": long, "price": "9.50"})
    writer.writerow({"id": "b1", "title": "Rated Bowl", "rating": "9", "price": "3"})
    writer.writerow({"id": "", "title": "No id", "price": "1"})
    writer.writerows(rows[5:20])
    writer.writerow({"id": "b1", "price": "4", "variant_id": "b1-x"})
    writer.writerow({"id": catalog[0].id, "title": "Another title", "price": "1"})
    writer.writerow({"id": catalog[1].id, "options": "size=XXS", "variant_id": "nope"})
    text = out.getvalue() + "only,three,cells\r\n"
    text += "cr1,Bare CR mug,,,,,1.00,,,,,,,\rcr2,Bare CR cup,,,,,2.00,,,,,,,\r\n\r\n"
    out = io.StringIO(newline="")
    csv.DictWriter(out, [*COLUMNS, "colour"], lineterminator="\r\n").writerows(rows[20:])
    path.write_text(text + out.getvalue(), encoding="utf-8", newline="")
    return path


@pytest.mark.parametrize("size", [PARTITION_BYTES, 1500])
def test_csv_rows_are_grouped_by_product_across_partitions_like_the_local_loader(
    engine: SparkEngine, tmp_path: Path, size: int
) -> None:
    path = write_csv(tmp_path / "catalog.csv")
    data = path.read_bytes()
    start, end = data.index(b"m1,"), data.index(b"and ends.")
    assert end // size - start // size >= 2  # one partition lies wholly inside a quoted cell
    with partition_bytes(engine, size):
        assert partitions(engine, path) >= 4
        local = assert_same_as_local(engine, path, embed=True)
    assert len(local.products) == 15
    assert len(local.problems) == 7
    assert "Line one" in next(p for p in local.products if p.id == "m1").description


def test_a_csv_header_cut_by_a_partition_boundary_is_read_whole(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.csv"
    note = "a note\n" * 80
    path.write_text(f'id,title,price,"{note}"\r\np1,Mug,1,x\r\np2,Cup,2,y\r\n', newline="")
    with partition_bytes(engine, 256):
        assert partitions(engine, path) >= 3
        local = assert_same_as_local(engine, path)
    assert [p.id for p in local.products] == ["p1", "p2"]
    assert "ignored unknown column" in local.problems[0].message


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\r\n\r\nid,title,price\r\np1,Mug,1\r\n",
        "id,title\r\np1,Mug\r\n",
        "id,title,price,title\r\np1,Mug,1,Mug\r\n",
    ],
    ids=["empty", "blank-header", "missing-column", "duplicated-column"],
)
def test_csv_header_problems_stop_the_build_as_in_the_local_loader(
    engine: SparkEngine, tmp_path: Path, text: str
) -> None:
    path = tmp_path / "catalog.csv"
    path.write_text(text, newline="")
    local = assert_same_as_local(engine, path)
    assert local.products == []
    assert len(local.problems) == 1


def test_csv_bytes_that_are_not_utf8_end_the_read_as_in_the_local_loader(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = write_csv(tmp_path / "catalog.csv")
    data = path.read_bytes()
    cut = data.index(b"\r\n", len(data) // 2) + 2
    path.write_bytes(data[:cut] + b"zz,\xff\xfe,1\r\n" + data[cut:])
    local = assert_same_as_local(engine, path)
    assert "not valid UTF-8" in local.problems[0].message


def test_a_csv_cell_too_large_for_the_csv_module_ends_the_read_there(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.csv"
    huge = "x" * (csv.field_size_limit() + 1)
    path.write_text(f"id,title,price\r\np1,Mug,1\r\np2,{huge},2\r\np3,Cup,3\r\n", newline="")
    with partition_bytes(engine, len(huge) // 3):  # fewer, larger partitions: fewer tasks
        local = assert_same_as_local(engine, path)
    assert [p.id for p in local.products] == ["p1"]
    assert "nothing after it was read" in local.problems[-1].message


# --- Parquet and JSON ---------------------------------------------------------------------------


def test_flat_parquet_rows_are_grouped_by_product_like_the_local_loader(
    engine: SparkEngine, tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    catalog = products(8, seed=4)
    per_product = [variant_rows(p) for p in catalog]
    rows = [rows[0] for rows in per_product] + [row for rows in per_product for row in rows[1:]]
    rows.insert(3, {"id": "x1", "title": "Bad price", "price": "free"})
    rows.insert(5, {"id": "", "title": "No id", "price": "1"})
    rows.append({"id": catalog[2].id, "title": "Renamed", "price": "2"})
    table = pa.Table.from_pylist([{c: row.get(c) for c in [*COLUMNS, "Extra"]} for row in rows])
    path = tmp_path / "catalog.parquet"
    pq.write_table(table, path, row_group_size=4)
    local = assert_same_as_local(engine, path)
    assert len(local.products) == 8
    assert [p.line for p in local.problems] == [0, 4, 6, len(rows)]


def test_nested_parquet_rows_are_products_like_the_local_loader(
    engine: SparkEngine, tmp_path: Path
) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [p.model_dump(mode="json") for p in products(12, seed=5)]
    for row in rows:
        for variant in row["variants"]:
            variant["price"] = float(variant["price"])
    rows[2]["title"] = ""
    rows[7]["rating"] = 7.5
    rows.append(dict(rows[4]))
    path = tmp_path / "catalog.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=3)
    local = assert_same_as_local(engine, path, embed=True)
    assert [p.line for p in local.problems] == [3, 8, 13]


def test_a_json_document_gives_each_product_its_exact_line(
    engine: SparkEngine, tmp_path: Path
) -> None:
    items: list[Any] = [p.model_dump(mode="json") for p in products(20, seed=6)]
    items[4] = "not a product"
    items[9]["variants"][0]["price"] = "a lot"
    items.append(dict(items[1]))
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(items, indent=1) + "\n", encoding="utf-8")
    local = assert_same_as_local(engine, path, embed=True)
    assert len(local.problems) == 3


def test_broken_json_keeps_what_came_before_like_the_local_loader(
    engine: SparkEngine, tmp_path: Path
) -> None:
    path = tmp_path / "catalog.json"
    path.write_text('[\n {"id": "p1", "title": "Mug"},\n {"id": "p2", "title": "Cup"\n]\n')
    local = assert_same_as_local(engine, path)
    assert [p.id for p in local.products] == ["p1"]


# --- arguments and the session ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "batch_size", "message"),
    [
        ("catalog.jsonl", 0, "batch_size"),
        ("catalog.xml", 5, "suffix"),
        ("missing.csv", 5, "does not exist"),
        ("products.json", 5, "tau-bench"),
    ],
)
def test_bad_arguments_are_refused_when_prepare_is_called(
    tmp_path: Path, name: str, batch_size: int, message: str
) -> None:
    if name != "missing.csv":
        tau = {"1": {"product_id": "1", "name": "Mug", "variants": {}}}
        (tmp_path / name).write_text(json.dumps(tau))
    with pytest.raises(ConfigurationError, match=message):
        SparkEngine("local[1]").prepare(
            tmp_path / name, embedder=None, batch_size=batch_size, on_problem=print
        )


class _LockedEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=8)
        self.lock = threading.Lock()


def test_an_embedder_that_does_not_pickle_is_refused(engine: SparkEngine, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "catalog.jsonl")
    with pytest.raises(ConfigurationError, match="does not pickle"):
        prepare(engine, path, embedder=_LockedEmbedder())


def test_conf_entries_reach_the_session_unchanged(engine: SparkEngine) -> None:
    assert engine.session.conf.get("spark.sql.files.maxPartitionBytes") == str(PARTITION_BYTES)


def test_closing_an_engine_that_joined_a_running_session_leaves_it_running(
    engine: SparkEngine,
) -> None:
    running = engine.session
    with SparkEngine("local[2]") as joined:
        assert joined.session is running
    assert running.range(3).count() == 3


@pytest.mark.slow
def test_minilm_embeds_in_executors_as_in_the_driver(engine: SparkEngine, tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from cartagent.retrieval.embeddings import MiniLMEmbedder

    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(p.model_dump_json() + "\n" for p in products(5, seed=8)))
    embedder = MiniLMEmbedder()
    [batch], _ = prepare(engine, path, embedder=embedder)
    assert batch.vectors is not None
    expected = embed_products(batch.products, embedder)
    np.testing.assert_allclose(batch.vectors, expected, atol=1e-4)


def test_the_catalog_build_command_builds_a_searchable_index_on_spark(
    engine: SparkEngine, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from cartagent.cli.catalog import catalog
    from cartagent.cli.search import search

    source = write_jsonl(tmp_path / "catalog.jsonl")
    out = tmp_path / "index"
    built = CliRunner().invoke(
        catalog,
        ["build", str(source), "--out", str(out), "--engine", "spark", "--master", "local[2]"],
    )
    assert built.exit_code == 0, built.output
    local = load_products(source)
    assert f"{source}:{local.problems[0].line}: skipped" in built.stderr
    rate = built.stdout.splitlines()[-1].split(", ")[-1]
    assert float(rate.removesuffix(" products/s")) > 0  # a few products: not rounded to 0
    first = local.products[0]
    found = CliRunner().invoke(search, [first.title, "--index", str(out), "--json", "--k", "3"])
    assert found.exit_code == 0, found.output
    assert first.id in found.output
    # the engine's session outlives the command: it was not the command's to stop
    assert engine.session.range(1).count() == 1


def test_a_local_session_stays_on_loopback(engine: SparkEngine) -> None:
    conf = engine.session.sparkContext.getConf()
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.ui.enabled") == "false"
