"""Parquet: a row's line is its 1-based row number."""

from __future__ import annotations

from typing import Any

from pyspark import RDD
from pyspark.sql import functions as sf

from ...catalog import RowProblem
from ...catalog.rows import check_columns, nested_row
from ..prepared import ProblemSink
from ._flat_rows import products_from_flat
from ._sources import Found, Job, validated

__all__ = ["read_parquet"]

_ROW_COLUMN = "__cartagent_row__"


def read_parquet(job: Job, uri: str, on_problem: ProblemSink) -> RDD[Any] | None:
    try:
        frame = job.spark.read.parquet(uri)
        columns = [str(name) for name in frame.schema.names]
    except Exception as error:  # Spark wraps the reader's failure in several exception types
        on_problem(RowProblem(0, f"not a readable Parquet file: {error}"))
        return None
    rows = frame.select(sf.col("_metadata.row_index").alias(_ROW_COLUMN), "*").rdd
    if "variants" in columns:
        return rows.map(_nested_parquet_row)
    ok, problems = check_columns([c.lower() for c in columns], 0)
    for problem in problems:
        on_problem(problem)
    if not ok:
        return None
    return products_from_flat(job, rows.map(_flat_parquet_row), frame.count())


def _nested_parquet_row(row: Any) -> Found | RowProblem:
    data = row.asDict(recursive=True)
    line = data.pop(_ROW_COLUMN) + 1
    return validated(line, nested_row(data))


def _flat_parquet_row(row: Any) -> tuple[int, dict[str, Any]]:
    data = row.asDict(recursive=True)
    line = data.pop(_ROW_COLUMN) + 1
    return line, {key.lower(): value for key, value in data.items()}
