"""Reading a :class:`SearchQuery` out of a small model's imperfect JSON.

:func:`repair` takes the first JSON object in the model's text (ignoring code fences and
chatter), tolerates trailing commas, Python literals and output cut off mid-object, then maps
the object onto ``SearchQuery``'s fields: unknown keys are dropped, common wrong shapes coerced
(a scalar for a list, ``"$50"`` prices, ``max_price`` or ``color`` at the top level, sort
synonyms, exclusions as plain strings, ratings as strings, min above max). Every change is
reported, so a caller can tell a clean answer from a patched one.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import deque
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from ..errors import CartagentError
from .query import SearchQuery
from .rules import MAX_REQUEST_CHARS, parse

__all__ = ["UnrepairableOutput", "repair"]

_MAX_OUTPUT_CHARS = 20_000  # a SearchQuery is a few hundred characters; the rest is runaway output
_MAX_PROBLEM_CHARS = 200
_MAX_STARTS = 5  # "{" positions tried: chatter may hold braces before the object
_MAX_CUTS = 20  # prefixes of a cut-off object tried
_MAX_DEPTH = 16  # a SearchQuery nests 4 deep; deeper is not one
_MAX_PRICE = Decimal(99_999_999)
_NULL_WORDS = frozenset({"", "null", "none", "nil", "n/a", "na", "any", "all", "unknown"})


class UnrepairableOutput(CartagentError, ValueError):
    """The model's output holds no JSON object that can be read as a :class:`SearchQuery`."""


def repair(text: str, request: str) -> tuple[SearchQuery, list[str]]:
    """Read a :class:`SearchQuery` out of a model's imperfect ``text``; also say what was fixed.

    Takes the first JSON object in the text (ignoring code fences and chatter), tolerates
    trailing commas, Python literals and output cut off mid-object, drops unknown keys and
    coerces common wrong shapes (a scalar for a list, ``"$50"`` prices, ``max_price`` or
    ``color`` at the top level, sort synonyms, exclusions as plain strings, ratings as strings).
    ``request`` helps read a bare price: a number the request states as a minimum stays one.
    Raises :class:`UnrepairableOutput` (a ``ValueError``) when nothing usable is there.
    """
    if not isinstance(text, str):
        raise UnrepairableOutput("the model's output is not text")
    notes: list[str] = []
    if len(text) > _MAX_OUTPUT_CHARS:
        text = text[:_MAX_OUTPUT_CHARS]
        notes.append(f"output cut to {_MAX_OUTPUT_CHARS} characters")
    data = _json_object(text, notes)
    fields = _coerce(data, request if isinstance(request, str) else "", notes)
    query = _validated(fields, notes)
    return query, list(dict.fromkeys(notes))


def _json_object(text: str, notes: list[str]) -> dict[str, Any]:
    starts = [m.start() for m in re.finditer(r"\{", text[:_MAX_OUTPUT_CHARS])][:_MAX_STARTS]
    if not starts:
        raise UnrepairableOutput("no JSON object in the model's output")
    for start in starts:
        scanned: list[str] = []
        body, end, cuts = _scan(text, start, scanned)
        # Output cut off mid-object: its last element may be cut too, so only whole ones count.
        candidates = [body] if end is not None else cuts[::-1]
        for candidate in candidates:
            value = _loads(candidate, scanned)
            if isinstance(value, dict):
                notes.extend(scanned)
                if end is None:
                    notes.append("closed JSON that was cut off")
                if text[:start].strip() or (end is not None and text[end:].strip()):
                    notes.append("text around the JSON object ignored")
                return value
    raise UnrepairableOutput("the model's JSON object could not be read")


def _scan(text: str, start: int, notes: list[str]) -> tuple[str, int | None, list[str]]:
    """The balanced object from ``start`` (trailing commas dropped) and where it ended.

    When the text ends first, ``cuts`` are the last few whole-element prefixes, closed off,
    to try instead (longest last).
    """
    out: list[str] = []
    stack: list[str] = []
    cuts: deque[tuple[int, str]] = deque(maxlen=_MAX_CUTS)
    in_string = escaped = comma = False

    def cut() -> None:
        cuts.append((len(out), "".join("}" if c == "{" else "]" for c in reversed(stack))))

    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if comma and not c.isspace():
            comma = False
            if c in "}]":
                notes.append("trailing comma removed")
            else:
                cut()
                out.append(",")
        if c == ",":
            comma = True
            continue
        out.append(c)
        if c == '"':
            in_string = True
        elif c in "{[":
            stack.append(c)
            if len(stack) > _MAX_DEPTH:
                return "", None, []
        elif c in "}]":
            if stack:
                stack.pop()
            if not stack:
                return "".join(out), i + 1, []
            cut()
    body = "".join(out)
    return body, None, [body[:size] + closers for size, closers in cuts]


def _loads(candidate: str, notes: list[str]) -> Any:
    try:
        return json.loads(candidate, strict=False)
    except (ValueError, RecursionError):
        pass
    # Small models sometimes write Python dicts: single quotes, True/None. Literals only.
    pythonic = re.sub(r"\b(?:true|false|null)\b", lambda m: _PY[m.group(0)], candidate)
    try:
        value = ast.literal_eval(pythonic)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    notes.append("read a Python literal instead of JSON")
    return value


_PY = {"true": "True", "false": "False", "null": "None"}

# Where a top-level key of the model's object belongs: a field, a price bound, or an option or
# attribute name.
_FIELD_ALIASES: dict[str, str] = {
    **dict.fromkeys(("text", "query", "keywords", "keyword", "search", "terms", "q"), "text"),
    **dict.fromkeys(("search_terms", "free_text"), "text"),
    **dict.fromkeys(("category", "product_type", "product", "product_category"), "category"),
    **dict.fromkeys(("category_name", "item", "item_type"), "category"),
    **dict.fromkeys(("brand", "brand_name", "brands", "manufacturer", "make"), "brand"),
    **dict.fromkeys(("attributes", "attribute", "attrs", "properties"), "attributes"),
    **dict.fromkeys(("options", "option", "variants", "variant"), "options"),
    **dict.fromkeys(("price", "price_range", "prices", "pricerange"), "price"),
    **dict.fromkeys(("sort", "sort_by", "sortby", "order", "order_by", "sorting"), "sort"),
    **dict.fromkeys(("min_rating", "rating", "minimum_rating", "min_stars", "stars"), "min_rating"),
    **dict.fromkeys(("rating_min", "min_rating_stars"), "min_rating"),
    **dict.fromkeys(("available_only", "in_stock", "instock", "available"), "available_only"),
    **dict.fromkeys(("availability", "in_stock_only", "only_in_stock"), "available_only"),
    **dict.fromkeys(("exclude", "excludes", "exclusions", "excluded", "exclusion"), "exclude"),
    **dict.fromkeys(("not", "without", "except", "avoid", "negative"), "exclude"),
    **dict.fromkeys(("max_price", "price_max", "maxprice", "max", "budget"), "price.max"),
    **dict.fromkeys(("under", "below", "price_under", "max_cost", "price_limit"), "price.max"),
    **dict.fromkeys(("min_price", "price_min", "minprice", "min", "above", "over"), "price.min"),
    "currency": "price.currency",
}
_KEY_SYNONYMS = {
    "colour": "color",
    "colors": "color",
    "colours": "color",
    "sizes": "size",
    "materials": "material",
    "genders": "gender",
    "feature": "features",
    "styles": "style",
    "fits": "fit",
}
_OPTION_KEYS = frozenset(
    {"color", "size", "capacity", "storage", "ram", "pack", "length", "weight", "pieces"}
    | {"power", "resolution", "volume", "width"}
)
_ATTRIBUTE_KEYS = frozenset(
    {"material", "gender", "fit", "style", "sleeve", "waist", "features", "type", "connectivity"}
)
_SORTS: dict[str, str] = {
    **dict.fromkeys(("relevance", "relevant", "best_match", "default", "none", ""), "relevance"),
    **dict.fromkeys(("price_asc", "cheapest", "cheapest_first", "price_low_to_high"), "price_asc"),
    **dict.fromkeys(("low_to_high", "price_ascending", "lowest_price", "asc"), "price_asc"),
    **dict.fromkeys(("ascending", "price", "cheap", "cheaper", "lowest"), "price_asc"),
    **dict.fromkeys(
        ("price_desc", "most_expensive", "price_high_to_low", "expensive"), "price_desc"
    ),
    **dict.fromkeys(("high_to_low", "price_descending", "highest_price", "desc"), "price_desc"),
    **dict.fromkeys(("descending", "highest", "priciest"), "price_desc"),
    **dict.fromkeys(
        ("rating", "best_rated", "top_rated", "highest_rated", "rating_desc"), "rating"
    ),
    **dict.fromkeys(("ratings", "stars", "reviews", "best_reviewed", "best"), "rating"),
}
_CURRENCIES = {
    **dict.fromkeys(("$", "usd", "dollar", "dollars", "bucks"), "USD"),
    **dict.fromkeys(("€", "eur", "euro", "euros"), "EUR"),
    **dict.fromkeys(("£", "gbp", "pound", "pounds"), "GBP"),
    **dict.fromkeys(("¥", "yen"), "JPY"),
    **dict.fromkeys(("元", "yuan"), "CNY"),
}
_AMOUNT_RE = re.compile(r"(?<![\d.])(\d+(?:,\d{3})*(?:\.\d+)?)\s*(k\b)?", re.IGNORECASE)
_RANGE_RE = re.compile(
    r"(?P<a>[$€£¥]?\s*\d[\d,.]*\s*k?)\s*(?:-|\u2013|\bto\b|\band\b)\s*(?P<b>[$€£¥]?\s*\d[\d,.]*\s*k?)",
    re.IGNORECASE,
)
_CURRENCY_RE = re.compile(r"[$€£¥元]|\b(?:usd|eur|gbp|dollars?|bucks|euros?|pounds?|yen|yuan)\b")
_NEGATION_PREFIX_RE = re.compile(r"^(?:no|not|without|non|excluding|except|avoid)\s+", re.I)
_MIN_KEYS = ("min", "minimum", "low", "lower", "from", "gte", "gt", "floor", "min_price", "above")
_MAX_KEYS = ("max", "maximum", "high", "upper", "to", "lte", "lt", "ceiling", "max_price", "under")


def _norm_key(key: object) -> str:
    return re.sub(r"[\s\-]+", "_", str(key).strip().lower())


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _coerce(data: dict[str, Any], request: str, notes: list[str]) -> dict[str, Any]:
    """Map the model's object onto SearchQuery's fields, noting every change of shape."""
    out: dict[str, Any] = {}
    bounds: dict[str, Any] = {}
    extra: dict[str, dict[str, Any]] = {"attributes": {}, "options": {}}
    for raw_key, value in data.items():
        key = _norm_key(raw_key)
        target = _FIELD_ALIASES.get(key)
        name = _KEY_SYNONYMS.get(key, key)
        if target is None and (name in _OPTION_KEYS or name in _ATTRIBUTE_KEYS):
            kind = "options" if name in _OPTION_KEYS else "attributes"
            extra[kind][name] = value
            notes.append(f"moved top-level {raw_key!r} into {kind}")
            continue
        if target is None:
            notes.append(f"dropped unknown key {raw_key!r}")
            continue
        if target != raw_key:
            notes.append(f"read {raw_key!r} as {target!r}")
        if target.startswith("price."):
            bounds[target.removeprefix("price.")] = value
        elif target in out:
            notes.append(f"dropped a second {target!r} ({raw_key!r})")
        else:
            out[target] = value
    fields: dict[str, Any] = {}
    if "text" in out:
        fields["text"] = _text(out["text"])
    for name in ("category", "brand"):
        if name in out:
            fields[name] = _name(out[name], name, notes)
    attributes = _values_table(out.get("attributes"), "attributes", notes)
    options = _values_table(out.get("options"), "options", notes)
    for kind, table in (("attributes", attributes), ("options", options)):
        for key, raw in extra[kind].items():
            values = _strings(raw)
            if values:
                table.setdefault(key, []).extend(values)
    for key in [k for k in attributes if k in _OPTION_KEYS]:
        options.setdefault(key, []).extend(attributes.pop(key))
        notes.append(f"moved {key!r} from attributes to options")
    for key in [k for k in options if k in _ATTRIBUTE_KEYS and k != "type"]:
        attributes.setdefault(key, []).extend(options.pop(key))
        notes.append(f"moved {key!r} from options to attributes")
    fields["attributes"], fields["options"] = attributes, options
    price = _price(out.get("price"), bounds, request, notes)
    if price is not None:
        fields["price"] = price
    if "sort" in out:
        fields["sort"] = _sort(out["sort"], notes)
    if "min_rating" in out:
        fields["min_rating"] = _rating(out["min_rating"], notes)
    if "available_only" in out:
        fields["available_only"] = _flag(out["available_only"], notes)
    if "exclude" in out:
        fields["exclude"] = _exclusions(out["exclude"], notes)
    return fields


def _scalar_text(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else str(value)
    return None


def _strings(value: object) -> list[str]:
    """A scalar or a (nested) list of scalars as a list of strings."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        if isinstance(item, list | tuple):
            out.extend(s for s in (_scalar_text(i) for i in item) if s is not None)
        else:
            text = _scalar_text(item)
            if text is not None:
                out.append(text)
    return [s for s in out if s.strip() and s.strip().lower() not in _NULL_WORDS]


def _text(value: object) -> str:
    return " ".join(_strings(value))[:MAX_REQUEST_CHARS]


def _name(value: object, name: str, notes: list[str]) -> str | None:
    values = _strings(value)
    if len(values) > 1:
        notes.append(f"kept the first of several {name} values")
    return values[0] if values else None


def _values_table(value: object, name: str, notes: list[str]) -> dict[str, list[str]]:
    if value is None:
        return {}
    if isinstance(value, list) and all(isinstance(i, dict) for i in value):
        merged: dict[str, Any] = {}
        for item in value:  # [{"name": "color", "value": "red"}] or [{"color": "red"}]
            keys = {_norm_key(k): v for k, v in item.items()}
            if "name" in keys and "value" in keys:
                merged.setdefault(str(keys["name"]), []).extend(_strings(keys["value"]))
            else:
                for k, v in item.items():
                    merged.setdefault(str(k), []).extend(_strings(v))
        value = merged
    if not isinstance(value, dict):
        notes.append(f"dropped {name} that were not an object: {_short(value)}")
        return {}
    table: dict[str, list[str]] = {}
    for raw_key, raw in value.items():
        key = _norm_key(raw_key).replace("_", " ")
        key = _KEY_SYNONYMS.get(key, key)
        values = _strings(raw)
        if not isinstance(raw, list):
            if values:
                notes.append(f"{name}.{key}: a single value made a list")
            elif raw is not None:
                notes.append(f"{name}.{key}: dropped {_short(raw)}")
        if values:
            table.setdefault(key, []).extend(values)
    return table


def _amount(value: object) -> tuple[Decimal | None, str | None]:
    """A price from a number, ``"$50"``, ``"50 dollars"``, ``"1,200"``, ``"2k"``: (value, code)."""
    if isinstance(value, dict):
        keys = {_norm_key(k): v for k, v in value.items()}
        amount, code = _amount(keys.get("amount", keys.get("value")))
        return amount, _currency_code(keys.get("currency")) or code
    if isinstance(value, bool) or value is None:
        return None, None
    code = None
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float) and math.isfinite(value):
        number = Decimal(str(value))
    elif isinstance(value, str) and (m := _AMOUNT_RE.search(value[:200])):
        code = _currency_code(value)
        number = Decimal(m.group(1).replace(",", "")) * (1000 if m.group(2) else 1)
    else:
        return None, _currency_code(value)
    return (number if 0 <= number <= _MAX_PRICE else None), code


def _currency_code(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text in _CURRENCIES:
        return _CURRENCIES[text]
    if re.fullmatch(r"[a-z]{3}", text):
        return text.upper()
    m = _CURRENCY_RE.search(text)
    return _CURRENCIES.get(m.group(0)) if m else None


def _price(
    value: object, bounds: dict[str, Any], request: str, notes: list[str]
) -> dict[str, Any] | None:
    low: Decimal | None = None
    high: Decimal | None = None
    codes: list[str | None] = []
    given = dict(bounds)
    if isinstance(value, dict):
        for raw_key, raw in value.items():
            key = _norm_key(raw_key)
            if key in _MIN_KEYS:
                given.setdefault("min", raw)
            elif key in _MAX_KEYS:
                given.setdefault("max", raw)
            elif key in ("currency", "currency_code", "unit"):
                given.setdefault("currency", raw)
            elif key in ("amount", "value"):
                given.setdefault("bare", raw)
            else:
                notes.append(f"dropped unknown price key {raw_key!r}")
    elif isinstance(value, list | tuple) and len(value) == 2:
        given.setdefault("min", value[0])
        given.setdefault("max", value[1])
        notes.append("read a two-item price list as [min, max]")
    elif isinstance(value, str) and (span := _RANGE_RE.search(value)):
        given.setdefault("min", span["a"])
        given.setdefault("max", span["b"])
        codes.append(_currency_code(value))
        notes.append(f"read price {value!r} as a range")
    elif value is not None:
        given.setdefault("bare", value)
    if "min" in given:
        low, code = _amount(given["min"])
        codes.append(code)
    if "max" in given:
        high, code = _amount(given["max"])
        codes.append(code)
    if "bare" in given and low is None and high is None:
        amount, code = _amount(given["bare"])
        codes.append(code)
        stated = parse(request).price if request else None
        if amount is not None and stated is not None and stated.min == amount != stated.max:
            low = amount
            notes.append("read a single price as the minimum the request states")
        elif amount is not None:
            high = amount
            notes.append("read a single price as a maximum")
    currency = _currency_code(given.get("currency")) if "currency" in given else None
    if "currency" in given and currency is None and given.get("currency") is not None:
        notes.append(f"dropped unknown currency {_short(given.get('currency'))}")
    currency = currency or next((c for c in codes if c), None) or "USD"
    if low is None and high is None:
        if value is not None or bounds:
            notes.append(f"dropped a price without a usable number: {_short(value or bounds)}")
        return None
    if low is not None and high is not None and low > high:
        low, high = high, low
        notes.append(f"price min {high} was above max {low}: swapped")
    if any(isinstance(given.get(k), str) for k in ("min", "max")):
        notes.append("read price bounds written as text")
    return {"min": low, "max": high, "currency": currency}


def _sort(value: object, notes: list[str]) -> str:
    if not isinstance(value, str):
        notes.append(f"sort {_short(value)} is not a word: used relevance")
        return "relevance"
    key = re.sub(r"[^a-z]+", "_", value.lower()).strip("_")
    sort = _SORTS.get(key)
    if sort is None:
        if "price" in key or "cost" in key:
            low = any(w in key for w in ("low", "asc", "cheap", "inc"))
            high = any(w in key for w in ("high", "desc", "expensive", "dec"))
            sort = "price_desc" if high and not low else "price_asc" if low else None
        elif "rat" in key or "review" in key or "star" in key:
            sort = "rating"
    if sort is None:
        notes.append(f"unknown sort {value!r}: used relevance")
        return "relevance"
    if sort != value:
        notes.append(f"read sort {value!r} as {sort!r}")
    return sort


def _rating(value: object, notes: list[str]) -> float | None:
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = float(value) if -10 < value < 10 else None
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        m = re.search(r"\d+(?:\.\d+)?", value)
        number = float(m.group(0)) if m else None
        if number is not None:
            notes.append(f"read min_rating {value!r} as {number:g}")
    if number is None or not math.isfinite(number) or not 0 <= number <= 5:
        notes.append(f"dropped min_rating {_short(value)}: not a rating from 0 to 5")
        return None
    return number


def _flag(value: object, notes: list[str]) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "y", "1", "in stock", "in_stock", "available", "only"):
        notes.append(f"read available_only {value!r} as true")
        return True
    if text not in ("false", "no", "n", "0", "", "none", "null"):
        notes.append(f"available_only {_short(value)} is not a yes or no: used false")
    return False


def _exclusions(value: object, notes: list[str]) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    out: list[dict[str, Any]] = []

    def add(field_name: object, raw: object, *, shaped: bool) -> None:
        for text in _strings(raw):
            stripped = _NEGATION_PREFIX_RE.sub("", text.strip())
            if stripped != text.strip():
                notes.append(f"exclusion {text!r} read as {stripped!r}")
            field_text = _scalar_text(field_name)
            if field_text is not None and field_text.strip().lower() in _NULL_WORDS:
                field_text = None
            if not shaped:
                notes.append(f"exclusion {text!r} given as {type(raw).__name__}")
            out.append({"field": field_text, "value": stripped})

    for item in items:
        if isinstance(item, dict):
            keys = {_norm_key(k): v for k, v in item.items()}
            raw = next(
                (keys[k] for k in ("value", "values", "name", "term", "word") if k in keys), None
            )
            if raw is not None:
                label = next(
                    (keys[k] for k in ("field", "key", "attribute", "type") if k in keys), None
                )
                add(label, raw, shaped=isinstance(raw, str))
            else:
                for key, values in item.items():  # {"color": ["red", "pink"]}
                    add(_KEY_SYNONYMS.get(_norm_key(key), _norm_key(key)), values, shaped=False)
        elif isinstance(item, str) and re.fullmatch(r"\s*[a-z ]{2,20}:\s*\S.*", item, re.I):
            label, text = item.split(":", 1)  # "color: red"
            add(label.strip().lower(), text, shaped=False)
        else:
            add(None, item, shaped=False)
    return [e for e in out if e["value"]]


def _validated(fields: dict[str, Any], notes: list[str]) -> SearchQuery:
    """``SearchQuery(**fields)``, dropping the fields it rejects one at a time."""
    for _ in range(len(fields) + 1):
        try:
            return SearchQuery.model_validate(fields)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0]) if error["loc"] else ""
            if name not in fields:
                break
            notes.append(f"dropped invalid {name}: {error['msg']}"[:_MAX_PROBLEM_CHARS])
            del fields[name]
    raise UnrepairableOutput("the model's JSON object does not fit a SearchQuery")
