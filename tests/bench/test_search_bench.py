"""``cartagent bench search`` on a tiny catalog: the figures exist, are positive, and render."""

from __future__ import annotations

import gc
import math
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from cartagent.bench.search import SearchBenchReport, bench_queries, render, run
from cartagent.cli.bench_search import search_bench


@pytest.fixture(autouse=True)
def _young_collections(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench collects the whole heap around each measurement, as a server does once at
    start; in a test worker that already holds models and a suite's objects, each full pass
    takes seconds (this file: 38 s in the suite, 9.7 s alone). The figures checked here do not
    depend on how old the collected objects are: only the young generations are collected."""
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda generation=2: collect(min(generation, 1)))


def test_query_set_is_deterministic_and_varied() -> None:
    queries = bench_queries(40, seed=3)
    assert queries == bench_queries(40, seed=3)
    assert len(queries) == 40
    assert len(set(queries)) > 30
    assert any(" size " in q and " under " in q for q in queries)
    assert any(" not " in q or " no " in q for q in queries)
    assert any(q.startswith("cheapest ") for q in queries)


@pytest.mark.slow
def test_run_tiny_catalog(tmp_path: Path) -> None:
    report = run([300, 500], queries=20, k=5, warmup=5, repeats=2, workdir=tmp_path)
    assert isinstance(report, SearchBenchReport)
    assert report.queries == 20
    assert report.understanding.count == 40
    assert 0 < report.understanding.p50_ms <= report.understanding.p99_ms
    assert [s.products for s in report.sizes] == [300, 500]
    for size in report.sizes:
        assert size.generate_s > 0 and size.index_s > 0
        assert size.index_rate > 0 and size.build_rate > 0
        assert size.index_bytes > 0
        assert size.peak_rss_bytes > 0
        assert size.search.count == 20
        assert 0 < size.search.p50_ms <= size.search.p99_ms
        assert size.tantivy_p50_ms >= 0 and size.filter_p50_ms >= 0
        assert 0 <= size.zero_hit_queries < 20
        assert 0 < size.hits_mean <= 5
    assert list(tmp_path.iterdir()) == []  # the temporary indexes are removed

    data = report.to_json()
    assert data["sizes"][1]["products"] == 500
    assert data["sizes"][1]["index_rate_per_s"] > 0
    assert all(math.isfinite(v) for v in data["sizes"][0]["search"].values())
    text = render(report)
    assert "Lexical search alone" in text and "rules.parse" in text and "| 500 " in text


@pytest.mark.slow
def test_dense_and_hybrid_search_are_measured_with_embedders(tmp_path: Path) -> None:
    from cartagent.testing import HashingEmbedder

    catalog_embedder = HashingEmbedder(dim=32)
    report = run(
        [400],
        queries=15,
        k=5,
        warmup=3,
        repeats=1,
        workdir=tmp_path,
        embedders=(catalog_embedder, HashingEmbedder(dim=32)),
    )
    dense = report.sizes[0].dense
    assert dense is not None
    # each distinct field text is embedded once, far fewer than three per product
    assert dense.texts == catalog_embedder.calls < 3 * 400
    assert dense.embed_s > 0 and dense.graph_s >= 0 and not dense.approximate
    assert dense.dense.count == dense.hybrid.count == 15
    assert 0 < dense.hybrid.p50_ms <= dense.hybrid.p99_ms
    assert 0 < dense.hits_mean <= 5
    assert dense.embed_query_p50_ms >= 0
    assert report.to_json()["sizes"][0]["dense"]["texts"] == dense.texts
    assert "hybrid p99 ms" in render(report)
    assert "hybrid p99 ms" not in render(run([100], queries=5, warmup=1, workdir=tmp_path))


@pytest.mark.slow
def test_embedding_the_catalog_shows_a_progress_bar_when_progress_is_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cartagent.testing import HashingEmbedder

    pair = (HashingEmbedder(dim=16), HashingEmbedder(dim=16))
    lines: list[str] = []
    run([200], queries=3, warmup=1, repeats=1, workdir=tmp_path, embedders=pair)
    assert "embedding" not in capsys.readouterr().err
    run(
        [200],
        queries=3,
        warmup=1,
        repeats=1,
        workdir=tmp_path,
        embedders=pair,
        progress=lines.append,
    )
    shown = capsys.readouterr().err
    assert "embedding" in shown and "200/200" in shown and lines


@pytest.mark.slow
def test_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    result = CliRunner().invoke(
        search_bench,
        [
            *("--sizes", "200", "--queries", "10", "--warmup", "2", "--json", str(out)),
            *("--models", "rules", "--model-requests", "5"),
            *("--engines", "local", "--build-sizes", "150"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "p99 ms" in result.output
    data = orjson.loads(out.read_bytes())
    assert data["sizes"][0]["products"] == 200
    assert data["understanding"]["count"] > 0
    assert [m["model"] for m in data["models"]] == ["rules"]
    assert data["models"][0]["requests"] == 5
    assert [(b["engine"], b["products"]) for b in data["builds"]] == [("local", 150)]
    assert "Index build by engine" in result.output


@pytest.mark.llm
def test_cli_times_a_real_small_model(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        search_bench,
        [
            *("--sizes", "100", "--queries", "5", "--warmup", "1"),
            *("--models", "smollm2", "--model-requests", "2", "--no-cache", "--engines", ""),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| smollm2 " in result.output


def test_cli_rejects_unknown_models() -> None:
    result = CliRunner().invoke(search_bench, ["--sizes", "100", "--models", "rules,oracle"])
    assert result.exit_code != 0
    assert "unknown oracle" in result.output
    result = CliRunner().invoke(
        search_bench, ["--sizes", "100", "--models", "", "--engines", "local,gpu"]
    )
    assert result.exit_code != 0
    assert "unknown gpu" in result.output


def test_cli_rejects_bad_sizes() -> None:
    result = CliRunner().invoke(search_bench, ["--sizes", "10,x"])
    assert result.exit_code != 0
    result = CliRunner().invoke(search_bench, ["--sizes", "0"])
    assert result.exit_code != 0
