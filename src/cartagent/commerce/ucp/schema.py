"""UCP v2026-04-08's JSON Schemas (shipped in the wheel under ``specs/ucp``) and validation.

The release publishes response shapes only; request shapes are derived from them through the
``ucp_request`` annotations, which the release's documentation never defines. This module reads
them the way the release's generated models do: per property either one directive or one per
operation (``{"create": "omit", "update": "optional"}``), where ``omit`` drops the property,
``optional`` takes it out of ``required``, ``required`` puts it in, and a missing directive (or
operation) keeps the response's rule. Every schema is rewritten, so directives on referenced
types (``line_item`` -> ``item``) apply too.

One defect of the release is worked around here: ``discovery/profile_schema.json`` has the
``$id`` ``https://ucp.dev/schemas/discovery/profile.json`` but refers to ``../schemas/ucp.json``,
which resolves to ``https://ucp.dev/schemas/schemas/ucp.json``; its references are read as
``../ucp.json`` (the shipped file is unchanged).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Literal

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from ...errors import CheckoutError
from ..requests import first_problem, json_path

__all__ = [
    "BASE",
    "UCP_VERSION",
    "RequestShape",
    "first_problem",
    "json_path",
    "request_problem",
    "spec_file",
    "validator",
]

UCP_VERSION = "2026-04-08"
BASE = "https://ucp.dev/schemas/"
"""The ``$id`` prefix of the release's schemas: ``BASE + "shopping/checkout.json"``."""

RequestShape = Literal["create", "update", "complete"]

_SPECS = "specs/ucp"
_PROFILE = "discovery/profile_schema.json"
_PROFILE_REFS = ("../schemas/ucp.json", "../ucp.json")


def _folder() -> Traversable:
    return resources.files("cartagent.commerce").joinpath(_SPECS)


def spec_file(path: str) -> dict[str, Any]:
    """A JSON file of the shipped release, by its path there (``schemas/ucp.json``, ...)."""
    loaded: dict[str, Any] = json.loads(_folder().joinpath(path).read_text("utf-8"))
    return loaded


def _json_files(folder: Traversable) -> Iterator[Traversable]:
    for entry in folder.iterdir():
        if entry.is_dir():
            yield from _json_files(entry)
        elif entry.name.endswith(".json"):
            yield entry


def _fixed_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (
                value.replace(*_PROFILE_REFS)
                if key == "$ref" and isinstance(value, str)
                else _fixed_refs(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_fixed_refs(item) for item in node]
    return node


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """Every shipped schema by its ``$id``."""
    documents: dict[str, dict[str, Any]] = {}
    for entry in _json_files(_folder().joinpath("schemas")):
        document = json.loads(entry.read_text("utf-8"))
        documents[document["$id"]] = document
    profile = _fixed_refs(spec_file(_PROFILE))
    documents[profile["$id"]] = profile
    return documents


def _directive(schema: Any, shape: RequestShape) -> str | None:
    if not isinstance(schema, dict):
        return None
    rule = schema.get("ucp_request")
    if isinstance(rule, dict):
        rule = rule.get(shape)
    return rule if isinstance(rule, str) else None


def _request(node: Any, shape: RequestShape) -> Any:
    """``node`` with its ``ucp_request`` directives applied for ``shape``."""
    if isinstance(node, list):
        return [_request(item, shape) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: _request(value, shape)
        for key, value in node.items()
        if key not in ("ucp_request", "properties")
    }
    properties = node.get("properties")
    if isinstance(properties, dict):
        required = [name for name in node.get("required", []) if isinstance(name, str)]
        kept: dict[str, Any] = {}
        for name, schema in properties.items():
            rule = _directive(schema, shape)
            if rule in ("omit", "optional"):
                required = [other for other in required if other != name]
            elif rule == "required" and name not in required:
                required.append(name)
            if rule != "omit":
                kept[name] = _request(schema, shape)
        out["properties"] = kept
        if "required" in node or required:
            out["required"] = required
    return out


@cache
def _registry(shape: RequestShape | None) -> Registry[Any]:
    documents = _documents()
    if shape is not None:
        documents = {uri: _request(copy.deepcopy(doc), shape) for uri, doc in documents.items()}
    resources_ = [(uri, DRAFT202012.create_resource(doc)) for uri, doc in documents.items()]
    return Registry().with_resources(resources_).crawl()


@cache
def validator(ref: str, shape: RequestShape | None = None) -> Draft202012Validator:
    """A validator for ``ref`` (an absolute schema URI, e.g. ``BASE + "ucp.json#/$defs/base"``);
    with ``shape``, for the request shape of that operation derived from the response schema."""
    return Draft202012Validator(
        {"$ref": ref}, registry=_registry(shape), format_checker=FormatChecker()
    )


def request_problem(ref: str, shape: RequestShape | None, body: Any) -> CheckoutError | None:
    """Why ``body`` is not a valid request for ``ref`` (in ``shape``), or ``None``."""
    return first_problem(validator(ref, shape), body)
