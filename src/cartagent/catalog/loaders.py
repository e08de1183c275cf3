"""Load a catalog from a file: ``load_products(path) -> LoadReport``.

The format follows the file's suffix. Every row is validated; a bad row is skipped and reported
as a ``RowProblem`` with its line, never dropped silently, so a caller can load what is good
and show the operator what is not.

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
options                  JSON object (``{"size": "30", "color": "blue"}``) or ``size=30;color=blue``
variant_id               variant id; blank means ``<id>-<n>`` (n-th variant of the product)
=============  ========  ==============================================================

\\* A row with blank ``price``, ``options`` and ``variant_id`` lists a product without variants.
Product-level cells (title to rating_count) are taken from a product's first row; later rows
may leave them blank, and a later row that contradicts the first is reported and skipped. If a
product's first row is bad, its later rows are reported as belonging to a rejected product.
Unknown columns are reported once (line 1) and ignored. Lines are physical lines of the file
(the header is line 1), so a row with a quoted multi-line cell has the line where it starts.

**Parquet** (``.parquet``, ``.pq``; needs ``pyarrow``): if the file has a ``variants`` column, each
row is a product with the JSON field names (``variants`` a list of structs, ``attributes`` and
``options`` structs or maps); otherwise rows have the CSV columns, typed or as text, one variant
per row. A row's "line" is its 1-based row number; problems with the file as a whole are line 0.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .product import Product, Variant

__all__ = ["LoadReport", "RowProblem", "load_products"]

_PRODUCT_COLUMNS = (
    "title", "description", "brand", "category", "attributes", "rating", "rating_count",
)  # fmt: skip
_VARIANT_COLUMNS = ("price", "currency", "available", "options", "variant_id")
_KNOWN_COLUMNS = frozenset(("id", *_PRODUCT_COLUMNS, *_VARIANT_COLUMNS))
_REQUIRED_COLUMNS = ("id", "title", "price")
_TRUE = frozenset(("true", "t", "yes", "y", "1", "in stock", "available"))
_FALSE = frozenset(("false", "f", "no", "n", "0", "out of stock", "unavailable", "sold out"))
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_PARQUET_BATCH_ROWS = 8192
_MAX_ERRORS_SHOWN = 5  # per row: a row with 500 bad variants gets a readable message


@dataclass(frozen=True)
class RowProblem:
    """Why the row starting at ``line`` (1-based; 0 = the whole file) was not loaded."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class LoadReport:
    """What a load produced: the good products, in file order, and every problem."""

    products: list[Product] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)


def load_products(path: str | os.PathLike[str]) -> LoadReport:
    """Load the products in ``path`` (.json, .jsonl/.ndjson, .csv, .parquet/.pq).

    Raises ``FileNotFoundError`` if there is no such file and ``ValueError`` for another suffix;
    everything wrong *inside* the file is reported in ``LoadReport.problems``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    loader = _LOADERS.get(suffix)
    if loader is None:
        known = ", ".join(sorted(_LOADERS))
        raise ValueError(f"cannot load {path.name!r}: the suffix is not one of {known}")
    if not path.is_file():
        raise FileNotFoundError(f"no catalog file at {path}")
    return loader(path)


# --- shared ---------------------------------------------------------------------------------


def _describe(error: ValidationError, rename: Mapping[str, str] | None = None) -> str:
    """``"variants.0.price: Input should be ..."``: each failed field and why."""
    errors = error.errors(include_url=False)
    parts = []
    for item in errors[:_MAX_ERRORS_SHOWN]:
        loc = [str(part) for part in item["loc"]]
        if loc and rename and loc[0] in rename:
            loc[0] = rename[loc[0]]
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{'.'.join(loc) or 'product'}: {message}")
    if len(errors) > _MAX_ERRORS_SHOWN:
        parts.append(f"and {len(errors) - _MAX_ERRORS_SHOWN} more")
    return "; ".join(parts)


class _Collector:
    """Keeps products in order and refuses a second product with an id already loaded."""

    def __init__(self) -> None:
        self.report = LoadReport()
        self._lines: dict[str, int] = {}

    def problem(self, line: int, message: str) -> None:
        self.report.problems.append(RowProblem(line, message))

    def row(self, line: int, row: Any) -> None:
        if not isinstance(row, Mapping):
            self.problem(line, f"expected a product object, got {_kind(row)}")
            return
        try:
            product = Product.model_validate(row)
        except ValidationError as error:
            self.problem(line, _describe(error))
            return
        first = self._lines.get(product.id)
        if first is not None:
            self.problem(line, f"id: product {product.id!r} already loaded at line {first}")
            return
        self._lines[product.id] = line
        self.report.products.append(product)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _decode(data: bytes, collector: _Collector) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        collector.problem(line, "the file is not valid UTF-8; nothing after this was read")
        try:
            return data[: error.start].decode("utf-8-sig").rsplit("\n", 1)[0]
        except UnicodeDecodeError:  # pragma: no cover - the prefix decodes by construction
            return None


# --- JSON and JSON Lines ------------------------------------------------------------------------


def _json_decoder() -> json.JSONDecoder:
    return json.JSONDecoder(parse_float=Decimal)


class _JsonSyntaxError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def _json_rows(text: str) -> Iterator[tuple[int, Any]]:
    """Yield (line, product) for a top-level list or object, knowing where each value starts."""
    decoder = _json_decoder()
    line, seen = 1, 0

    def line_at(pos: int) -> int:
        nonlocal line, seen
        line += text.count("\n", seen, pos)
        seen = pos
        return line

    def skip(pos: int) -> int:
        match = _WHITESPACE.match(text, pos)
        return match.end() if match else pos

    def decode(pos: int) -> tuple[Any, int]:
        try:
            return decoder.raw_decode(text, pos)
        except json.JSONDecodeError as error:
            raise _JsonSyntaxError(error.lineno, f"invalid JSON: {error.msg}") from None

    def expect(pos: int, chars: str, what: str) -> int:
        pos = skip(pos)
        if pos >= len(text) or text[pos] not in chars:
            found = repr(text[pos]) if pos < len(text) else "the end of the file"
            raise _JsonSyntaxError(line_at(pos), f"invalid JSON: expected {what}, found {found}")
        return pos

    pos = expect(0, "[{", "a list or an object of products")
    closing = "]" if text[pos] == "[" else "}"
    pos = skip(pos + 1)
    if text.startswith(closing, pos):
        pos += 1
    else:
        while True:
            pos = skip(pos)
            key: str | None = None
            if closing == "}":
                pos = expect(pos, '"', "a product id in quotes")
                key, pos = decode(pos)
                pos = expect(pos, ":", "':'") + 1
                pos = skip(pos)
            start = line_at(pos)
            value, pos = decode(pos)
            if key is not None and isinstance(value, dict) and "id" not in value:
                value = {"id": key, **value}
            yield start, value
            pos = expect(pos, "," + closing, f"',' or '{closing}'")
            pos += 1
            if text[pos - 1] == closing:
                break
    pos = skip(pos)
    if pos < len(text):
        raise _JsonSyntaxError(line_at(pos), "invalid JSON: extra data after the catalog")


def _load_json(path: Path) -> LoadReport:
    collector = _Collector()
    text = _decode(path.read_bytes(), collector)
    if text is None:
        return collector.report
    try:
        for line, row in _json_rows(text):
            collector.row(line, row)
    except _JsonSyntaxError as error:
        collector.problem(error.line, f"{error}; nothing after this was read")
    return collector.report


def _load_jsonl(path: Path) -> LoadReport:
    collector = _Collector()
    decoder = _json_decoder()
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                collector.problem(number, "the line is not valid UTF-8")
                continue
            if not text.strip():
                continue
            try:
                row = decoder.decode(text)
            except json.JSONDecodeError as error:
                collector.problem(number, f"invalid JSON: {error.msg} (column {error.colno})")
                continue
            collector.row(number, row)
    return collector.report


# --- flat rows: CSV, and Parquet without a variants column --------------------------------------


class _RowError(Exception):
    """A cell could not be read; the message names the column."""


def _cell(row: Mapping[str, Any], column: str) -> Any:
    """The cell's value, ``None`` when blank or missing."""
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value.strip() if isinstance(value, str) else value


def _pairs(value: Any, column: str) -> dict[str, Any]:
    """A mapping cell: a JSON object, ``k=v1|v2;k2=v``, a mapping or Arrow's list of pairs."""
    if isinstance(value, Mapping | list):
        value = _arrow_maps(value)
        if isinstance(value, dict):
            return value
    if not isinstance(value, str):
        raise _RowError(f"{column}: expected an object, got {_kind(value)}")
    if value.startswith("{"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as error:
            raise _RowError(f"{column}: invalid JSON: {error.msg}") from None
        if not isinstance(parsed, dict):  # pragma: no cover - '{' always parses to an object
            raise _RowError(f"{column}: expected an object, got {_kind(parsed)}")
        return parsed
    out: dict[str, Any] = {}
    for item in value.split(";"):
        if not item.strip():
            continue
        name, sep, rest = item.partition("=")
        if not sep or not name.strip():
            raise _RowError(f"{column}: expected name=value, got {item.strip()!r}")
        out[name.strip()] = [v.strip() for v in rest.split("|") if v.strip()]
    return out


def _flag(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise _RowError(f"available: expected true or false, got {value!r}")


def _number(value: Any) -> Any:
    """Floats from typed columns are read through ``str`` so 59.5 stays Decimal("59.5")."""
    return Decimal(str(value)) if isinstance(value, float) else value


def _product_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for column in _PRODUCT_COLUMNS:
        value = _cell(row, column)
        if value is None:
            continue
        if column == "attributes":
            value = _pairs(value, column)
        elif column == "category" and isinstance(value, list | tuple):
            value = tuple(value)
        fields[column] = value
    return fields


def _options(row: Mapping[str, Any]) -> dict[str, Any]:
    value = _cell(row, "options")
    if value is None:
        return {}
    options = _pairs(value, "options")
    for name, item in options.items():
        if isinstance(item, list):
            if len(item) != 1:
                raise _RowError(f"options.{name}: expected one value, got {len(item)}")
            options[name] = item[0]
    return options


@dataclass
class _Pending:
    line: int
    fields: dict[str, Any]
    product: Product
    variants: list[Variant] = field(default_factory=list)


def _flat_rows(rows: Iterable[tuple[int, Mapping[str, Any]]], collector: _Collector) -> None:
    pending: dict[str, _Pending] = {}
    rejected: dict[str, int] = {}
    for line, row in rows:
        raw_id = _cell(row, "id")
        if raw_id is None:
            collector.problem(line, "id: missing")
            continue
        product_id = str(raw_id)
        if product_id in rejected:
            where = rejected[product_id]
            collector.problem(line, f"id: product {product_id!r} was rejected at line {where}")
            continue
        try:
            fields = _product_fields(row)
            entry = pending.get(product_id)
            first = entry is None
            if entry is None:
                try:
                    product = Product.model_validate({"id": product_id, **fields})
                except ValidationError as error:
                    rejected[product_id] = line
                    raise _RowError(_describe(error)) from None
                entry = _Pending(line, fields, product)
            else:
                _check_same(entry, fields)
            variant = _variant(row, product_id, entry, first)
        except _RowError as error:
            collector.problem(line, str(error))
            continue
        if product_id not in pending:
            pending[product_id] = entry
        if variant is not None:
            entry.variants.append(variant)
    for entry in pending.values():
        collector.report.products.append(
            entry.product.model_copy(update={"variants": tuple(entry.variants)})
        )


def _check_same(entry: _Pending, fields: Mapping[str, Any]) -> None:
    first = entry.product
    for column, value in fields.items():
        if entry.fields.get(column) == value:
            continue
        try:
            mine = Product.model_validate({"id": first.id, "title": "x", column: value})
        except ValidationError as error:
            raise _RowError(_describe(error)) from None
        if getattr(mine, column) != getattr(first, column):
            before = entry.fields.get(column)
            raise _RowError(
                f"{column}: {value!r} differs from "
                f"{'a blank cell' if before is None else repr(before)} "
                f"on the product's first row (line {entry.line})"
            )


def _variant(
    row: Mapping[str, Any], product_id: str, entry: _Pending, first: bool
) -> Variant | None:
    price, options = _cell(row, "price"), _options(row)
    variant_id = _cell(row, "variant_id")
    if price is None and not options and variant_id is None and first:
        return None
    if price is None:
        raise _RowError("price: missing")
    data = {
        "id": f"{product_id}-{len(entry.variants) + 1}" if variant_id is None else str(variant_id),
        "options": options,
        "price": _number(price),
        "available": _flag(_cell(row, "available")),
    }
    currency = _cell(row, "currency")
    if currency is not None:
        data["currency"] = currency
    try:
        variant = Variant.model_validate(data)
    except ValidationError as error:
        raise _RowError(_describe(error, {"id": "variant_id"})) from None
    for other in entry.variants:
        if other.id == variant.id:
            raise _RowError(f"variant_id: {variant.id!r} appears twice in product {product_id!r}")
        if other.currency != variant.currency:
            raise _RowError(
                f"currency: {variant.currency} differs from the product's {other.currency}"
            )
    return variant


def _load_csv(path: Path) -> LoadReport:
    collector = _Collector()
    text = _decode(path.read_bytes(), collector)
    if text is None:
        return collector.report
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as error:
        collector.problem(1, f"unreadable header: {error}")
        return collector.report
    if not header or not any(cell.strip() for cell in header):
        collector.problem(1, "no header row (expected id, title, price, ...)")
        return collector.report
    columns = [cell.strip().lower() for cell in header]
    if not _columns_ok(columns, 1, collector):
        return collector.report

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        previous = reader.line_num
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                collector.problem(
                    previous + 1, f"unreadable row: {error}; nothing after it was read"
                )
                return
            start, previous = previous + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(columns):
                collector.problem(start, f"has {len(cells)} cells, the header has {len(columns)}")
                continue
            yield start, dict(zip(columns, cells, strict=True))

    _flat_rows(rows(), collector)
    return collector.report


def _columns_ok(columns: list[str], line: int, collector: _Collector) -> bool:
    missing = [c for c in _REQUIRED_COLUMNS if c not in columns]
    if missing:
        collector.problem(line, f"missing required column(s): {', '.join(missing)}")
        return False
    duplicated = sorted({c for c in columns if columns.count(c) > 1})
    if duplicated:
        collector.problem(line, f"duplicated column(s): {', '.join(duplicated)}")
        return False
    unknown = [c for c in columns if c not in _KNOWN_COLUMNS]
    if unknown:
        collector.problem(line, f"ignored unknown column(s): {', '.join(unknown)}")
    return True


# --- Parquet ----------------------------------------------------------------------------------


def _arrow_maps(value: Any) -> Any:
    """Arrow gives maps as lists of (key, value) pairs and structs as dicts with a null for
    every key some other row has; make both plain dicts of the keys this row has."""
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        value = dict(value)
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


def _nested_row(row: dict[str, Any]) -> dict[str, Any]:
    row = {k: v for k, v in row.items() if v is not None}
    if "attributes" in row:
        row["attributes"] = _arrow_maps(row["attributes"])
    if isinstance(row.get("variants"), list):
        variants = []
        for variant in row["variants"]:
            if isinstance(variant, dict):
                variant = {k: v for k, v in variant.items() if v is not None}
                if "options" in variant:
                    variant["options"] = _arrow_maps(variant["options"])
                if "price" in variant:
                    variant["price"] = _number(variant["price"])
            variants.append(variant)
        row["variants"] = variants
    return row


def _load_parquet(path: Path) -> LoadReport:
    try:  # pyarrow is large and only Parquet needs it, so it is imported here, on use
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading Parquet needs pyarrow: pip install pyarrow") from None

    collector = _Collector()
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        collector.problem(0, f"not a readable Parquet file: {error}")
        return collector.report
    columns = [str(name) for name in parquet.schema_arrow.names]
    nested = "variants" in columns

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
                for row in batch.to_pylist():
                    number += 1
                    yield number, row
        except (pa.ArrowException, OSError) as error:
            collector.problem(number + 1, f"unreadable rows: {error}; nothing after was read")

    if nested:
        for number, row in rows():
            collector.row(number, _nested_row(row))
    elif _columns_ok([c.lower() for c in columns], 0, collector):
        _flat_rows(((n, {k.lower(): v for k, v in row.items()}) for n, row in rows()), collector)
    return collector.report


_LOADERS: dict[str, Callable[[Path], LoadReport]] = {
    ".csv": _load_csv,
    ".json": _load_json,
    ".jsonl": _load_jsonl,
    ".ndjson": _load_jsonl,
    ".parquet": _load_parquet,
    ".pq": _load_parquet,
}
