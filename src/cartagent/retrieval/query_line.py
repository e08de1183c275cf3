"""The query line: a SearchQuery in a third of the tokens its JSON takes.

A tuned small model answers faster when it writes less: decoding is most of its latency, and
``{"category": "hoodie", "exclude": [{"field": "color", "value": "light blue"}]}`` is 25 tokens
where ``hoodie | not color=light blue`` is 8. Segments are separated by `` | ``:

* the first is the category, or ``*`` when there is none;
* ``brand=Adidas``; ``text=graphic print`` (words no field captures);
* ``material=nylon`` a product attribute, ``color:white`` a variant option; alternatives are
  joined by `` or `` (``size:S or M``);
* ``price<=60``, ``price>=55``, ``price 40-60``, with the currency after when it is not USD
  (``price<=60 EUR``);
* ``rating>=4``; ``cheapest``, ``dearest`` or ``best rated`` (the sort); ``in stock``;
* ``not color=light blue`` or ``not leather`` (an exclusion, with or without its field).

``|`` and line breaks cannot appear in any value, `` or `` in an attribute's or option's value,
``=`` or ``:`` in their names, nor ``=`` in an exclusion without its field: such a query
cannot be written as a line (none of the tuning set's queries is one).

:func:`query_line` writes the line; :func:`parse_query_line` reads it back to the same query
and raises :class:`ValueError` naming the segment it cannot read.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from pydantic import ValidationError

from ..errors import field_problems
from .query import Exclusion, PriceRange, SearchQuery

__all__ = ["gaps_line", "parse_gaps_line", "parse_query_line", "query_line"]

SEPARATOR = " | "
NO_CATEGORY = "*"
ALTERNATIVE = " or "
DEFAULT_CURRENCY = "USD"
MAX_LINE = 1000
MAX_SEGMENTS = 40

_SORTS = {"price_asc": "cheapest", "price_desc": "dearest", "rating": "best rated"}
_SORT_WORDS = {word: sort for sort, word in _SORTS.items()}
_NUMBER = r"(\d+(?:\.\d+)?)"
_CURRENCY = r"(?: ([A-Z]{3}))?"
_PRICE_MAX = re.compile(rf"price<={_NUMBER}{_CURRENCY}")
_PRICE_MIN = re.compile(rf"price>={_NUMBER}{_CURRENCY}")
_PRICE_RANGE = re.compile(rf"price {_NUMBER}-{_NUMBER}{_CURRENCY}")
_RATING = re.compile(rf"rating>={_NUMBER}")
_NOT = re.compile(r"not (?:([a-z][\w -]*?)=)?(.+)")
_PAIR = re.compile(r"([a-z][\w -]*?)([=:])(.+)")


def _value(text: str, *, reserved: tuple[str, ...] = ()) -> str:
    for mark in ("|", "\n", *reserved):
        if mark in text:
            raise ValueError(f"{text!r} cannot go in a query line here ({mark!r} is reserved)")
    return text


def _alternatives(values: list[str]) -> str:
    return ALTERNATIVE.join(_value(v, reserved=(ALTERNATIVE,)) for v in values)


def _price(price: PriceRange) -> str:
    currency = "" if price.currency == DEFAULT_CURRENCY else f" {price.currency}"
    if price.min is not None and price.max is not None:
        return f"price {price.min:f}-{price.max:f}{currency}"
    if price.max is not None:
        return f"price<={price.max:f}{currency}"
    return f"price>={price.min:f}{currency}"


def query_line(query: SearchQuery) -> str:
    """``query`` as one line (see the module's notation). Raises :class:`ValueError` for a value
    holding ``|`` or a line break."""
    if query.category == NO_CATEGORY:
        raise ValueError(f"{NO_CATEGORY!r} cannot be a category: it marks none")
    segments = [_value(query.category) if query.category else NO_CATEGORY]
    if query.brand:
        segments.append(f"brand={_value(query.brand)}")
    for separator, group in (("=", query.attributes), (":", query.options)):
        for name, values in group.items():
            name = _value(name, reserved=("=", ":"))
            segments.append(f"{name}{separator}{_alternatives(values)}")
    if query.price is not None and (query.price.min is not None or query.price.max is not None):
        segments.append(_price(query.price))
    if query.min_rating is not None:
        segments.append(f"rating>={Decimal(str(query.min_rating)).normalize():f}")
    if query.sort != "relevance":
        segments.append(_SORTS[query.sort])
    if query.available_only:
        segments.append("in stock")
    for excluded in query.exclude:
        field = f"{_value(excluded.field, reserved=('=',))}=" if excluded.field else ""
        value = _value(excluded.value, reserved=() if excluded.field else ("=",))
        segments.append(f"not {field}{value}")
    if query.text:
        segments.append(f"text={_value(query.text)}")
    return SEPARATOR.join(segments)


def _number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the patterns admit only digits
        raise ValueError(f"{text!r} is not a number") from None


def gaps_line(query: SearchQuery) -> str:
    """``query`` as a line without the ``* | `` that opens one naming no category: a patch (what
    a reading lacks) seldom names one, and those two tokens are a fifth of its answer."""
    line = query_line(query)
    return line.removeprefix(NO_CATEGORY + SEPARATOR)


def parse_gaps_line(line: str) -> SearchQuery:
    """The query a :func:`gaps_line` states: its first segment is a category unless it reads as
    a field (``color:blue``, ``price<=60``, ``in stock``, ...). Raises :class:`ValueError`."""
    line = line.strip()
    first = line.split("|", 1)[0].strip()
    if first and first != NO_CATEGORY:
        try:
            as_field = parse_query_line(NO_CATEGORY + SEPARATOR + first)
        except ValueError:
            as_field = None
        if as_field is not None:
            line = NO_CATEGORY + SEPARATOR + line
    return parse_query_line(line)


def parse_query_line(line: str) -> SearchQuery:
    """The query a line states. Raises :class:`ValueError` naming what cannot be read."""
    line = line.strip()
    if not line or len(line) > MAX_LINE or "\n" in line:
        raise ValueError(f"a query line has 1 to {MAX_LINE} characters on one line")
    segments = [s.strip() for s in line.split("|")]
    if len(segments) > MAX_SEGMENTS:
        raise ValueError(f"a query line has at most {MAX_SEGMENTS} segments")
    fields: dict[str, object] = {}
    attributes: dict[str, list[str]] = {}
    options: dict[str, list[str]] = {}
    exclude: list[Exclusion] = []
    if segments[0] and segments[0] != NO_CATEGORY:
        fields["category"] = segments[0]
    for number, segment in enumerate(segments[1:], 2):
        if not segment:
            raise ValueError(f"segment {number} is empty")
        if segment in _SORT_WORDS:
            fields["sort"] = _SORT_WORDS[segment]
        elif segment == "in stock":
            fields["available_only"] = True
        elif segment.startswith("brand="):
            fields["brand"] = segment.removeprefix("brand=").strip()
        elif segment.startswith("text="):
            fields["text"] = segment.removeprefix("text=").strip()
        elif found := _PRICE_RANGE.fullmatch(segment):
            low, high, currency = found.groups()
            fields["price"] = PriceRange(
                min=_number(low), max=_number(high), currency=currency or DEFAULT_CURRENCY
            )
        elif found := _PRICE_MAX.fullmatch(segment):
            fields["price"] = PriceRange(
                max=_number(found[1]), currency=found[2] or DEFAULT_CURRENCY
            )
        elif found := _PRICE_MIN.fullmatch(segment):
            fields["price"] = PriceRange(
                min=_number(found[1]), currency=found[2] or DEFAULT_CURRENCY
            )
        elif found := _RATING.fullmatch(segment):
            fields["min_rating"] = float(found[1])
        elif found := _NOT.fullmatch(segment):
            exclude.append(Exclusion(field=found[1], value=found[2].strip()))
        elif found := _PAIR.fullmatch(segment):
            name, kind, values = found.groups()
            group = attributes if kind == "=" else options
            group.setdefault(name.strip(), []).extend(
                v.strip() for v in values.split(ALTERNATIVE) if v.strip()
            )
        else:
            raise ValueError(f"segment {number} ({segment[:60]!r}) is not query-line notation")
    try:
        return SearchQuery(
            **fields,  # type: ignore[arg-type]
            attributes=attributes,
            options=options,
            exclude=exclude,
        )
    except ValidationError as error:
        where, message = field_problems(error, whole="")[0]
        raise ValueError(f"{where}: {message}") from None
