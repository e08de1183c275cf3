"""``cartagent catalog build`` and ``cartagent search --index`` through click's test runner."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cartagent.catalog import Product, synthetic_catalog
from cartagent.cli.catalog import catalog, summary
from cartagent.cli.search import search
from cartagent.data import tau_retail
from cartagent.indexing import BuildReport
from cartagent.retrieval.embeddings import EMBEDDERS
from cartagent.retrieval.index_folder import BuildCounts, Manifest, read_manifest
from cartagent.testing import HashingEmbedder
from tests.conftest import TAU

PRODUCTS = list(synthetic_catalog(30, seed=4))


@pytest.fixture
def hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--embedder hashing``: the test embedder instead of MiniLM."""
    monkeypatch.setitem(EMBEDDERS, "hashing", lambda options: HashingEmbedder(dim=128))


def write(path: Path, products: list[Product], bad_line: int | None = None) -> Path:
    rows = [p.model_dump_json() for p in products]
    if bad_line is not None:
        rows.insert(bad_line - 1, '{"id": "no-title"}')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def run(*args: str) -> Result:
    return CliRunner().invoke(catalog, ["build", *args])


def test_build_reports_bad_rows_shows_progress_and_sums_up(tmp_path: Path) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS, bad_line=3)
    result = run(str(source), "--out", str(tmp_path / "index"))
    assert result.exit_code == 0, result.output
    assert f"{source}:3: skipped: title: Field required" in result.stderr
    assert "read" in result.stderr and "products/s" in result.stderr  # the bars
    lines = result.stdout.splitlines()
    assert lines[0] == f"indexed 30 products in {tmp_path / 'index'} (no previous build)"
    assert lines[1] == (
        "added 30, updated 0, removed 0, unchanged 0; embedded 0; skipped 1 bad row"
    )
    assert lines[2].endswith("products/s")
    assert read_manifest(tmp_path / "index").counts.skipped_rows == 1


def test_quiet_hides_the_bars_but_not_the_bad_rows(tmp_path: Path) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS, bad_line=1)
    result = run(str(source), "--out", str(tmp_path / "index"), "--quiet")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"{source}:1: skipped: title: Field required\n"


@pytest.mark.usefixtures("hashing")
def test_a_dense_build_updates_incrementally_and_searches_hybrid(tmp_path: Path) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS)
    out = str(tmp_path / "index")
    first = run(str(source), "--out", out, "--dense", "--embedder", "hashing", "--quiet")
    assert first.exit_code == 0, first.output
    assert "(no previous build, dense (hashing))" in first.stdout
    changed = PRODUCTS[5].model_copy(update={"title": "Zebra Quokka Xylophone"})
    write(source, [changed if p.id == changed.id else p for p in PRODUCTS[:-1]])
    second = run(str(source), "--out", out, "--dense", "--embedder", "hashing", "--quiet")
    assert second.exit_code == 0, second.output
    assert "added 0, updated 1, removed 1, unchanged 28; embedded 1;" in second.stdout

    found = CliRunner().invoke(search, ["zebra quokka xylophone", "--index", out, "--json"])
    assert found.exit_code == 0, found.output
    data = json.loads(found.stdout)
    assert data["hits"][0]["id"] == changed.id
    assert {"dense", "fuse"} <= set(data["timings"])  # hybrid: the folder is dense


def test_full_rebuilds_everything(tmp_path: Path) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS)
    run(str(source), "--out", str(tmp_path / "index"), "--quiet")
    result = run(str(source), "--out", str(tmp_path / "index"), "--quiet", "--full")
    assert result.exit_code == 0, result.output
    assert "(--full)" in result.stdout and "added 30," in result.stdout


def test_search_index_searches_a_lexical_build_of_the_default_catalog(tmp_path: Path) -> None:
    built = run("--out", str(tmp_path / "index"), "--quiet")  # default SOURCE: tau-bench
    assert built.exit_code == 0, built.output
    assert read_manifest(tmp_path / "index").source == str(tau_retail().resolve())
    found = CliRunner().invoke(
        search, ["hiking boots size 10", "--index", str(tmp_path / "index"), "--json"]
    )
    assert found.exit_code == 0, found.output
    data = json.loads(found.stdout)
    assert data["hits"][0]["title"] == "Hiking Boots" and "dense" not in data["timings"]


def test_search_index_refuses_a_folder_without_a_build_or_with_catalog(tmp_path: Path) -> None:
    empty = CliRunner().invoke(search, ["mug", "--index", str(tmp_path)])
    assert empty.exit_code == 2 and "holds no catalog build" in empty.output
    both = CliRunner().invoke(search, ["mug", "--index", str(tmp_path), "--catalog", str(TAU)])
    assert both.exit_code == 2 and "not both" in both.output


@pytest.mark.usefixtures("hashing")
def test_search_index_needs_the_embedder_the_build_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS)
    run(str(source), "--out", str(tmp_path / "index"), "--dense", "--embedder", "hashing")
    monkeypatch.delitem(EMBEDDERS, "hashing")
    found = CliRunner().invoke(search, ["lamp", "--index", str(tmp_path / "index")])
    assert found.exit_code == 2 and "'hashing'" in found.output


def test_spark_options_and_a_missing_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS)
    out = str(tmp_path / "index")
    local = run(str(source), "--out", out, "--master", "local[2]")
    assert local.exit_code == 2 and "--engine spark only" in local.output
    bad = run(str(source), "--out", out, "--engine", "spark", "--conf", "no-equals-sign")
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    monkeypatch.setitem(sys.modules, "cartagent.indexing.spark", None)  # as if not installed
    missing = run(str(source), "--out", out, "--engine", "spark")
    assert missing.exit_code == 1 and "pip install 'cartagent[spark]'" in missing.output


def test_unknown_embedder_and_bad_out_folder_are_reported(tmp_path: Path) -> None:
    source = write(tmp_path / "catalog.jsonl", PRODUCTS)
    unknown = run(str(source), "--out", str(tmp_path / "i"), "--dense", "--embedder", "nope")
    assert unknown.exit_code == 2 and "'nope' is not one of" in unknown.output
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "keep.txt").write_text("mine")
    refused = run(str(source), "--out", str(tmp_path / "docs"))
    assert refused.exit_code == 1 and "holds no catalog build" in refused.output
    assert (tmp_path / "docs" / "keep.txt").read_text() == "mine"


def _report(products: int, seconds: float) -> BuildReport:
    manifest = Manifest(
        source="/c.jsonl",
        engine="spark",
        embedder=None,
        products=products,
        incremental=False,
        built_at=datetime.now(UTC),
        seconds=seconds,
        counts=BuildCounts(added=products),
    )
    return BuildReport(Path("/index"), manifest, (), "no previous build")


@pytest.mark.parametrize(
    ("products", "seconds", "shown"),
    [(5, 12.61, "0.4"), (30, 12.5, "2.4"), (2000, 13.97, "143"), (0, 0.0, "0")],
)
def test_the_summary_rate_is_never_rounded_to_zero(
    products: int, seconds: float, shown: str
) -> None:
    # A handful of products built on Spark: its start-up makes the rate well under 1/s.
    assert summary(_report(products, seconds))[2] == f"{seconds:.2f} s, {shown} products/s"


@pytest.mark.slow
def test_a_minilm_build_of_the_tau_catalog_finds_by_meaning(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    out = str(tmp_path / "index")
    built = run(str(TAU), "--out", out, "--dense", "--quiet")
    assert built.exit_code == 0, built.output
    assert "embedded 50;" in built.stdout
    found = CliRunner().invoke(search, ["something to brew coffee", "--index", out, "--json"])
    assert found.exit_code == 0, found.output
    titles = [hit["title"] for hit in json.loads(found.stdout)["hits"][:3]]
    assert {"Coffee Maker", "Espresso Machine"} & set(titles)
