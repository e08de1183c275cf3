"""Catalog rows into products: the parsing every reader shares, whichever engine runs it.

The local loaders (:mod:`cartagent.catalog.loaders`) and the Spark engine both turn rows into
products with these functions, so a file gives the same products and the same problems, at
the same lines, whoever reads it. Each function streams: it yields a product or a
:class:`RowProblem` as soon as its rows are read.

* :func:`product_from_row` validates one nested row (a JSON value, a nested Parquet row after
  :func:`nested_row`); :class:`ProductIds` refuses a second product with an id already read.
* :func:`json_document` / :func:`json_rows` find the products of a JSON document (a list or
  an object of them).
* :func:`flat_products` merges flat rows (CSV, Parquet without ``variants``: one variant a
  row, :func:`cell` reads a cell) into products; :func:`check_columns` checks their header.
"""

from __future__ import annotations

import codecs
import json
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from .product import Product, Variant

__all__ = [
    "NOT_UTF8",
    "JsonSyntaxError",
    "ProductIds",
    "RowProblem",
    "cell",
    "check_columns",
    "flat_products",
    "json_decoder",
    "json_document",
    "json_rows",
    "nested_row",
    "physical_lines",
    "product_from_row",
    "unreadable_record",
]

_PRODUCT_COLUMNS = (
    "title", "description", "brand", "category", "attributes", "rating", "rating_count", "image",
)  # fmt: skip
_VARIANT_COLUMNS = ("price", "currency", "available", "options", "variant_id")
_KNOWN_COLUMNS = frozenset(("id", *_PRODUCT_COLUMNS, *_VARIANT_COLUMNS))
_REQUIRED_COLUMNS = ("id", "title", "price")
_TRUE = frozenset(("true", "t", "yes", "y", "1", "in stock", "available"))
_FALSE = frozenset(("false", "f", "no", "n", "0", "out of stock", "unavailable", "sold out"))
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_BARE_CR = re.compile(r"(?<=\r)(?=[^\n])")
NOT_UTF8 = "the file is not valid UTF-8; nothing after this was read"
"""The problem where a JSON or CSV file's bytes stop being UTF-8."""
_MAX_ERRORS_SHOWN = 5  # per row: a row with 500 bad variants gets a readable message


@dataclass(frozen=True)
class RowProblem:
    """Why the row starting at ``line`` (1-based; 0 = the whole file) was not loaded."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


# --- nested rows ------------------------------------------------------------------------------


def product_from_row(line: int, row: Any) -> Product | RowProblem:
    """The product a nested row (field names of ``Product``) describes, or why it is none."""
    if not isinstance(row, Mapping):
        return RowProblem(line, f"expected a product object, got {_kind(row)}")
    try:
        return Product.model_validate(row)
    except ValidationError as error:
        return RowProblem(line, _describe(error))


class ProductIds:
    """The line of each product id read so far: a second product with an id is a problem.

    It keeps one entry per product, so the products themselves need not be kept.
    """

    def __init__(self) -> None:
        self._lines: dict[str, int] = {}

    def repeated(self, line: int, product_id: str) -> RowProblem | None:
        """The problem when a product with this id was read already, else ``None`` (and the
        id is remembered as read at ``line``)."""
        first = self._lines.get(product_id)
        if first is not None:
            return RowProblem(line, f"id: product {product_id!r} already loaded at line {first}")
        self._lines[product_id] = line
        return None


def nested_row(row: dict[str, Any]) -> dict[str, Any]:
    """A Parquet row with a ``variants`` column as the JSON row it stands for."""
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


def _arrow_maps(value: Any) -> Any:
    """Arrow gives maps as lists of (key, value) pairs and structs as dicts with a null for
    every key some other row has; make both plain dicts of the keys this row has."""
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        value = dict(value)
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


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


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


# --- JSON -------------------------------------------------------------------------------------


def json_decoder() -> json.JSONDecoder:
    """The decoder for catalog JSON: numbers with a fraction are read exactly, as ``Decimal``."""
    return json.JSONDecoder(parse_float=Decimal)


class JsonSyntaxError(Exception):
    """The document is not JSON from ``line`` on; nothing after it can be read."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def json_document(data: bytes) -> Iterator[tuple[int, Any] | RowProblem]:
    """The products of a JSON file's bytes as :func:`json_rows` finds them, with a problem
    where the bytes stop being UTF-8 (first) or the text stops being JSON (last)."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode()
    except UnicodeDecodeError as error:
        yield RowProblem(data.count(b"\n", 0, error.start) + 1, NOT_UTF8)
        text = data[: error.start].decode().rsplit("\n", 1)[0]
    del data  # the text alone is held while it is read
    try:
        yield from json_rows(text)
    except JsonSyntaxError as error:
        yield RowProblem(error.line, f"{error}; nothing after this was read")


def json_rows(text: str) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` for each product of a top-level list or object (where the value
    starts); a value without an ``id`` in an object takes its key as id. Raises
    :class:`JsonSyntaxError` where the text stops being JSON, after the values before it."""
    decoder = json_decoder()
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
            raise JsonSyntaxError(error.lineno, f"invalid JSON: {error.msg}") from None

    def expect(pos: int, chars: str, what: str) -> int:
        pos = skip(pos)
        if pos >= len(text) or text[pos] not in chars:
            found = repr(text[pos]) if pos < len(text) else "the end of the file"
            raise JsonSyntaxError(line_at(pos), f"invalid JSON: expected {what}, found {found}")
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
        raise JsonSyntaxError(line_at(pos), "invalid JSON: extra data after the catalog")


# --- flat rows: CSV, and Parquet without a variants column --------------------------------------


def physical_lines(text: str) -> list[str]:
    """A line of a file (up to and with its ``\\n``) cut after each ``\\r`` that no ``\\n``
    follows: the lines the csv module counts in it, as it reads a file opened with
    ``newline=""``."""
    return _BARE_CR.split(text) if "\r" in text else [text]


def unreadable_record(line: int, why: str) -> RowProblem:
    """A CSV record the csv module cannot read (``why``): nothing after it is read."""
    if line == 1:
        return RowProblem(line, f"unreadable header: {why}")
    return RowProblem(line, f"unreadable row: {why}; nothing after it was read")


def check_columns(columns: list[str], line: int) -> tuple[bool, list[RowProblem]]:
    """Whether flat rows with these (lower-cased) columns can be read, and what is wrong."""
    missing = [c for c in _REQUIRED_COLUMNS if c not in columns]
    if missing:
        return False, [RowProblem(line, f"missing required column(s): {', '.join(missing)}")]
    duplicated = sorted({c for c in columns if columns.count(c) > 1})
    if duplicated:
        return False, [RowProblem(line, f"duplicated column(s): {', '.join(duplicated)}")]
    unknown = [c for c in columns if c not in _KNOWN_COLUMNS]
    if unknown:
        return True, [RowProblem(line, f"ignored unknown column(s): {', '.join(unknown)}")]
    return True, []


def cell(row: Mapping[str, Any], column: str) -> Any:
    """The cell's value, ``None`` when blank or missing."""
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value.strip() if isinstance(value, str) else value


class _RowError(Exception):
    """A cell could not be read; the message names the column."""


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
        value = cell(row, column)
        if value is None:
            continue
        if column == "attributes":
            value = _pairs(value, column)
        elif column == "category" and isinstance(value, list | tuple):
            value = tuple(value)
        fields[column] = value
    return fields


def _options(row: Mapping[str, Any]) -> dict[str, Any]:
    value = cell(row, "options")
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
    whole: bool = False  # its last row is read

    def merged(self) -> Product:
        return self.product.model_copy(update={"variants": tuple(self.variants)})


def flat_products(
    rows: Iterable[tuple[int, Mapping[str, Any] | RowProblem]],
    last_lines: Mapping[str, int] | None = None,
) -> Iterator[Product | RowProblem]:
    """Products from flat rows (one variant a row, ``(line, row)`` in line order) merged by
    id, in the order of each product's first row, with each bad row's problem as it is met.

    A product is only whole once its last row is read: given ``last_lines`` (each id's last
    line) it is yielded then, after the products that started before it; without, every
    product is yielded at the end. A ``RowProblem`` among ``rows`` is passed through.
    """
    pending: dict[str, _Pending] = {}
    order: deque[_Pending] = deque()
    rejected: dict[str, int] = {}
    for line, row in rows:
        if isinstance(row, RowProblem):
            yield row
            continue
        raw_id = cell(row, "id")
        if raw_id is None:
            yield RowProblem(line, "id: missing")
            continue
        product_id = str(raw_id)
        problem = _flat_row(line, row, product_id, pending, order, rejected)
        if problem is not None:
            yield problem
        if last_lines is not None and last_lines.get(product_id) == line:
            entry = pending.pop(product_id, None)
            if entry is not None:
                entry.whole = True
            while order and order[0].whole:
                yield order.popleft().merged()
    for entry in order:
        yield entry.merged()


def _flat_row(
    line: int,
    row: Mapping[str, Any],
    product_id: str,
    pending: dict[str, _Pending],
    order: deque[_Pending],
    rejected: dict[str, int],
) -> RowProblem | None:
    """Add one row to its product (``pending``, new ones also to ``order``), or say why not."""
    if product_id in rejected:
        where = rejected[product_id]
        return RowProblem(line, f"id: product {product_id!r} was rejected at line {where}")
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
        return RowProblem(line, str(error))
    if first:
        pending[product_id] = entry
        order.append(entry)
    if variant is not None:
        entry.variants.append(variant)
    return None


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
    price, options = cell(row, "price"), _options(row)
    variant_id = cell(row, "variant_id")
    if price is None and not options and variant_id is None and first:
        return None
    if price is None:
        raise _RowError("price: missing")
    data = {
        "id": f"{product_id}-{len(entry.variants) + 1}" if variant_id is None else str(variant_id),
        "options": options,
        "price": _number(price),
        "available": _flag(cell(row, "available")),
    }
    currency = cell(row, "currency")
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
