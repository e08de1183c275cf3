"""Flat rows (CSV, Parquet without variants), one variant a row: grouped by product id."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pyspark import RDD

from ...catalog import RowProblem
from ...catalog.rows import cell, flat_products
from ._sources import Found, Job, found, in_order

__all__ = ["products_from_flat"]


def products_from_flat(job: Job, rows: RDD[Any], last: int) -> RDD[Any]:
    """``(line, row or RowProblem)`` pairs, one variant a row, to products and problems in
    line order (``last``: the highest line)."""
    grouped = rows.map(_product_key).groupByKey().flatMap(_flat_group)
    return in_order(job, grouped, last)


def _product_key(item: tuple[int, Any]) -> tuple[Any, tuple[int, Any]]:
    line, row = item
    product_id = None if isinstance(row, RowProblem) else cell(row, "id")
    # a problem, or a row without an id, is a group of its own (keyed by its line)
    return (line if product_id is None else str(product_id)), item


def _flat_group(group: tuple[Any, Iterable[Any]]) -> Iterator[tuple[int, Found | RowProblem]]:
    """One product's rows, in line order, through the local loader's own row code."""
    rows = sorted(group[1], key=lambda item: int(item[0]))
    if len(rows) == 1 and isinstance(rows[0][1], RowProblem):
        yield rows[0]
        return
    items = list(flat_products(rows))  # its problems, then (at the end) its product
    bad = {item.line for item in items if isinstance(item, RowProblem)}
    for item in items:
        if isinstance(item, RowProblem):
            yield item.line, item
            continue
        # the local loader places a product at its first row that was not rejected
        line = next(line for line, _ in rows if line not in bad)
        yield line, found(line, item)
