"""Read a catalog file: ``iter_products(path)`` streams it, ``load_products(path)`` loads it.

The format follows the file's suffix. Every row is validated; a bad row is skipped and reported
as a ``RowProblem`` with its line, never dropped silently, so a caller can load what is good
and show the operator what is not. :func:`iter_products` yields products and problems as it
reads, holding one id per product rather than the products (a JSON document, which cannot be
cut, is held as text while it is read); index builds stream through it.

**JSON** (``.json``): a list of products, or an object whose values are products (a product
without an ``id`` takes its key as id). **JSON Lines** (``.jsonl``, ``.ndjson``): one product per
line; blank lines are skipped. Both use the field names of ``Product`` and ``Variant``::

    {"id": "p1", "title": "Levi's Women's Baggy Jeans", "brand": "Levi's",
     "category": ["Clothing", "Women", "Jeans"], "attributes": {"fit": ["baggy"]},
     "rating": 4.5, "rating_count": 210,
     "variants": [{"id": "p1-30", "options": {"size": "30"}, "price": "59.50"}]}

(``category`` may also be the text ``"Clothing > Women > Jeans"`` and an attribute a single
string.) Numbers are read exactly, so ``59.5`` is ``Decimal("59.5")``. The line of a JSON row is
the line where the product's value starts.

**CSV** (``.csv``, UTF-8, header row required): one *variant* per row; rows with the same ``id``
(anywhere in the file) merge into one product whose variants keep file order. Columns:

=============  ========  ==============================================================
column         required  meaning
=============  ========  ==============================================================
id             yes       product id
title          yes       product title (may be left blank on a product's later rows)
description              free text
brand                    brand; blank for none
category                 path written ``Clothing > Women > Jeans``
attributes               JSON object (``{"fit": ["baggy"]}``) or ``fit=baggy|slim;rise=high``
price          yes*      variant price, e.g. ``59.50`` (no currency symbol)
currency                 ISO code; blank means USD
available                true/false, yes/no, 1/0, in stock/out of stock; blank means true
rating                   average rating 0-5; blank for none
rating_count             number of ratings; blank means 0
image                    picture: an http(s) address, or a png/jpg/webp/gif path relative to
                         the catalog file's folder; blank for none
options                  JSON object (``{"size": "30", "color": "blue"}``) or ``size=30;color=blue``
variant_id               variant id; blank means ``<id>-<n>`` (n-th variant of the product)
=============  ========  ==============================================================

\\* A row with blank ``price``, ``options`` and ``variant_id`` lists a product without variants.
Product-level cells (title to image) are taken from a product's first row; later rows
may leave them blank, and a later row that contradicts the first is reported and skipped. If a
product's first row is bad, its later rows are reported as belonging to a rejected product.
Unknown columns are reported once (line 1) and ignored. Lines are physical lines of the file
(the header is line 1), so a row with a quoted multi-line cell has the line where it starts.
The file is read twice: first for each product's last row, so that a product is handed on as
soon as it is whole.

**Parquet** (``.parquet``, ``.pq``; needs ``pyarrow``): if the file has a ``variants`` column, each
row is a product with the JSON field names (``variants`` a list of structs, ``attributes`` and
``options`` structs or maps); otherwise rows have the CSV columns, typed or as text, one variant
per row (the ``id`` column is read first, as CSV's first pass). A row's "line" is its 1-based
row number; problems with the file as a whole are line 0.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .product import Product
from .rows import (
    NOT_UTF8,
    ProductIds,
    RowProblem,
    cell,
    check_columns,
    flat_products,
    json_decoder,
    json_document,
    nested_row,
    physical_lines,
    product_from_row,
    unreadable_record,
)

__all__ = ["LoadReport", "RowProblem", "iter_products", "load_products"]

_PARQUET_BATCH_ROWS = 8192

Rows = Iterator[Product | RowProblem]
"""A catalog as it is read: each product, and each bad row's problem, in file order."""


@dataclass
class LoadReport:
    """What a load produced: the good products, in file order, and every problem."""

    products: list[Product] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)


def iter_products(path: str | os.PathLike[str]) -> Rows:
    """Stream the products in ``path`` (.json, .jsonl/.ndjson, .csv, .parquet/.pq), each bad
    row's ``RowProblem`` among them.

    Raises ``FileNotFoundError`` if there is no such file and ``ValueError`` for another suffix
    (at the call, not on the first item); everything wrong *inside* the file is yielded.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    reader = _READERS.get(suffix)
    if reader is None:
        known = ", ".join(sorted(_READERS))
        raise ValueError(f"cannot load {path.name!r}: the suffix is not one of {known}")
    if not path.is_file():
        raise FileNotFoundError(f"no catalog file at {path}")
    return reader(path)


def load_products(path: str | os.PathLike[str]) -> LoadReport:
    """Load the products in ``path`` (see :func:`iter_products`, which raises the same)."""
    report = LoadReport()
    for item in iter_products(path):
        if isinstance(item, RowProblem):
            report.problems.append(item)
        else:
            report.products.append(item)
    return report


def _unique(rows: Iterable[tuple[int, Any] | RowProblem]) -> Rows:
    """Nested rows validated, a second product with an id already read refused."""
    ids = ProductIds()
    for item in rows:
        if isinstance(item, RowProblem):
            yield item
            continue
        found = product_from_row(*item)
        if isinstance(found, Product):
            yield ids.repeated(item[0], found.id) or found
        else:
            yield found


# --- JSON and JSON Lines ------------------------------------------------------------------------


def _read_json(path: Path) -> Rows:
    return _unique(json_document(path.read_bytes()))


def _read_jsonl(path: Path) -> Rows:
    return _unique(_jsonl_rows(path))


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any] | RowProblem]:
    decoder = json_decoder()
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                yield RowProblem(number, "the line is not valid UTF-8")
                continue
            if not text.strip():
                continue
            try:
                yield number, decoder.decode(text)
            except json.JSONDecodeError as error:
                yield RowProblem(number, f"invalid JSON: {error.msg} (column {error.colno})")


# --- CSV --------------------------------------------------------------------------------------


class _Lines:
    """A CSV file's lines as the csv module reads them from the whole text, read a line at a
    time, up to the first bytes that are not UTF-8 (the text then ends at the line break
    before them, and ``problem`` says where)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.problem: RowProblem | None = None

    def __iter__(self) -> Iterator[str]:
        with self._path.open("rb") as handle:
            held = ""  # a line is handed on once the next one decodes
            for number, raw in enumerate(handle, start=1):
                try:
                    text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as error:
                    self.problem = RowProblem(number, NOT_UTF8)
                    if number == 1:
                        held = raw[: error.start].decode("utf-8-sig")
                    held = held.removesuffix("\n")
                    break
                if held:
                    yield from physical_lines(held)
                held = text
            if held:
                yield from physical_lines(held)


def _records(lines: _Lines) -> Iterator[tuple[int, list[str]] | RowProblem]:
    """Each record (the header first) with the line it starts at; a problem where the csv
    module cannot read on."""
    reader = csv.reader(iter(lines))
    previous = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield unreadable_record(previous + 1, str(error))
            return
        start, previous = previous + 1, reader.line_num
        yield start, cells


def _read_csv(path: Path) -> Rows:
    lines = _Lines(path)
    records = _records(lines)
    header = next(records, None)
    if isinstance(header, RowProblem):
        yield from (problem for problem in (lines.problem, header) if problem is not None)
        return
    if header is None or not any(text.strip() for text in header[1]):
        if lines.problem is not None:
            yield lines.problem
        yield RowProblem(1, "no header row (expected id, title, price, ...)")
        return
    columns = [name.strip().lower() for name in header[1]]
    ok, problems = check_columns(columns, 1)
    if not ok:
        yield from (problem for problem in (lines.problem, *problems) if problem is not None)
        return
    last_lines = _last_lines(records, columns.index("id"), len(columns))
    if lines.problem is not None:  # found by the first pass: the loader reported it first
        yield lines.problem
    yield from problems
    second = _records(lines)
    next(second, None)
    yield from flat_products(_csv_rows(second, columns), last_lines)


def _last_lines(
    records: Iterator[tuple[int, list[str]] | RowProblem], id_column: int, width: int
) -> dict[str, int]:
    """Each product id's last row (the first pass)."""
    last: dict[str, int] = {}
    for record in records:
        if isinstance(record, RowProblem):
            break
        line, cells = record
        if len(cells) == width and cells[id_column].strip():
            last[cells[id_column].strip()] = line
    return last


def _csv_rows(
    records: Iterator[tuple[int, list[str]] | RowProblem], columns: list[str]
) -> Iterator[tuple[int, dict[str, str] | RowProblem]]:
    for record in records:
        if isinstance(record, RowProblem):
            yield record.line, record
            return
        line, cells = record
        if not any(text.strip() for text in cells):
            continue
        if len(cells) != len(columns):
            problem = RowProblem(line, f"has {len(cells)} cells, the header has {len(columns)}")
            yield line, problem
            continue
        yield line, dict(zip(columns, cells, strict=True))


# --- Parquet ----------------------------------------------------------------------------------


def _read_parquet(path: Path) -> Rows:
    try:  # pyarrow is large and only Parquet needs it, so it is imported here, on use
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading Parquet needs pyarrow: pip install pyarrow") from None

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        yield RowProblem(0, f"not a readable Parquet file: {error}")
        return
    columns = [str(name) for name in parquet.schema_arrow.names]

    def rows(only: list[str] | None = None) -> Iterator[tuple[int, dict[str, Any] | RowProblem]]:
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=only):
                for row in batch.to_pylist():
                    number += 1
                    yield number, row
        except (pa.ArrowException, OSError) as error:
            problem = RowProblem(number + 1, f"unreadable rows: {error}; nothing after was read")
            yield problem.line, problem

    if "variants" in columns:
        yield from _unique(
            row if isinstance(row, RowProblem) else (number, nested_row(row))
            for number, row in rows()
        )
        return
    ok, problems = check_columns([c.lower() for c in columns], 0)
    yield from problems
    if not ok:
        return
    id_column = next(name for name in columns if name.lower() == "id")
    last_lines: dict[str, int] = {}
    for number, row in rows([id_column]):
        if isinstance(row, RowProblem):
            break
        product_id = cell(row, id_column)
        if product_id is not None:
            last_lines[str(product_id)] = number
    yield from flat_products(
        (
            (number, row if isinstance(row, RowProblem) else {k.lower(): v for k, v in row.items()})
            for number, row in rows()
        ),
        last_lines,
    )


_READERS: dict[str, Callable[[Path], Rows]] = {
    ".csv": _read_csv,
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".parquet": _read_parquet,
    ".pq": _read_parquet,
}
