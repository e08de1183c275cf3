"""``cartagent bench search``: catalog indexing and query latency at several catalog sizes.

For each size, a synthetic catalog (:func:`~cartagent.catalog.synthetic_catalog`) is streamed
into a :class:`~cartagent.retrieval.lexical.LexicalIndex` persisted in a temporary folder; the
time spent generating products and the time spent indexing them are told apart by timing each
``next()`` on the generator. Then a fixed, deterministic set of shopper requests (see
:func:`bench_queries`) is parsed once with the rule parser and the resulting
:class:`~cartagent.retrieval.query.SearchQuery` objects are searched: *lexical search alone*,
without understanding. Understanding alone (:func:`cartagent.retrieval.rules.parse`) is measured
separately: it does not depend on the catalog.

Peak RSS is the process's high-water mark (``VmHWM``), reset before each size through
``/proc/self/clear_refs`` where Linux allows it; elsewhere it is ``ru_maxrss``, which only grows,
so a size's figure then includes the sizes measured before it (``peak_rss_reset`` says which).
"""

from __future__ import annotations

import gc
import random
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from ..catalog import Product, synthetic_catalog
from ..catalog.synthetic import KINDS
from ..heap import frozen_heap
from ..retrieval import LexicalIndex, SearchQuery, rules
from .report import percentile, table

if TYPE_CHECKING:
    from ..retrieval import Embedder

__all__ = [
    "QueryLatency",
    "SearchBenchReport",
    "SizeResult",
    "bench_queries",
    "render",
    "run",
]

_MIB = 1024 * 1024


# ------------------------------------------------------------------------------ query set


def bench_queries(n: int = 200, seed: int = 0) -> list[str]:
    """``n`` deterministic shopper requests built from the synthetic catalog's vocabulary.

    They cycle through shapes that exercise the rule parser and the filters: gender + kind +
    size + price ceiling ("women's jeans size 30 under 80"), brand + colour + kind + price,
    attribute + kind + price range, negations ("not leather", "without ...", "no red"),
    cheapest/in-stock, ratings, and plain brand + kind.
    """
    rng = random.Random(seed)
    shapes: list[Callable[[random.Random], str | None]] = [
        _gender_size_price,
        _brand_colour_price,
        _attribute_range,
        _negated_material,
        _negated_colour,
        _cheapest_in_stock,
        _rated,
        _brand_kind,
    ]
    queries: list[str] = []
    attempt = 0
    while len(queries) < n:
        made = shapes[attempt % len(shapes)](rng)
        attempt += 1
        if made:
            queries.append(made)
    return queries


def _noun(kind_noun: str) -> str:
    return kind_noun.lower()


def _price(rng: random.Random, low: int, high: int) -> int:
    return rng.randint(low, high) // 5 * 5 + 5


def _gender_size_price(rng: random.Random) -> str | None:
    kind = rng.choice([k for k in KINDS if k.genders and k.sizes])
    gender = rng.choice(kind.genders)
    sizes = kind.sizes.get(gender) or kind.sizes.get("")
    if not sizes or gender == "Unisex":
        return None
    return (
        f"{gender.lower()}'s {_noun(kind.noun)} size {rng.choice(sizes)} "
        f"under {_price(rng, *kind.price)}"
    )


def _brand_colour_price(rng: random.Random) -> str | None:
    kind = rng.choice([k for k in KINDS if k.colors])
    return (
        f"{rng.choice(kind.brands)} {rng.choice(kind.colors)} {_noun(kind.noun)} "
        f"under ${_price(rng, *kind.price)}"
    )


def _attribute_range(rng: random.Random) -> str | None:
    kind = rng.choice(KINDS)
    _, values, _ = rng.choice(kind.attributes)
    low, high = kind.price
    a = _price(rng, low, (low + high) // 2)
    return f"{rng.choice(values)} {_noun(kind.noun)} between {a} and {a + (high - low) // 3}"


def _negated_material(rng: random.Random) -> str | None:
    kind = rng.choice(KINDS)
    materials = [values for name, values, _ in kind.attributes if name == "material"]
    if not materials:
        return None
    return f"{_noun(kind.noun)} not {rng.choice(materials[0])}"


def _negated_colour(rng: random.Random) -> str | None:
    kind = rng.choice([k for k in KINDS if k.colors])
    return f"{_noun(kind.noun)} no {rng.choice(kind.colors)}"


def _cheapest_in_stock(rng: random.Random) -> str | None:
    kind = rng.choice(KINDS)
    return f"cheapest {_noun(kind.noun)} in stock"


def _rated(rng: random.Random) -> str | None:
    kind = rng.choice(KINDS)
    return f"{_noun(kind.noun)} {rng.choice((3, 4))} stars and up"


def _brand_kind(rng: random.Random) -> str | None:
    kind = rng.choice(KINDS)
    return f"{rng.choice(kind.brands)} {_noun(kind.noun)}"


# ------------------------------------------------------------------------------ results


@dataclass
class QueryLatency:
    """Per-query latencies in milliseconds (the raw samples are not kept in the JSON)."""

    count: int
    p50_ms: float
    p99_ms: float
    mean_ms: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> QueryLatency:
        return cls(
            count=len(samples_ms),
            p50_ms=percentile(samples_ms, 50),
            p99_ms=percentile(samples_ms, 99),
            mean_ms=sum(samples_ms) / len(samples_ms) if samples_ms else float("nan"),
        )


@dataclass
class DenseResult:
    """The dense side of one catalog size: embedding, graph, dense-alone and hybrid search.

    ``texts`` is how many distinct field texts were embedded for ``products`` products;
    search latencies include embedding the query.
    """

    texts: int
    embed_s: float
    graph_s: float
    approximate: bool
    dense: QueryLatency
    hybrid: QueryLatency
    embed_query_p50_ms: float
    fuse_p50_ms: float
    hits_mean: float
    zero_hit_queries: int


@dataclass
class SizeResult:
    """What one catalog size cost to build and to search."""

    products: int
    generate_s: float
    index_s: float
    index_bytes: int
    peak_rss_bytes: int
    search: QueryLatency
    tantivy_p50_ms: float
    filter_p50_ms: float
    hits_mean: float
    zero_hit_queries: int
    dense: DenseResult | None = None

    @property
    def build_s(self) -> float:
        return self.generate_s + self.index_s

    @property
    def index_rate(self) -> float:
        """Products indexed per second, generation excluded."""
        return self.products / self.index_s if self.index_s > 0 else float("inf")

    @property
    def build_rate(self) -> float:
        """Products per second, generation included."""
        return self.products / self.build_s if self.build_s > 0 else float("inf")


@dataclass
class SearchBenchReport:
    queries: int
    k: int
    seed: int
    peak_rss_reset: bool
    understanding: QueryLatency
    sizes: list[SizeResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for entry, result in zip(data["sizes"], self.sizes, strict=True):
            entry["build_s"] = result.build_s
            entry["index_rate_per_s"] = result.index_rate
            entry["build_rate_per_s"] = result.build_rate
        return data


# ------------------------------------------------------------------------------ measuring


def _reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark; ``False`` where it cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int:
    try:
        with open("/proc/self/status") as handle:
            found = re.search(r"^VmHWM:\s+(\d+)\s+kB", handle.read(), re.MULTILINE)
        if found:
            return int(found.group(1)) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class _TimedStream:
    """Wraps an iterator, adding the time spent inside ``next()`` to :attr:`seconds`."""

    def __init__(self, source: Iterator[Product]) -> None:
        self._source = source
        self.seconds = 0.0
        self.count = 0

    def __iter__(self) -> Iterator[Product]:
        clock = time.perf_counter
        source = self._source
        while True:
            started = clock()
            try:
                product = next(source)
            except StopIteration:
                self.seconds += clock() - started
                return
            self.seconds += clock() - started
            self.count += 1
            yield product


def measure_understanding(requests: Sequence[str], repeats: int = 5) -> QueryLatency:
    """Latency of :func:`rules.parse` per request (each parsed ``repeats`` times, after one
    unmeasured pass)."""
    clock = time.perf_counter
    for request in requests:
        rules.parse(request)
    samples: list[float] = []
    for _ in range(max(1, repeats)):
        for request in requests:
            started = clock()
            rules.parse(request)
            samples.append((clock() - started) * 1000)
    return QueryLatency.of(samples)


def measure_dense(
    products: int,
    queries: Sequence[SearchQuery],
    lexical: LexicalIndex,
    embedders: tuple[Embedder, Embedder],
    *,
    k: int = 10,
    seed: int = 0,
    warmup: int = 20,
    progress: bool = False,
) -> DenseResult:
    """Embed the same synthetic products, build the dense index over them, then search
    ``queries`` with it alone and hybrid with ``lexical``.

    ``embedders`` is (the one that embeds the catalog, the one that embeds queries): the same
    model, but catalog embedding wants every core and queries want steady single-thread time.
    ``progress`` shows a bar on stderr while the catalog is embedded.
    """
    import numpy as np

    from ..retrieval import DenseIndex, Searcher, TextVectors, embed_products

    catalog_embedder, query_embedder = embedders
    cache = TextVectors(catalog_embedder, capacity=1_000_000)
    ids: list[str] = []
    vectors = np.empty((products, catalog_embedder.dim), dtype=np.float32)
    started = time.perf_counter()
    batch: list[Product] = []
    bar = tqdm(
        total=products, desc="embedding", unit="product", disable=not progress, file=sys.stderr
    )

    def flush() -> None:
        vectors[len(ids) : len(ids) + len(batch)] = embed_products(batch, cache)
        ids.extend(p.id for p in batch)
        bar.update(len(batch))
        bar.set_postfix(texts=cache.embedded, refresh=False)
        batch.clear()

    with bar:
        for product in synthetic_catalog(products, seed=seed):
            batch.append(product)
            if len(batch) == 4096:
                flush()
        if batch:
            flush()
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    dense = DenseIndex.from_vectors(ids, vectors[: len(ids)], query_embedder, products=lexical.get)
    dense.screen = lexical.screened  # as a stored index opens (retrieval.index_folder)
    graph_s = time.perf_counter() - started

    alone = Searcher(dense)
    hybrid = Searcher(lexical, dense=dense)
    for query in queries[:warmup]:
        hybrid.search_query(query, k)
    clock = time.perf_counter
    dense_ms: list[float] = []
    hybrid_ms: list[float] = []
    embed_ms: list[float] = []
    fuse_ms: list[float] = []
    hit_counts: list[int] = []
    with frozen_heap():
        for query in queries:
            started = clock()
            alone.search_query(query, k)
            dense_ms.append((clock() - started) * 1000)
            started = clock()
            result = hybrid.search_query(query, k)
            hybrid_ms.append((clock() - started) * 1000)
            embed_ms.append(result.timings.get("embed", float("nan")))
            fuse_ms.append(result.timings.get("fuse", 0.0))
            hit_counts.append(len(result.hits))
    return DenseResult(
        texts=cache.embedded,
        embed_s=embed_s,
        graph_s=graph_s,
        approximate=dense.approximate,
        dense=QueryLatency.of(dense_ms),
        hybrid=QueryLatency.of(hybrid_ms),
        embed_query_p50_ms=percentile([m for m in embed_ms if m == m], 50),
        fuse_p50_ms=percentile(fuse_ms, 50),
        hits_mean=sum(hit_counts) / len(hit_counts) if hit_counts else 0.0,
        zero_hit_queries=sum(1 for c in hit_counts if c == 0),
    )


def measure_size(
    products: int,
    queries: Sequence[SearchQuery],
    *,
    k: int = 10,
    seed: int = 0,
    warmup: int = 20,
    workdir: Path | None = None,
    embedders: tuple[Embedder, Embedder] | None = None,
    progress: bool = False,
) -> SizeResult:
    """Build an index of ``products`` synthetic products on disk and search ``queries``;
    with ``embedders``, the dense index and hybrid search too (see :func:`measure_dense`)."""
    gc.collect()
    _reset_peak_rss()
    with tempfile.TemporaryDirectory(prefix="cartagent-bench-", dir=workdir) as tmp:
        folder = Path(tmp) / "index"
        stream = _TimedStream(synthetic_catalog(products, seed=seed))
        started = time.perf_counter()
        index = LexicalIndex.build(stream, folder)
        total_s = time.perf_counter() - started
        index_bytes = _folder_bytes(folder)

        for query in queries[:warmup]:  # open files, fill caches: steady state is measured
            index.search(query, k)
        clock = time.perf_counter
        samples: list[float] = []
        tantivy_ms: list[float] = []
        filter_ms: list[float] = []
        hit_counts: list[int] = []
        with frozen_heap():  # as the servers search: see cartagent.heap
            for query in queries:
                timings: dict[str, float] = {}
                started = clock()
                hits = index.search(query, k, timings=timings)
                samples.append((clock() - started) * 1000)
                tantivy_ms.append(timings.get("lexical", 0.0))
                filter_ms.append(timings.get("filter", 0.0))
                hit_counts.append(len(hits))
        dense = None
        if embedders is not None:
            dense = measure_dense(
                products,
                queries,
                index,
                embedders,
                k=k,
                seed=seed,
                warmup=warmup,
                progress=progress,
            )
        peak = _peak_rss_bytes()
        del index
        gc.collect()
    return SizeResult(
        products=stream.count,
        generate_s=stream.seconds,
        index_s=max(total_s - stream.seconds, 0.0),
        index_bytes=index_bytes,
        peak_rss_bytes=peak,
        search=QueryLatency.of(samples),
        tantivy_p50_ms=percentile(tantivy_ms, 50),
        filter_p50_ms=percentile(filter_ms, 50),
        hits_mean=sum(hit_counts) / len(hit_counts) if hit_counts else 0.0,
        zero_hit_queries=sum(1 for c in hit_counts if c == 0),
        dense=dense,
    )


def run(
    sizes: Sequence[int],
    *,
    queries: int = 200,
    k: int = 10,
    seed: int = 0,
    warmup: int = 20,
    repeats: int = 5,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    embedders: tuple[Embedder, Embedder] | None = None,
) -> SearchBenchReport:
    """Measure understanding once, then building and searching each catalog size in turn."""
    requests = bench_queries(queries, seed=seed)
    parsed = [rules.parse(r) for r in requests]
    report = SearchBenchReport(
        queries=len(requests),
        k=k,
        seed=seed,
        peak_rss_reset=_reset_peak_rss(),
        understanding=measure_understanding(requests, repeats=repeats),
    )
    for size in sizes:
        if progress is not None:
            progress(f"{size:,} products: generating, indexing, searching ...")
        report.sizes.append(
            measure_size(
                size,
                parsed,
                k=k,
                seed=seed,
                warmup=warmup,
                workdir=workdir,
                embedders=embedders,
                progress=progress is not None,
            )
        )
    return report


# ------------------------------------------------------------------------------ output


def _ms(value: float) -> str:
    return f"{value:.3f}"


def render(report: SearchBenchReport) -> str:
    """The build table, the lexical search table and the understanding table."""
    build = table(
        [
            "products",
            "generate s",
            "index s",
            "index products/s",
            "total products/s",
            "index MiB",
            "peak RSS MiB",
        ],
        [
            [
                f"{r.products:,}",
                f"{r.generate_s:.2f}",
                f"{r.index_s:.2f}",
                f"{r.index_rate:,.0f}",
                f"{r.build_rate:,.0f}",
                f"{r.index_bytes / _MIB:.1f}",
                f"{r.peak_rss_bytes / _MIB:.0f}",
            ]
            for r in report.sizes
        ],
    )
    search = table(
        [
            "products",
            "queries",
            "p50 ms",
            "p99 ms",
            "mean ms",
            "tantivy p50 ms",
            "filter p50 ms",
            "hits/query",
            "0-hit queries",
        ],
        [
            [
                f"{r.products:,}",
                r.search.count,
                _ms(r.search.p50_ms),
                _ms(r.search.p99_ms),
                _ms(r.search.mean_ms),
                _ms(r.tantivy_p50_ms),
                _ms(r.filter_p50_ms),
                f"{r.hits_mean:.1f}",
                r.zero_hit_queries,
            ]
            for r in report.sizes
        ],
    )
    rows = []
    for r in report.sizes:
        d = r.dense
        if d is None:
            continue
        rows.append(
            [
                f"{r.products:,}",
                f"{d.texts:,}",
                f"{d.embed_s:.1f}",
                f"{d.graph_s:.1f}",
                "HNSW" if d.approximate else "exact",
                _ms(d.dense.p50_ms),
                _ms(d.dense.p99_ms),
                _ms(d.hybrid.p50_ms),
                _ms(d.hybrid.p99_ms),
                _ms(d.embed_query_p50_ms),
                f"{d.hits_mean:.1f}",
                d.zero_hit_queries,
            ]
        )
    hybrid = ""
    if rows:
        headers = [
            "products",
            "texts embedded",
            "embed s",
            "graph s",
            "dense search",
            "dense p50 ms",
            "dense p99 ms",
            "hybrid p50 ms",
            "hybrid p99 ms",
            "query embed p50 ms",
            "hits/query",
            "0-hit queries",
        ]
        title = "Dense and hybrid (lexical + dense, RRF) search, query embedding included"
        hybrid = f"\n\n{title}\n{table(headers, rows)}"
    u = report.understanding
    understand = table(
        ["stage", "calls", "p50 ms", "p99 ms", "mean ms"],
        [["rules.parse", u.count, _ms(u.p50_ms), _ms(u.p99_ms), _ms(u.mean_ms)]],
    )
    note = "" if report.peak_rss_reset else "\n(peak RSS is cumulative: it could not be reset)"
    return (
        f"Index build (synthetic catalog, on disk){note}\n{build}\n\n"
        f"Lexical search alone, k={report.k}, parsed queries (no understanding)\n{search}"
        f"{hybrid}\n\n"
        f"Understanding alone ({report.queries} requests)\n{understand}"
    )
