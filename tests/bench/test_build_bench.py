from __future__ import annotations

from pathlib import Path

from cartagent.bench.build import measure_builds, render_builds, write_jsonl
from cartagent.catalog import load_products
from cartagent.indexing import LocalEngine


def test_the_jsonl_catalog_reads_back_whole(tmp_path: Path) -> None:
    report = load_products(write_jsonl(tmp_path / "c.jsonl", 50, seed=4))
    assert len(report.products) == 50 and not report.problems


def test_each_engine_builds_each_size(tmp_path: Path) -> None:
    lines: list[str] = []
    results = measure_builds(
        [120, 300],
        {"local": LocalEngine, "local again": LocalEngine},
        workdir=tmp_path,
        progress=lines.append,
    )
    assert [(r.engine, r.products) for r in results] == [
        ("local", 120),
        ("local again", 120),
        ("local", 300),
        ("local again", 300),
    ]
    assert all(r.seconds > 0 and r.products_per_s > 0 and r.skipped_rows == 0 for r in results)
    assert len(lines) == 4 and "300 products with the local again engine" in lines[-1]
    assert list(tmp_path.iterdir()) == []  # catalogs and indexes are removed
    assert "| local again | 300 " in render_builds(results)
