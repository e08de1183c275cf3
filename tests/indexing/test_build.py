"""build_index: full and incremental builds, bad rows, crash safety, and what search then sees."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from cartagent.catalog import Product, RowProblem, synthetic_catalog
from cartagent.errors import ConfigurationError
from cartagent.indexing import BuildReport, LocalEngine, PreparedBatch, ProblemSink, build_index
from cartagent.retrieval.embeddings import Embedder
from cartagent.retrieval.index_folder import StoredIndex, open_index, read_manifest
from cartagent.retrieval.product_vectors import product_fields
from cartagent.retrieval.query import SearchQuery
from cartagent.testing import HashingEmbedder

pytest.importorskip("faiss")

CATALOG = list(synthetic_catalog(60, seed=2))


def texts(products: Sequence[Product]) -> int:
    """How many distinct field texts embedding ``products`` costs (the embedder counts texts)."""
    return len({text for p in products for text in product_fields(p).values()})


def write_catalog(path: Path, products: Sequence[Product], *, bad_at: int | None = None) -> Path:
    rows = [p.model_dump_json() for p in products]
    if bad_at is not None:
        rows.insert(bad_at - 1, json.dumps({"id": "no-title", "variants": []}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def titled(product: Product, title: str) -> Product:
    return product.model_copy(update={"title": title, "description": title})


def lexical_ids(stored: StoredIndex, text: str) -> list[str]:
    return [h.product.id for h in stored.lexical.search(SearchQuery(text=text), 5)]


def dense_ids(stored: StoredIndex, text: str) -> list[str]:
    assert stored.dense is not None
    return [h.product.id for h in stored.dense.search(SearchQuery(text=text), 5)]


def build(
    source: Path, out: Path, embedder: Embedder | None = None, **options: object
) -> BuildReport:
    return build_index(source, out, embedder=embedder, batch_size=16, **options)  # type: ignore[arg-type]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog.jsonl", CATALOG, bad_at=5)


def test_a_first_build_indexes_every_good_row_and_reports_the_bad_one(
    tmp_path: Path, source: Path
) -> None:
    problems: list[RowProblem] = []
    embedder = HashingEmbedder()
    report = build(source, tmp_path / "index", embedder, on_problem=problems.append)
    assert [problem.line for problem in problems] == [5]
    assert report.problems == tuple(problems) and report.mode == "no previous build"
    manifest = read_manifest(tmp_path / "index")
    assert manifest == report.manifest
    assert manifest.products == len(CATALOG) and not manifest.incremental
    assert manifest.counts.added == len(CATALOG) and manifest.counts.skipped_rows == 1
    assert manifest.counts.embedded == len(CATALOG) and embedder.calls == texts(CATALOG)
    assert manifest.source == str(source) and manifest.engine == "local"
    assert manifest.embedder is not None and manifest.embedder.dim == embedder.dim
    names = sorted(p.name for p in (tmp_path / "index").iterdir())
    assert names == ["dense", "fingerprints.sqlite", "lexical", "manifest.json"]
    stored = open_index(tmp_path / "index", embedder=embedder)
    assert len(stored.lexical) == len(CATALOG) and stored.dense is not None
    assert lexical_ids(stored, CATALOG[7].title)[0] == CATALOG[7].id
    assert dense_ids(stored, CATALOG[7].title)[0] == CATALOG[7].id


def test_rebuilding_an_unchanged_catalog_embeds_and_indexes_nothing(
    tmp_path: Path, source: Path
) -> None:
    embedder = HashingEmbedder()
    build(source, tmp_path / "index", embedder)
    calls = embedder.calls
    report = build(source, tmp_path / "index", embedder)
    assert embedder.calls == calls
    counts = report.manifest.counts
    assert report.mode == "incremental" and report.manifest.incremental
    assert (counts.added, counts.updated, counts.removed) == (0, 0, 0)
    assert counts.unchanged == len(CATALOG) and counts.embedded == 0
    assert counts.skipped_rows == 1  # still reported, every build


def test_a_change_a_deletion_and_an_addition_are_exactly_what_is_redone(
    tmp_path: Path, source: Path
) -> None:
    embedder = HashingEmbedder(dim=256)
    build(source, tmp_path / "index", embedder)
    changed = titled(CATALOG[3], "Zebra Quokka Xylophone")
    added = titled(CATALOG[9], "Walrus Yodel Kazoo").model_copy(update={"id": "added-1"})
    gone = CATALOG[4]
    catalog = [changed if p.id == changed.id else p for p in CATALOG if p.id != gone.id]
    write_catalog(source, [*catalog, added])
    calls = embedder.calls
    report = build(source, tmp_path / "index", embedder)
    counts = report.manifest.counts
    assert (counts.added, counts.updated, counts.removed) == (1, 1, 1)
    assert counts.unchanged == len(CATALOG) - 2 and counts.embedded == 2
    assert embedder.calls == calls + texts([changed, added])
    stored = open_index(tmp_path / "index", embedder=embedder)
    assert len(stored.lexical) == len(CATALOG) and stored.dense is not None
    assert len(stored.dense) == len(CATALOG)
    assert stored.lexical.get(gone.id) is None and stored.dense.get(gone.id) is None
    assert stored.lexical.get(changed.id) == changed
    assert lexical_ids(stored, "zebra quokka xylophone") == [changed.id]
    assert lexical_ids(stored, "walrus yodel kazoo") == ["added-1"]
    assert dense_ids(stored, "zebra quokka xylophone")[0] == changed.id
    assert dense_ids(stored, "walrus yodel kazoo")[0] == "added-1"
    assert gone.id not in dense_ids(stored, gone.title)


def test_full_rebuilds_and_embeds_everything_again(tmp_path: Path, source: Path) -> None:
    embedder = HashingEmbedder()
    build(source, tmp_path / "index", embedder)
    report = build(source, tmp_path / "index", embedder, full=True)
    assert report.mode == "--full" and not report.manifest.incremental
    assert report.manifest.counts.added == report.manifest.counts.embedded == len(CATALOG)
    assert embedder.calls == 2 * texts(CATALOG)


def test_another_embedder_re_embeds_and_no_dense_drops_the_dense_part(
    tmp_path: Path, source: Path
) -> None:
    build(source, tmp_path / "index", HashingEmbedder(dim=16))
    other = HashingEmbedder(dim=32)
    report = build(source, tmp_path / "index", other)
    assert report.manifest.incremental and report.manifest.counts.unchanged == len(CATALOG)
    assert other.calls == texts(CATALOG)  # the old vectors do not fit: embedded again
    assert open_index(tmp_path / "index", embedder=other).dense is not None
    lexical_only = build(source, tmp_path / "index")
    assert lexical_only.manifest.embedder is None
    assert not (tmp_path / "index" / "dense").exists()
    assert open_index(tmp_path / "index", embedder=other).dense is None


class FailingEngine:
    """The local engine, failing after ``after`` batches (a crash in the middle of a build)."""

    def __init__(self, after: int) -> None:
        self.after = after

    def prepare(
        self,
        source: Path,
        *,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None = None,
    ) -> Iterator[PreparedBatch]:
        batches = LocalEngine().prepare(
            source, embedder=embedder, batch_size=batch_size, on_problem=on_problem, wanted=wanted
        )
        for number, batch in enumerate(batches):
            if number == self.after:
                raise KeyboardInterrupt
            yield batch


def test_an_interrupted_build_leaves_the_previous_one_whole(tmp_path: Path, source: Path) -> None:
    embedder = HashingEmbedder()
    first = build(source, tmp_path / "index", embedder)
    write_catalog(source, [titled(p, f"Renamed {p.title}") for p in CATALOG])
    with pytest.raises(KeyboardInterrupt):
        build(source, tmp_path / "index", embedder, engine=FailingEngine(after=2))
    assert read_manifest(tmp_path / "index") == first.manifest
    stored = open_index(tmp_path / "index", embedder=embedder)
    assert stored.lexical.get(CATALOG[0].id) == CATALOG[0]
    assert lexical_ids(stored, "renamed") == []
    assert sorted(os.listdir(tmp_path)) == [".index.lock", "catalog.jsonl", "index"]
    report = build(source, tmp_path / "index", embedder)  # and the next build catches up
    assert report.manifest.counts.updated == len(CATALOG)


def test_the_next_build_clears_what_a_killed_build_left(tmp_path: Path, source: Path) -> None:
    build(source, tmp_path / "index")
    (tmp_path / ".index.building-dead").mkdir()  # killed while writing
    (tmp_path / ".index.building-dead" / "manifest.json").write_text("{}")
    build(source, tmp_path / "index")
    assert sorted(os.listdir(tmp_path)) == [".index.lock", "catalog.jsonl", "index"]


def test_a_build_killed_between_its_two_renames_is_recovered(tmp_path: Path, source: Path) -> None:
    first = build(source, tmp_path / "index")
    os.rename(tmp_path / "index", tmp_path / ".index.previous-dead")
    with pytest.raises(FileNotFoundError):
        read_manifest(tmp_path / "index")  # missing, never valid-but-wrong
    report = build(source, tmp_path / "index")
    assert report.mode == "incremental" and report.manifest.counts.unchanged == len(CATALOG)
    assert first.manifest.products == report.manifest.products
    assert not (tmp_path / ".index.previous-dead").exists()


def test_a_folder_that_is_not_a_build_is_never_replaced(tmp_path: Path, source: Path) -> None:
    precious = tmp_path / "documents"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    with pytest.raises(ConfigurationError, match="holds no catalog build"):
        build(source, precious)
    assert (precious / "thesis.txt").read_text() == "years of work"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(source, empty).manifest.products == len(CATALOG)


def test_a_folder_without_a_manifest_does_not_open(tmp_path: Path, source: Path) -> None:
    build(source, tmp_path / "index")
    (tmp_path / "index" / "manifest.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"no manifest\.json"):
        open_index(tmp_path / "index")


def test_an_engine_repeating_an_id_is_reported_not_indexed_twice(tmp_path: Path) -> None:
    class Repeating:
        def prepare(self, source: Path, **options: object) -> Iterator[PreparedBatch]:
            yield from LocalEngine().prepare(source, **options)  # type: ignore[arg-type]
            yield from LocalEngine().prepare(source, **options)  # type: ignore[arg-type]

    source = write_catalog(tmp_path / "catalog.jsonl", CATALOG[:3])
    problems: list[RowProblem] = []
    report = build(source, tmp_path / "index", engine=Repeating(), on_problem=problems.append)
    assert report.manifest.products == 3 and report.manifest.counts.skipped_rows == 3
    assert all("more than once" in problem.message for problem in problems)


def test_progress_bars_go_to_the_stream_given(tmp_path: Path, source: Path) -> None:
    stream = io.StringIO()
    build(source, tmp_path / "index", HashingEmbedder(), progress=stream)
    shown = stream.getvalue()
    assert "read" in shown and "embed" in shown and "index" in shown
    assert f"{len(CATALOG)} products" in shown and "products/s" in shown


def test_a_concurrent_build_of_the_same_folder_is_refused(tmp_path: Path, source: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    with (tmp_path / ".index.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with pytest.raises(ConfigurationError, match="another build"):
            build(source, tmp_path / "index")


def test_bad_arguments_are_configuration_errors(tmp_path: Path, source: Path) -> None:
    with pytest.raises(ConfigurationError, match="batch_size"):
        build_index(source, tmp_path / "index", batch_size=0)
    with pytest.raises(ConfigurationError, match="does not exist"):
        build_index(tmp_path / "missing.jsonl", tmp_path / "index")
    assert not (tmp_path / "index").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigurationError, match="not a folder"):
        build_index(source, tmp_path / "file")
