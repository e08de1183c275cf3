"""JSON (a list or an object of products): one task parses the whole document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark import RDD

from ...catalog import RowProblem
from ...catalog.rows import json_document
from ._sources import Found, Job, in_order, validated

__all__ = ["read_json"]


def read_json(job: Job, uri: str) -> RDD[Any]:
    files = job.spark.read.format("binaryFile").load(uri).select("content")
    parsed = job.keep(files.rdd.flatMap(_json_document))
    count = parsed.count()
    if count == 0:
        return parsed.values()
    return in_order(job, parsed, count - 1).map(_json_item)


def _json_document(row: Any) -> Iterator[tuple[int, Any]]:
    """``(sequence, item)``: the parse of a whole JSON file, in the local loader's order."""
    yield from enumerate(json_document(bytes(row.content)))


def _json_item(item: Any) -> Found | RowProblem:
    if isinstance(item, RowProblem):
        return item
    line, row = item
    return validated(line, row)
