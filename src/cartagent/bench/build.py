"""Index build throughput by engine: the same catalog file built locally and on Spark.

A synthetic catalog of each size is written once as JSON Lines; then ``cartagent catalog
build``'s job (:func:`~cartagent.indexing.build_index`, lexical index only: embedding
costs the same whichever engine computes it) runs with each engine into a fresh folder. The
figure is products per second of the whole build, reading and validating included; for Spark
it includes starting the session, which a long-lived cluster would not pay per build.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog import synthetic_catalog
from .report import table

if TYPE_CHECKING:
    from ..indexing import Engine

__all__ = ["BuildResult", "measure_builds", "render_builds", "write_jsonl"]


@dataclass(frozen=True)
class BuildResult:
    engine: str
    products: int
    seconds: float
    skipped_rows: int

    @property
    def products_per_s(self) -> float:
        return self.products / self.seconds if self.seconds > 0 else float("inf")


def write_jsonl(path: Path, products: int, seed: int = 0) -> Path:
    """``products`` synthetic products, one JSON object per line."""
    with path.open("w", encoding="utf-8") as out:
        for product in synthetic_catalog(products, seed=seed):
            out.write(product.model_dump_json(exclude_none=True))
            out.write("\n")
    return path


def measure_builds(
    sizes: Sequence[int],
    engines: Mapping[str, Callable[[], Engine]],
    *,
    seed: int = 0,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[BuildResult]:
    """Build each size with each engine (``engines`` maps a name to an engine factory)."""
    from ..indexing import build_index

    results: list[BuildResult] = []
    with tempfile.TemporaryDirectory(prefix="cartagent-build-bench-", dir=workdir) as tmp:
        for size in sizes:
            source = write_jsonl(Path(tmp) / f"catalog-{size}.jsonl", size, seed=seed)
            for name, make in engines.items():
                if progress is not None:
                    progress(f"building {size:,} products with the {name} engine ...")
                started = time.perf_counter()
                engine = make()
                try:
                    report = build_index(source, Path(tmp) / f"index-{name}-{size}", engine=engine)
                finally:
                    engine.close()
                seconds = time.perf_counter() - started
                results.append(
                    BuildResult(
                        engine=name,
                        products=report.manifest.products,
                        seconds=seconds,
                        skipped_rows=len(report.problems),
                    )
                )
    return results


def render_builds(results: Sequence[BuildResult]) -> str:
    return table(
        ["engine", "products", "seconds", "products/s", "skipped rows"],
        [
            [
                r.engine,
                f"{r.products:,}",
                f"{r.seconds:.1f}",
                f"{r.products_per_s:,.0f}",
                r.skipped_rows,
            ]
            for r in results
        ],
    )
