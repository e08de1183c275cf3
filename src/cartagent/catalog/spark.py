"""The Spark build engine: ``SparkEngine`` reads, validates, fingerprints and embeds a catalog in
Spark executors and streams :class:`~cartagent.catalog.prepared.PreparedBatch` es to the driver.

For the same file it gives what ``load_products`` and ``content_hash`` give: the same products in
the same order, the same hashes and the same problems at the same lines. Spark reads the file
itself (so a cluster reads it from shared storage):

* **JSON Lines**: Spark's text reader, split at ``\\n`` only; a counting job in the JVM gives
  each partition its first line number, and finds the lines that are not UTF-8.
* **CSV**: text too; a quoted cell may span lines and partitions (see the CSV section). Rows,
  one per variant, are grouped by product id across partitions (``groupByKey``), and each
  product is built by the local loader's own row code.
* **Parquet**: a row's line is its 1-based row number (``_metadata.row_index``); files without
  a ``variants`` column are grouped as CSV rows are. A file Spark cannot open is a problem at
  line 0; one that fails part-way fails the Spark job.
* **JSON** (a list or an object of products): a document cannot be split, so one task parses
  the whole file, which gives each product's exact line; validation, hashing and embedding
  then run spread over the cluster.

Bad rows come back as ``RowProblem`` s and reach ``on_problem`` in line order, between batches.
The driver rebuilds each product from its JSON and reports a second product with an id it has
already streamed (JSON, JSON Lines, nested Parquet), keeping one id per product to do so.

Embedding runs in executors, for the products whose hash is wanted. A picklable embedder (such
as ``cartagent.testing.HashingEmbedder``) is broadcast; a ``MiniLMEmbedder`` travels as a recipe
(threads, batch size, model folder) and is built once per Python worker, so executors need the
MiniLM package. ``wanted`` is a driver-side callable: the hashes are first collected to the
driver (one more job, 32 characters a product), ``wanted`` is asked about each, and the wanted
set, or its complement when smaller, is broadcast. Unwanted products get zero vectors.

Every stage finishes in parallel before the first batch: the records are persisted (memory,
spilling to disk) and counted, then streamed to the driver a partition at a time. Importing
this module needs PySpark (``pip install 'cartagent[spark]'``).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import pickle
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple

from pyspark import RDD, Broadcast, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from ..errors import ConfigurationError
from .fingerprint import content_hash
from .loaders import (
    RowProblem,
    _cell,
    _Collector,
    _columns_ok,
    _decode,
    _flat_rows,
    _json_decoder,
    _json_rows,
    _JsonSyntaxError,
    _nested_row,
)
from .local_engine import _is_tau
from .prepared import PreparedBatch, ProblemSink
from .product import Product
from .tau import TAU_PRODUCTS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval.embeddings import Embedder

__all__ = ["SparkEngine"]

_SUFFIXES = (".csv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq")
_ROW_BITS = 33  # monotonically_increasing_id: partition index above, row within it below
_EMBED_CHUNK = 256  # products embedded per call in an executor
_ROW_COLUMN = "__cartagent_row__"
_BARE_CR = re.compile(r"(?<=\r)(?=.)", re.DOTALL)


def _defaults(master: str) -> dict[str, str]:
    """Session settings ``conf`` may override: no console bar; a local session stays on
    loopback (its driver would otherwise bind the host's address and its web UI every
    interface)."""
    settings = {"spark.ui.showConsoleProgress": "false"}
    if master.strip().startswith("local"):
        settings |= {
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false",
        }
    return settings


class SparkEngine:
    """An :class:`~cartagent.catalog.prepared.Engine` running on Apache Spark.

    ``master`` is ``local[*]``, ``local[2]`` or a cluster URL; every ``conf`` entry goes into the
    ``SparkSession`` builder unchanged (``{"spark.plugins": "com.nvidia.spark.SQLPlugin"}`` for
    RAPIDS, ``{"spark.pyspark.python": "/opt/venv/bin/python"}`` for the executors' Python). On
    a local master the Python workers run the driver's interpreter unless ``PYSPARK_PYTHON``
    or ``spark.pyspark.python`` says otherwise. The session starts on the first ``prepare``;
    ``close()`` (or leaving a ``with`` block) stops it, unless it was already running when the
    engine joined it.

    A ``Path`` source must be a local file (every executor must see it at the same path, as on
    a shared mount); a string with a scheme (``hdfs://...``, ``s3a://...``) is handed to Spark
    as it is.
    """

    def __init__(
        self,
        master: str = "local[*]",
        conf: dict[str, str] | None = None,
        app_name: str = "cartagent-catalog-build",
    ) -> None:
        if not master.strip():
            raise ConfigurationError("the Spark master must not be empty (try local[*])")
        self.master = master
        self.conf = dict(conf or {})
        self.app_name = app_name
        self._spark: SparkSession | None = None
        self._owned = False

    def __enter__(self) -> SparkEngine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the Spark session this engine started (a no-op when there is none)."""
        spark, self._spark = self._spark, None
        if spark is not None and self._owned:
            spark.stop()

    @property
    def session(self) -> SparkSession:
        """The engine's Spark session, started on first use."""
        if self._spark is None:
            self._owned = SparkSession.getActiveSession() is None
            builder = SparkSession.builder.master(self.master).appName(self.app_name)
            for key, value in {**_defaults(self.master), **self.conf}.items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
            context = spark.sparkContext
            python = self.conf.get("spark.pyspark.python")
            if python:
                context.pythonExec = python
            elif self.master.startswith("local") and context.pythonExec == "python3":
                context.pythonExec = sys.executable  # the workers must import cartagent too
            self._spark = spark
        return self._spark

    def prepare(
        self,
        source: Path | str,
        *,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None = None,
    ) -> Iterator[PreparedBatch]:
        """Read ``source`` in Spark and yield batches of at most ``batch_size`` products."""
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, not {batch_size}")
        uri, suffix = _locate(source)
        portable = None if embedder is None else _portable(embedder)
        return self._batches(uri, suffix, portable, batch_size, on_problem, wanted)

    def _batches(
        self,
        uri: str,
        suffix: str,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None,
    ) -> Iterator[PreparedBatch]:
        job = _Job(self.session)
        try:
            records = _read(job, uri, suffix, on_problem)
            if records is None:
                return
            if embedder is not None:
                chosen = None
                if wanted is not None:
                    job.keep(records)
                    chosen = job.broadcast(
                        _Wanted.choose(records.flatMap(_hash_of).collect(), wanted)
                    )
                shipped = job.broadcast(embedder)
                records = records.mapPartitions(partial(_embed, shipped, chosen))
            job.keep(records).count()  # every stage runs in parallel before streaming
            stream = records.toLocalIterator(prefetchPartitions=True)
            dim = None if embedder is None else embedder.dim
            yield from _assemble(stream, batch_size, dim, on_problem)
        finally:
            job.release()


# --- sources ----------------------------------------------------------------------------------


def _locate(source: Path | str) -> tuple[str, str]:
    """Spark's address for ``source`` and its lower-cased suffix."""
    if isinstance(source, str) and "://" in source:
        uri, suffix = source, PurePosixPath(source.split("://", 1)[1]).suffix.lower()
    else:
        path = Path(source)
        if not path.exists():
            raise ConfigurationError(f"{path} does not exist")
        if path.is_dir() or (path.name == TAU_PRODUCTS and _is_tau(path)):
            raise ConfigurationError(
                f"{path} is a tau-bench catalog or a folder: the local engine reads those"
            )
        uri, suffix = f"file:{path.resolve()}", path.suffix.lower()
    if suffix not in _SUFFIXES:
        known = ", ".join(sorted(_SUFFIXES))
        raise ConfigurationError(f"cannot read {source!s}: the suffix is not one of {known}")
    return uri, suffix


class _Job:
    """What one ``prepare`` holds in the cluster, released when it ends."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.context: SparkContext = spark.sparkContext
        self._kept: list[RDD[Any]] = []
        self._shared: list[Broadcast[Any]] = []

    @property
    def width(self) -> int:
        return max(2, self.context.defaultParallelism)

    def keep(self, rdd: RDD[Any]) -> RDD[Any]:
        self._kept.append(rdd.persist(StorageLevel.MEMORY_AND_DISK))
        return rdd

    def broadcast(self, value: Any) -> Broadcast[Any]:
        shared = self.context.broadcast(value)
        self._shared.append(shared)
        return shared

    def release(self) -> None:
        for rdd in self._kept:
            rdd.unpersist()
        for shared in self._shared:
            shared.unpersist()


def _read(job: _Job, uri: str, suffix: str, on_problem: ProblemSink) -> RDD[Any] | None:
    """Validated records (``_Found`` or ``RowProblem``), partitions in file order."""
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl(job, uri)
    if suffix == ".json":
        return _json(job, uri)
    if suffix == ".csv":
        return _csv(job, uri, on_problem)
    return _parquet(job, uri, on_problem)


class _Found(NamedTuple):
    """A valid product as it travels: canonical JSON, fingerprint, and its vector's bytes."""

    line: int
    product_id: str
    json: str
    hash: str
    vector: bytes | None = None


def _found(line: int, product: Product) -> _Found:
    return _Found(line, product.id, product.model_dump_json(), content_hash(product))


def _validated(line: int, row: Any) -> _Found | RowProblem:
    """One nested row (a JSON value), checked exactly as the local loader checks it."""
    collector = _Collector()
    collector.row(line, row)
    if collector.report.problems:
        return collector.report.problems[0]
    return _found(line, collector.report.products[0])


def _text_lines(job: _Job, uri: str) -> DataFrame:
    """The file's ``\\n``-separated lines: position (see ``_ROW_BITS``), text (null when it is
    not UTF-8, then its bytes are in raw), the partition's first byte, the line's length in
    bytes and the file's."""
    value = sf.col("value")
    return (
        job.spark.read.option("lineSep", "\n")
        .text(uri)
        .select(
            sf.monotonically_increasing_id().alias("position"),
            sf.when(sf.is_valid_utf8(value), value).alias("text"),
            sf.when(~sf.is_valid_utf8(value), value.cast("binary")).alias("raw"),
            sf.col("_metadata.file_block_start").alias("block"),
            sf.octet_length(value).alias("bytes"),
            sf.col("_metadata.file_size").alias("file_size"),
        )
    )


def _in_order(job: _Job, keyed: RDD[Any], last: int) -> RDD[Any]:
    """``(key, record)`` pairs with int keys in ``0..last``: records sorted, partitions ranged."""
    width = job.width
    span = last + 1
    return keyed.repartitionAndSortWithinPartitions(
        width, partial(_range_part, width, span)
    ).values()


def _range_part(width: int, span: int, key: int) -> int:
    return min(width - 1, key * width // span)


# --- JSON Lines -------------------------------------------------------------------------------


def _jsonl(job: _Job, uri: str) -> RDD[Any]:
    lines = _text_lines(job, uri)
    parts = (
        lines.groupBy(sf.shiftright("position", _ROW_BITS).alias("part"))
        .agg(
            sf.min("block").alias("block"),
            sf.count("*").alias("lines"),
            sf.sum("bytes").alias("bytes"),
            sf.max("file_size").alias("file_size"),
        )
        .collect()
    )
    offsets, seen, size = {}, 0, 0
    for part in sorted(parts, key=lambda part: int(part["block"])):
        offsets[int(part["part"])] = seen
        seen += part["lines"]
        size += part["bytes"]
    # Spark drops each line's "\n" (and Hadoop a UTF-8 BOM, 3 bytes), but a JSON error's
    # column depends on whether the last line had one
    unended = seen if parts and parts[0]["file_size"] - size - seen in (-1, 2) else None
    text = lines.select("position", "text").rdd
    return text.mapPartitions(partial(_jsonl_records, offsets, unended))


def _jsonl_records(
    offsets: dict[int, int], unended: int | None, rows: Iterable[Any]
) -> Iterator[_Found | RowProblem]:
    decoder = _json_decoder()
    mask = (1 << _ROW_BITS) - 1
    for position, text in rows:
        line = offsets[position >> _ROW_BITS] + (position & mask) + 1
        if text is None:
            yield RowProblem(line, "the line is not valid UTF-8")
            continue
        if line == 1:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue
        try:
            row = decoder.decode(text if line == unended else text + "\n")
        except json.JSONDecodeError as error:
            yield RowProblem(line, f"invalid JSON: {error.msg} (column {error.colno})")
            continue
        yield _validated(line, row)


# --- JSON -------------------------------------------------------------------------------------


def _json(job: _Job, uri: str) -> RDD[Any]:
    files = job.spark.read.format("binaryFile").load(uri).select("content")
    parsed = job.keep(files.rdd.flatMap(_json_document))
    count = parsed.count()
    if count == 0:
        return parsed.values()
    return _in_order(job, parsed, count - 1).map(_json_item)


def _json_document(row: Any) -> Iterator[tuple[int, Any]]:
    """``(sequence, item)``: the parse of a whole JSON file, in the local loader's order."""
    sequence = itertools.count()
    collector = _Collector()
    text = _decode(bytes(row.content), collector)
    for problem in collector.report.problems:
        yield next(sequence), problem
    if text is None:
        return
    try:
        for line, row in _json_rows(text):
            yield next(sequence), (line, row)
    except _JsonSyntaxError as error:
        yield next(sequence), RowProblem(error.line, f"{error}; nothing after this was read")


def _json_item(item: Any) -> _Found | RowProblem:
    if isinstance(item, RowProblem):
        return item
    line, row = item
    return _validated(line, row)


# --- Parquet ----------------------------------------------------------------------------------


def _parquet(job: _Job, uri: str, on_problem: ProblemSink) -> RDD[Any] | None:
    try:
        frame = job.spark.read.parquet(uri)
        columns = [str(name) for name in frame.schema.names]
    except Exception as error:  # Spark wraps the reader's failure in several exception types
        on_problem(RowProblem(0, f"not a readable Parquet file: {error}"))
        return None
    rows = frame.select(sf.col("_metadata.row_index").alias(_ROW_COLUMN), "*").rdd
    if "variants" in columns:
        return rows.map(_nested_parquet_row)
    collector = _Collector()
    ok = _columns_ok([c.lower() for c in columns], 0, collector)
    for problem in collector.report.problems:
        on_problem(problem)
    if not ok:
        return None
    return _products_from_flat(job, rows.map(_flat_parquet_row), frame.count())


def _nested_parquet_row(row: Any) -> _Found | RowProblem:
    data = row.asDict(recursive=True)
    line = data.pop(_ROW_COLUMN) + 1
    return _validated(line, _nested_row(data))


def _flat_parquet_row(row: Any) -> tuple[int, dict[str, Any]]:
    data = row.asDict(recursive=True)
    line = data.pop(_ROW_COLUMN) + 1
    return line, {key.lower(): value for key, value in data.items()}


# --- flat rows (CSV, Parquet without variants): grouped by product id -------------------------


def _products_from_flat(job: _Job, rows: RDD[Any], last: int) -> RDD[Any]:
    """``(line, row or RowProblem)`` pairs, one variant a row, to products and problems in
    line order (``last``: the highest line)."""
    grouped = rows.map(_product_key).groupByKey().flatMap(_flat_group)
    return _in_order(job, grouped, last)


def _product_key(item: tuple[int, Any]) -> tuple[Any, tuple[int, Any]]:
    line, row = item
    product_id = None if isinstance(row, RowProblem) else _cell(row, "id")
    # a problem, or a row without an id, is a group of its own (keyed by its line)
    return (line if product_id is None else str(product_id)), item


def _flat_group(group: tuple[Any, Iterable[Any]]) -> Iterator[tuple[int, _Found | RowProblem]]:
    """One product's rows, in line order, through the local loader's own row code."""
    rows = sorted(group[1], key=lambda item: int(item[0]))
    if len(rows) == 1 and isinstance(rows[0][1], RowProblem):
        yield rows[0]
        return
    collector = _Collector()
    _flat_rows(rows, collector)
    bad = set()
    for problem in collector.report.problems:
        bad.add(problem.line)
        yield problem.line, problem
    for product in collector.report.products:
        # the local loader places a product at its first row that was not rejected
        line = next(line for line, _ in rows if line not in bad)
        yield line, _found(line, product)


# --- CSV --------------------------------------------------------------------------------------
#
# A quoted cell may hold line breaks, so a partition (a byte range) may begin inside a record.
# A first pass parses each partition twice, as if it began outside and inside a quoted cell;
# the driver then follows the true state from the file's start, learns where each partition's
# first and last whole records lie, and parses the records cut by a partition boundary (their
# pieces came back with the first pass). A second pass yields each partition's whole records.


def _physical(value: str) -> list[str]:
    """The lines Python's csv module reads in one Spark line, which ends only at a ``\\n``."""
    parts = _BARE_CR.split(value) if "\r" in value else [value]
    parts[-1] += "\n"
    return parts


class _Lines(NamedTuple):
    """A partition's physical lines, up to the first Spark line that is not UTF-8."""

    lines: list[str]
    rows: int  # Spark lines read
    bad: bool  # whether reading stopped at bytes that are not UTF-8
    block: int | None  # the partition's first byte in the file


def _partition_lines(rows: Iterable[Any]) -> _Lines:
    lines: list[str] = []
    block, count = None, 0
    for value, start, raw in rows:
        if block is None:
            block = start
        if value is None:
            if start == 0 and count == 0:  # the local loader keeps what precedes on line 1
                lines = _physical(_valid_prefix(bytes(raw)))
                lines[-1] = lines[-1].removesuffix("\n")
            return _Lines(lines, count, True, block)
        count += 1
        lines.extend(_physical(value))
    return _Lines(lines, count, False, block)


def _valid_prefix(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        return data[: error.start].decode()


class _Feed:
    """Lines for ``csv.reader`` that notes when the reader asks for more than there is."""

    def __init__(self, lines: Sequence[str], quoted: bool) -> None:
        self._lines = iter(lines)
        self._quoted = quoted
        self.done = False

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._lines)
        except StopIteration:
            self.done = True
            raise
        if self._quoted:  # begin inside a quoted cell
            self._quoted = False
            return '"' + line
        return line


class _Walk(NamedTuple):
    """How a partition parses from one starting state."""

    lead: int  # lines ending a record begun earlier; -1: all of them (it does not end here)
    lead_text: str
    open: int | None  # index of the line starting a record the partition's end cuts
    open_text: str
    error: tuple[int, str] | None  # csv's error: (its record's first line, -1 the lead; why)
    first: list[str] | None  # the first whole record (the header, in the first partition)


def _walk(lines: list[str], quoted: bool) -> _Walk:
    if not lines:
        return _Walk(-1 if quoted else 0, "", None, "", None, None)
    feed = _Feed(lines, quoted)
    reader = csv.reader(feed)
    lead, first, start = 0, None, 0
    try:
        for cells in reader:
            if quoted and not lead:
                if feed.done:
                    return _Walk(-1, "".join(lines), None, "", None, None)
                lead = start = reader.line_num
                continue
            if feed.done:
                return _Walk(
                    lead, "".join(lines[:lead]), start, "".join(lines[start:]), None, first
                )
            if first is None:
                first = cells
            start = reader.line_num
    except csv.Error as error:
        where = -1 if quoted and not lead else start
        return _Walk(lead, "".join(lines[:lead]), None, "", (where, str(error)), first)
    return _Walk(lead, "".join(lines[:lead]), None, "", None, first)


class _Scan(NamedTuple):
    part: int
    block: int
    lines: int
    rows: int  # Spark lines read (each ended by a newline)
    bad: bool  # whether the partition holds bytes that are not UTF-8 (and was read up to them)
    outside: _Walk
    inside: _Walk


def _scan(part: int, rows: Iterable[Any]) -> Iterator[_Scan]:
    lines, count, bad, block = _partition_lines(rows)
    if block is not None:
        walks = _walk(lines, False), _walk(lines, True)
        yield _Scan(part, block, len(lines), count, bad, *walks)


class _Plan(NamedTuple):
    """A partition's whole records: its lines ``skip`` to ``end`` (``None``: its last)."""

    first_line: int  # the file's number for the partition's first line
    skip: int
    end: int | None


@dataclass
class _Layout:
    """Where a CSV's records lie across partitions."""

    plans: dict[int, _Plan] = field(default_factory=dict)
    pieces: dict[int, list[str]] = field(default_factory=dict)  # cut record's line -> texts
    lines: int = 0
    stop: RowProblem | None = None  # nothing from this line on is read (as the local loader)
    utf8: RowProblem | None = None
    unfinished: int | None = None  # a record still open where bytes not UTF-8 end the text
    header: list[str] | None = None


def _layout(scans: list[_Scan]) -> _Layout:
    layout = _Layout()
    scans = sorted(scans, key=lambda scan: scan.block)
    rows = 0
    for scan in scans:  # the local loader reads nothing after bytes that are not UTF-8
        if scan.bad:
            why = "the file is not valid UTF-8; nothing after this was read"
            layout.utf8 = RowProblem(rows + scan.rows + 1, why)
            break
        rows += scan.rows
    quoted, owner = False, 0
    for scan in scans:
        base = layout.lines
        walk = scan.inside if quoted else scan.outside
        if quoted:
            layout.pieces[owner].append(walk.lead_text)
        elif base == 0:
            layout.header = walk.first
        lead = scan.lines if walk.lead < 0 else walk.lead
        layout.plans[scan.part] = _Plan(base + 1, lead, walk.open)
        if walk.error is not None:
            where, why = walk.error
            layout.stop = _unreadable(owner if where < 0 else base + where + 1, why)
            break
        if walk.open is not None:
            owner = base + walk.open + 1
            layout.pieces[owner] = [walk.open_text]
        quoted = walk.open is not None or walk.lead < 0
        layout.lines += scan.lines
        if scan.bad:
            # the local loader's text then ends without the last line's newline
            layout.unfinished = owner if quoted else None
            break
    return layout


def _unreadable(line: int, why: str) -> RowProblem:
    """A record the csv module cannot read: the local loader reads nothing after it."""
    if line == 1:
        return RowProblem(line, f"unreadable header: {why}")
    return RowProblem(line, f"unreadable row: {why}; nothing after it was read")


def _cut_records(layout: _Layout) -> list[tuple[int, list[str]]]:
    """Parse the records that partition boundaries cut (the header too, if it is one)."""
    records = []
    for line, pieces in sorted(layout.pieces.items()):
        if layout.stop is not None and line >= layout.stop.line:
            break
        text = "".join(pieces)
        if line == layout.unfinished:
            text = text.removesuffix("\n")
        try:
            cells = next(csv.reader(io.StringIO(text, newline="")), [])
        except csv.Error as error:
            layout.stop = _unreadable(line, str(error))
            break
        if line == 1:
            layout.header = cells
        else:
            records.append((line, cells))
    return records


def _csv(job: _Job, uri: str, on_problem: ProblemSink) -> RDD[Any] | None:
    text = _text_lines(job, uri).select("text", "block", "raw").rdd
    layout = _layout(text.mapPartitionsWithIndex(_scan).collect())
    cut = _cut_records(layout)
    early = [] if layout.utf8 is None else [layout.utf8]
    header, stop = layout.header, layout.stop
    if stop is not None and stop.line == 1:
        early.append(stop)
        header = None
    elif not header or not any(cell.strip() for cell in header):
        early.append(RowProblem(1, "no header row (expected id, title, price, ...)"))
        header = None
    columns = [] if header is None else [cell.strip().lower() for cell in header]
    collector = _Collector()
    ok = header is not None and _columns_ok(columns, 1, collector)
    for problem in [*early, *collector.report.problems]:
        on_problem(problem)
    if not ok:
        return None
    end = None if stop is None else stop.line
    records = text.mapPartitionsWithIndex(partial(_csv_records, layout.plans, end))
    if cut:
        records = records.union(job.context.parallelize(cut, 1))
    rows = records.flatMap(partial(_csv_row, columns))
    if stop is not None:
        rows = rows.union(job.context.parallelize([(stop.line, stop)], 1))
    return _products_from_flat(job, rows, max(layout.lines, 1))


def _csv_records(
    plans: dict[int, _Plan], stop: int | None, part: int, rows: Iterable[Any]
) -> Iterator[tuple[int, list[str]]]:
    """The partition's whole records, each with the line it starts at (the header left out)."""
    plan = plans.get(part)
    if plan is None:
        return
    lines = _partition_lines(rows).lines
    end = len(lines) if plan.end is None else plan.end
    if stop is not None:  # a record starts at the stop line: lines before it are whole records
        end = max(0, min(end, stop - plan.first_line))
    reader = csv.reader(lines[plan.skip : end])
    consumed = 0
    for cells in reader:
        line = plan.first_line + plan.skip + consumed
        consumed = reader.line_num
        if line > 1:
            yield line, cells


def _csv_row(columns: list[str], item: tuple[int, list[str]]) -> Iterator[tuple[int, Any]]:
    line, cells = item
    if not any(cell.strip() for cell in cells):
        return
    if len(cells) != len(columns):
        yield line, RowProblem(line, f"has {len(cells)} cells, the header has {len(columns)}")
        return
    yield line, dict(zip(columns, cells, strict=True))


# --- embedding and streaming ------------------------------------------------------------------


def _hash_of(record: _Found | RowProblem) -> list[str]:
    return [record.hash] if isinstance(record, _Found) else []


@dataclass(frozen=True)
class _Wanted:
    """The fingerprints to embed, as the wanted set or (when smaller) its complement."""

    hashes: frozenset[str]
    listed: bool  # True: ``hashes`` are the wanted ones

    @classmethod
    def choose(cls, hashes: list[str], wanted: Callable[[str], bool]) -> _Wanted:
        unique = set(hashes)
        yes = frozenset(h for h in unique if wanted(h))
        if len(yes) * 2 <= len(unique):
            return cls(yes, True)
        return cls(frozenset(unique - yes), False)

    def __call__(self, content_hash: str) -> bool:
        return (content_hash in self.hashes) == self.listed


@dataclass(frozen=True)
class _MiniLMRecipe:
    """How an executor builds the MiniLM embedder (a loaded model does not pickle)."""

    threads: int | None
    batch_size: int
    model_dir: Path | None

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return _built(self).embed(texts)


_BUILT: dict[_MiniLMRecipe, Embedder] = {}  # per Python worker: the model loads once


def _built(recipe: _MiniLMRecipe) -> Embedder:
    from ..retrieval.embeddings import MiniLMEmbedder

    embedder = _BUILT.get(recipe)
    if embedder is None:
        embedder = _BUILT[recipe] = MiniLMEmbedder(
            threads=recipe.threads, batch_size=recipe.batch_size, model_dir=recipe.model_dir
        )
    return embedder


def _portable(embedder: Embedder) -> Embedder:
    """What is sent to executors: a MiniLM recipe, or the embedder itself if it pickles."""
    from ..retrieval.embeddings import MiniLMEmbedder

    if isinstance(embedder, MiniLMEmbedder):
        return _MiniLMRecipe(embedder.threads, embedder.batch_size, embedder._model_dir)
    try:
        pickle.dumps(embedder)
    except Exception as error:  # pickling fails with many exception types
        raise ConfigurationError(
            f"the embedder ({type(embedder).__name__}) cannot be sent to Spark executors: "
            f"it does not pickle ({error})"
        ) from error
    return embedder


def _embed(
    shipped: Broadcast[Embedder],
    chosen: Broadcast[_Wanted] | None,
    records: Iterable[_Found | RowProblem],
) -> Iterator[_Found | RowProblem]:
    """Add each wanted product's vector, embedding ``_EMBED_CHUNK`` products a call."""
    import numpy as np

    from ..retrieval.product_vectors import TextVectors, embed_products

    embedder = shipped.value
    cache = TextVectors(embedder)  # per partition: repeated field texts are embedded once
    wanted = None if chosen is None else chosen.value
    stream = iter(records)
    while chunk := list(itertools.islice(stream, _EMBED_CHUNK)):
        todo = [
            (i, record)
            for i, record in enumerate(chunk)
            if isinstance(record, _Found) and (wanted is None or wanted(record.hash))
        ]
        if todo:
            products = [Product.model_validate_json(found.json) for _, found in todo]
            vectors = np.asarray(embed_products(products, cache), dtype=np.float32)
            for (i, found), vector in zip(todo, vectors, strict=True):
                chunk[i] = found._replace(vector=vector.tobytes())
        yield from chunk


def _assemble(
    stream: Iterable[_Found | RowProblem],
    batch_size: int,
    dim: int | None,
    on_problem: ProblemSink,
) -> Iterator[PreparedBatch]:
    """Records, in file order, to batches; a second product with a seen id is a problem."""
    first_line: dict[str, int] = {}
    batch: list[_Found] = []
    for record in stream:
        if isinstance(record, RowProblem):
            on_problem(record)
            continue
        first = first_line.setdefault(record.product_id, record.line)
        if first != record.line:
            on_problem(
                RowProblem(
                    record.line, f"id: product {record.product_id!r} already loaded at line {first}"
                )
            )
            continue
        batch.append(record)
        if len(batch) == batch_size:
            yield _batch(batch, dim)
            batch = []
    if batch:
        yield _batch(batch, dim)


def _batch(found: list[_Found], dim: int | None) -> PreparedBatch:
    products = [Product.model_validate_json(record.json) for record in found]
    hashes = [record.hash for record in found]
    if dim is None:
        return PreparedBatch(products, hashes)
    import numpy as np

    vectors = np.zeros((len(found), dim), dtype=np.float32)
    for row, record in enumerate(found):
        if record.vector is not None:
            vectors[row] = np.frombuffer(record.vector, dtype=np.float32)
    return PreparedBatch(products, hashes, vectors)
