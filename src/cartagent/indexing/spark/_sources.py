"""What every source format shares: the job's cluster state, records, lines, ordering."""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from pyspark import RDD, Broadcast, SparkContext, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from ...catalog import Product, RowProblem
from ...catalog.rows import product_from_row
from ..fingerprints import content_hash

__all__ = ["ROW_BITS", "Found", "Job", "found", "in_order", "text_lines", "validated"]

ROW_BITS = 33  # monotonically_increasing_id: partition index above, row within it below


class Job:
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


class Found(NamedTuple):
    """A valid product as it travels: canonical JSON, fingerprint, and its vector's bytes."""

    line: int
    product_id: str
    json: str
    hash: str
    vector: bytes | None = None


def found(line: int, product: Product) -> Found:
    return Found(line, product.id, product.model_dump_json(), content_hash(product))


def validated(line: int, row: Any) -> Found | RowProblem:
    """One nested row (a JSON value), checked exactly as the local loader checks it."""
    product = product_from_row(line, row)
    return product if isinstance(product, RowProblem) else found(line, product)


def text_lines(job: Job, uri: str) -> DataFrame:
    """The file's ``\\n``-separated lines: position (see ``ROW_BITS``), text (null when it is
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


def in_order(job: Job, keyed: RDD[Any], last: int) -> RDD[Any]:
    """``(key, record)`` pairs with int keys in ``0..last``: records sorted, partitions ranged."""
    width = job.width
    span = last + 1
    return keyed.repartitionAndSortWithinPartitions(
        width, partial(_range_part, width, span)
    ).values()


def _range_part(width: int, span: int, key: int) -> int:
    return min(width - 1, key * width // span)
