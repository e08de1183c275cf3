"""``SparkEngine``: the session, and ``prepare`` reading a source into prepared batches."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pyspark import RDD
from pyspark.sql import SparkSession

from ...catalog.source import is_tau_file
from ...catalog.tau import TAU_PRODUCTS
from ...errors import ConfigurationError
from ..prepared import PreparedBatch, ProblemSink
from ._csv_records import read_csv
from ._json_document import read_json
from ._jsonl import read_jsonl
from ._parquet import read_parquet
from ._sources import Job
from ._stream import Wanted, assemble, embed, hash_of, portable

if TYPE_CHECKING:
    from ...retrieval import Embedder

__all__ = ["SparkEngine"]

_SUFFIXES = (".csv", ".json", ".jsonl", ".ndjson", ".parquet", ".pq")


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
    """An :class:`~cartagent.indexing.prepared.Engine` running on Apache Spark.

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
        shipped = None if embedder is None else portable(embedder)
        return self._batches(uri, suffix, shipped, batch_size, on_problem, wanted)

    def _batches(
        self,
        uri: str,
        suffix: str,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None,
    ) -> Iterator[PreparedBatch]:
        job = Job(self.session)
        try:
            records = _read(job, uri, suffix, on_problem)
            if records is None:
                return
            if embedder is not None:
                chosen = None
                if wanted is not None:
                    job.keep(records)
                    chosen = job.broadcast(
                        Wanted.choose(records.flatMap(hash_of).collect(), wanted)
                    )
                shipped = job.broadcast(embedder)
                records = records.mapPartitions(partial(embed, shipped, chosen))
            job.keep(records).count()  # every stage runs in parallel before streaming
            stream = records.toLocalIterator(prefetchPartitions=True)
            dim = None if embedder is None else embedder.dim
            yield from assemble(stream, batch_size, dim, on_problem)
        finally:
            job.release()


def _locate(source: Path | str) -> tuple[str, str]:
    """Spark's address for ``source`` and its lower-cased suffix."""
    if isinstance(source, str) and "://" in source:
        uri, suffix = source, PurePosixPath(source.split("://", 1)[1]).suffix.lower()
    else:
        path = Path(source)
        if not path.exists():
            raise ConfigurationError(f"{path} does not exist")
        if path.is_dir() or (path.name == TAU_PRODUCTS and is_tau_file(path)):
            raise ConfigurationError(
                f"{path} is a tau-bench catalog or a folder: the local engine reads those"
            )
        uri, suffix = f"file:{path.resolve()}", path.suffix.lower()
    if suffix not in _SUFFIXES:
        known = ", ".join(sorted(_SUFFIXES))
        raise ConfigurationError(f"cannot read {source!s}: the suffix is not one of {known}")
    return uri, suffix


def _read(job: Job, uri: str, suffix: str, on_problem: ProblemSink) -> RDD[Any] | None:
    """Validated records (``Found`` or ``RowProblem``), partitions in file order."""
    if suffix in (".jsonl", ".ndjson"):
        return read_jsonl(job, uri)
    if suffix == ".json":
        return read_json(job, uri)
    if suffix == ".csv":
        return read_csv(job, uri, on_problem)
    return read_parquet(job, uri, on_problem)
