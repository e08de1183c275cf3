"""JSON Lines: Spark's text reader, each line numbered by a counting job."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from pyspark import RDD
from pyspark.sql import functions as sf

from ...catalog import RowProblem
from ...catalog.rows import json_decoder
from ._sources import ROW_BITS, Found, Job, text_lines, validated

__all__ = ["read_jsonl"]


def read_jsonl(job: Job, uri: str) -> RDD[Any]:
    lines = text_lines(job, uri)
    parts = (
        lines.groupBy(sf.shiftright("position", ROW_BITS).alias("part"))
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
) -> Iterator[Found | RowProblem]:
    decoder = json_decoder()
    mask = (1 << ROW_BITS) - 1
    for position, text in rows:
        line = offsets[position >> ROW_BITS] + (position & mask) + 1
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
        yield validated(line, row)
