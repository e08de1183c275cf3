"""PayPal's OpenAPI documents as the sandbox's request validator.

Request bodies and query parameters are checked against the schema PayPal publishes for the
operation, and violations become PayPal's own issue codes: wrong types, values outside an enum
or a pattern, missing required fields. The sandbox accepts what PayPal accepts: fields an
operation does not define are ignored (PayPal's schemas never forbid them, and its own agent
toolkit sends ``invoice_id`` in the body of calls whose schema has no such field), and an
optional field sent as ``null`` counts as absent (:func:`without_nulls`; the toolkit sends
``image_url: null`` when creating a product).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft4Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from .clock import parse_iso
from .errors import ISSUE_DESCRIPTIONS, PayPalError, detail

SPEC_FILES = (
    "billing_subscriptions_v1",
    "catalogs_products_v1",
    "checkout_orders_v2",
    "customer_disputes_v1",
    "invoicing_v2",
    "invoicing_v2_automation",
    "merchant_insights_v1",
    "notifications_webhooks_v1",
    "payments_payment_v2",
    "reporting_transactions_v1",
    "shipping_shipment_tracking_v1",
)

_METHODS = ("get", "post", "put", "patch", "delete")
_MAX_DETAILS = 10


@dataclass(frozen=True)
class Operation:
    """One operation of a PayPal spec, with what the sandbox needs to validate its requests."""

    operation_id: str
    method: str
    path: str
    spec_name: str
    body_schema: dict[str, Any] | None
    query: dict[str, dict[str, Any]] = field(default_factory=dict)
    required_query: frozenset[str] = frozenset()
    examples: tuple[Any, ...] = ()


@cache
def load(spec_name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath(f"specs/{spec_name}.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


@cache
def _registry() -> Registry[Any]:
    pairs = [
        (f"urn:paypal:{name}", Resource.from_contents(load(name), default_specification=DRAFT4))
        for name in SPEC_FILES
    ]
    return Registry().with_resources(pairs)


def _resolve(spec_name: str, node: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in node and seen < 32:
        ref = node["$ref"]
        target: Any = load(spec_name)
        for part in ref.lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
        seen += 1
    return node


@cache
def operations() -> dict[str, Operation]:
    """Every operation of every packaged spec, keyed by ``spec_name:operationId``."""
    found: dict[str, Operation] = {}
    for name in SPEC_FILES:
        document = load(name)
        for path, item in document["paths"].items():
            shared_params = item.get("parameters", [])
            for method in _METHODS:
                if method not in item:
                    continue
                op = item[method]
                body_schema = None
                examples: list[Any] = []
                if "requestBody" in op:
                    request_body = _resolve(name, op["requestBody"])
                    content = request_body.get("content", {})
                    first: dict[str, Any] = next(iter(content.values()), {})
                    media: dict[str, Any] = content.get("application/json") or first
                    if "schema" in media:
                        body_schema = media["schema"]
                    if "example" in media:
                        examples.append(media["example"])
                    for example in media.get("examples", {}).values():
                        value = _resolve(name, example).get("value")
                        if value is not None:
                            examples.append(value)
                query: dict[str, dict[str, Any]] = {}
                required: set[str] = set()
                for raw in [*shared_params, *op.get("parameters", [])]:
                    param = _resolve(name, raw)
                    if param.get("in") == "query":
                        query[param["name"]] = _resolve(name, param.get("schema", {}))
                        if param.get("required"):
                            required.add(param["name"])
                operation = Operation(
                    operation_id=op["operationId"],
                    method=method.upper(),
                    path=path,
                    spec_name=name,
                    body_schema=body_schema,
                    query=query,
                    required_query=frozenset(required),
                    examples=tuple(examples),
                )
                found[f"{name}:{op['operationId']}"] = operation
    return found


def operation(key: str) -> Operation:
    try:
        return operations()[key]
    except KeyError:
        raise KeyError(f"no operation {key!r} in the packaged PayPal specs") from None


@cache
def _validator(key: str) -> Draft4Validator | None:
    op = operation(key)
    if op.body_schema is None:
        return None
    schema = _inline(op.spec_name, op.body_schema, ())
    return Draft4Validator(schema, registry=_registry(), format_checker=_FORMATS)


def _inline(spec_name: str, node: Any, trail: tuple[str, ...]) -> Any:
    """``node`` with its local ``$ref``s replaced by what they point at.

    Resolving references costs more than checking the data on every request, so it is done
    once here. A reference back into its own trail (a recursive schema) stays a reference,
    rebased so the validator's registry can still follow it.
    """
    if isinstance(node, list):
        return [_inline(spec_name, item, trail) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in trail:
            return {"$ref": f"urn:paypal:{spec_name}{ref}"}
        return _inline(spec_name, _resolve(spec_name, {"$ref": ref}), (*trail, ref))
    return {key: _inline(spec_name, value, trail) for key, value in node.items()}


_FORMATS = FormatChecker([])


def _is_datetime(value: object) -> bool:
    return not isinstance(value, str) or bool(parse_iso(value))


def _is_date(value: object) -> bool:
    return not isinstance(value, str) or bool(date.fromisoformat(value))


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parts = urlsplit(value)
    return bool(parts.scheme) and bool(parts.netloc or parts.path)


_FORMATS.checks("date-time", raises=ValueError)(_is_datetime)
_FORMATS.checks("date", raises=ValueError)(_is_date)
_FORMATS.checks("uri", raises=ValueError)(_is_uri)


def _pointer(parts: Any) -> str:
    return "/" + "/".join(str(p) for p in parts) if parts else ""


def _issue_for(error: ValidationError) -> tuple[str, str, str | None]:
    """Return (issue, field pointer, offending value) for one jsonschema error."""
    where = _pointer(error.absolute_path)
    value = error.instance if isinstance(error.instance, str | int | float) else None
    text = None if value is None else str(value)
    kind = error.validator
    if kind == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        return "MISSING_REQUIRED_PARAMETER", f"{where}/{missing[0] if missing else ''}", None
    if kind == "maxLength":
        return "INVALID_STRING_MAX_LENGTH", where, text
    if kind == "minLength":
        return "INVALID_STRING_MIN_LENGTH", where, text
    if kind == "maxItems":
        return "INVALID_ARRAY_MAX_ITEMS", where, None
    if kind == "minItems":
        return "INVALID_ARRAY_MIN_ITEMS", where, None
    if kind in ("type", "pattern", "format"):
        return "INVALID_PARAMETER_SYNTAX", where, text
    if kind == "minimum":
        return "INVALID_INTEGER_MIN_VALUE", where, text
    if kind == "maximum":
        return "INVALID_INTEGER_MAX_VALUE", where, text
    return "INVALID_PARAMETER_VALUE", where, text


def _collect_issues(
    spec_name: str,
    node: Any,
    status: int,
    found: dict[str, tuple[int, list[str]]],
    depth: int,
) -> None:
    if depth > 14:
        return
    if isinstance(node, list):
        for value in node:
            _collect_issues(spec_name, value, status, found, depth + 1)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        _collect_issues(spec_name, _resolve(spec_name, node), status, found, depth + 1)
    properties = node.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get("issue"), dict):
        descriptions = [
            d for d in (properties.get("description") or {}).get("enum") or [] if isinstance(d, str)
        ]
        for code in properties["issue"].get("enum", []):
            if isinstance(code, str):
                found.setdefault(code, (status, []))[1].extend(descriptions)
    for key, value in node.items():
        if key != "$ref":
            _collect_issues(spec_name, value, status, found, depth + 1)


@cache
def documented_issues(key: str) -> dict[str, tuple[int, list[str]]]:
    """Issue codes the operation's error responses list: code -> (HTTP status, descriptions).

    PayPal's specs enumerate, per operation, which ``details[].issue`` values (with their exact
    descriptions) each error status may carry.
    """
    op = operation(key)
    responses = load(op.spec_name)["paths"][op.path][op.method.lower()].get("responses", {})
    found: dict[str, tuple[int, list[str]]] = {}
    for status, response in responses.items():
        if status.isdigit() and int(status) >= 400:
            _collect_issues(op.spec_name, response, int(status), found, 0)
    return found


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - {"a", "an", "the", "of", "is", "or", "to"}


def _closest(descriptions: list[str], meaning: str) -> tuple[str | None, float]:
    """The documented description closest in wording to ``meaning``, with its overlap score."""
    wanted = _words(meaning)
    best: tuple[str | None, float] = (None, 0.0)
    for text in descriptions:
        words = _words(text)
        score = len(words & wanted) / max(len(words | wanted), 1)
        if score > best[1]:
            best = (text, score)
    return best


# When PayPal does not document the precise issue for an operation, the closest one it does
# document is used, so clients see only codes the operation's contract names.
_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "INVALID_STRING_MAX_LENGTH": ("INVALID_STRING_LENGTH", "INVALID_PARAMETER_SYNTAX"),
    "INVALID_STRING_MIN_LENGTH": ("INVALID_STRING_LENGTH", "INVALID_PARAMETER_SYNTAX"),
    "INVALID_ARRAY_MAX_ITEMS": ("INVALID_PARAMETER_VALUE",),
    "INVALID_ARRAY_MIN_ITEMS": ("INVALID_PARAMETER_VALUE", "MISSING_REQUIRED_PARAMETER"),
    "INVALID_INTEGER_MAX_VALUE": ("INVALID_PARAMETER_VALUE",),
    "INVALID_INTEGER_MIN_VALUE": ("INVALID_PARAMETER_VALUE",),
    "INVALID_PARAMETER_SYNTAX": ("INVALID_PARAMETER_VALUE",),
    "INVALID_PARAMETER_VALUE": ("INVALID_PARAMETER_SYNTAX",),
    "UNKNOWN_FIELD": ("NOT_SUPPORTED", "INVALID_PARAMETER_VALUE", "INVALID_PARAMETER_SYNTAX"),
    "MALFORMED_REQUEST_JSON": ("INVALID_PARAMETER_SYNTAX", "INVALID_REQUEST"),
    "MISSING_REQUIRED_PARAMETER": ("INVALID_PARAMETER_VALUE",),
}


def issue_for(key: str | None, issue: str) -> tuple[str, str | None]:
    """The issue code (and PayPal's description for it) to report for ``issue`` on ``key``.

    A documented code (the precise one first, then close alternatives) is used only when one of
    its documented descriptions says roughly the same thing; otherwise the precise code stands,
    with its plain description, even if the operation does not list it.
    """
    if key is None:
        return issue, None
    documented = documented_issues(key)
    meaning = ISSUE_DESCRIPTIONS.get(issue, issue.replace("_", " "))
    for rank, candidate in enumerate((issue, *_ALTERNATIVES.get(issue, ()))):
        status, descriptions = documented.get(candidate, (0, []))
        if status != 400:
            continue
        text, score = _closest(descriptions, meaning)
        if score >= (0.15 if rank == 0 else 0.3):
            return candidate, text
    return issue, None


def conform(key: str, error: PayPalError) -> PayPalError:
    """Give each detail of ``error`` PayPal's own wording when the operation documents its code.

    Business rules raise with a code and a description; where the spec lists that code for the
    operation, its documented description (the closest, when there are several) replaces ours.
    """
    documented = documented_issues(key)
    for item in error.details:
        status, descriptions = documented.get(item.get("issue", ""), (0, []))
        if status == error.status and descriptions and item.get("description") not in descriptions:
            text, _ = _closest(descriptions, str(item.get("description", "")))
            item["description"] = text or descriptions[0]
    return error


def documented_detail(
    key: str | None,
    issue: str,
    *,
    field: str | None = None,
    value: str | None = None,
    location: str = "body",
) -> dict[str, Any]:
    """A 400 detail item using the operation's own documented code and description."""
    code, description = issue_for(key, issue)
    return detail(code, description, field=field, value=value, location=location)


def without_nulls(body: Any) -> Any:
    """``body`` with every object member whose value is ``null`` left out, at any depth (a
    ``null`` in an array stays, and fails validation)."""
    if isinstance(body, dict):
        return {key: without_nulls(value) for key, value in body.items() if value is not None}
    if isinstance(body, list):
        return [without_nulls(item) for item in body]
    return body


def validate_body(key: str, body: Any) -> None:
    """Raise ``PayPalError(400)`` listing every way ``body`` breaks the operation's schema."""
    validator = _validator(key)
    if validator is None:
        return
    errors = sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path)))
    details = []
    for error in errors:
        leaves = error.context if error.validator in ("anyOf", "oneOf") and error.context else None
        chosen = min(leaves, key=lambda e: len(e.absolute_path) * -1) if leaves else error
        issue, where, value = _issue_for(chosen)
        details.append(documented_detail(key, issue, field=where or "/", value=value))
        if len(details) >= _MAX_DETAILS:
            break
    if details:
        raise PayPalError(400, details=details)


def validate_query(key: str, params: dict[str, str]) -> dict[str, Any]:
    """Coerce query parameters to their declared types; raise ``PayPalError(400)`` on violations."""
    op = operation(key)
    details = []
    values: dict[str, Any] = {}
    for name in op.required_query - params.keys():
        details.append(
            documented_detail(key, "MISSING_REQUIRED_PARAMETER", field=name, location="query")
        )
    for name, raw in params.items():
        schema = op.query.get(name)
        if schema is None:
            continue
        kind = schema.get("type", "string")
        try:
            value: Any
            if kind == "integer":
                value = int(raw)
            elif kind == "number":
                value = float(raw)
            elif kind == "boolean":
                if raw.lower() not in ("true", "false"):
                    raise ValueError(raw)
                value = raw.lower() == "true"
            else:
                value = raw
        except ValueError:
            details.append(
                documented_detail(
                    key, "INVALID_PARAMETER_SYNTAX", field=name, value=raw, location="query"
                )
            )
            continue
        problem = _scalar_problem(schema, value)
        if problem:
            details.append(documented_detail(key, problem, field=name, value=raw, location="query"))
            continue
        values[name] = value
    if details:
        raise PayPalError(400, details=details)
    return values


def _scalar_problem(schema: dict[str, Any], value: Any) -> str | None:
    if "enum" in schema and value not in schema["enum"]:
        return "INVALID_PARAMETER_VALUE"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return "INVALID_INTEGER_MIN_VALUE"
        if "maximum" in schema and value > schema["maximum"]:
            return "INVALID_INTEGER_MAX_VALUE"
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return "INVALID_STRING_MAX_LENGTH"
        if "minLength" in schema and len(value) < schema["minLength"]:
            return "INVALID_STRING_MIN_LENGTH"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return "INVALID_PARAMETER_SYNTAX"
    return None
