"""UCP's JSON Schemas, per release (v2026-04-08 shipped in the wheel under ``specs/ucp``,
v2026-01-11 under ``specs/ucp-2026-01-11``), and validation.

The release publishes response shapes only; request shapes are derived from them through the
``ucp_request`` annotations, which the release's documentation never defines. This module reads
them the way the release's generated models do: per property either one directive or one per
operation (``{"create": "omit", "update": "optional"}``), where ``omit`` drops the property,
``optional`` takes it out of ``required``, ``required`` puts it in, and a missing directive (or
operation) keeps the response's rule. Every schema is rewritten, so directives on referenced
types (``line_item`` -> ``item``) apply too.

Both releases annotate their schemas this way and share ``$id``s, so each has a registry of its
own. One defect of both releases is worked around here: ``discovery/profile_schema.json`` has the
``$id`` ``https://ucp.dev/schemas/discovery/profile.json`` but refers to ``../schemas/ucp.json``,
which resolves to ``https://ucp.dev/schemas/schemas/ucp.json``; its references to
``../schemas/...`` are read as ``../...`` (the shipped file is unchanged). v2026-01-11's
``ucp.json`` also refers to ``../services/service_schema.json``, a file whose ``$id`` says
``schemas/service.json``: it is registered where the reference looks.
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
from ..validation import first_problem, json_path

__all__ = [
    "BASE",
    "UCP_VERSION",
    "VERSIONS",
    "RequestShape",
    "first_problem",
    "json_path",
    "request_problem",
    "spec_file",
    "validator",
]

UCP_VERSION = "2026-04-08"
"""The release this business is built on; older ones are read and written at the edge."""
VERSIONS = ("2026-04-08", "2026-01-11")
"""The releases served, newest first."""
BASE = "https://ucp.dev/schemas/"
"""The ``$id`` prefix of the release's schemas: ``BASE + "shopping/checkout.json"``."""

RequestShape = Literal["create", "update", "complete"]

_SPECS = {"2026-04-08": "specs/ucp", "2026-01-11": "specs/ucp-2026-01-11"}
_PROFILE = "discovery/profile_schema.json"
_PROFILE_REFS = ("../schemas/", "../")
_SERVICE = "services/service_schema.json"  # v2026-01-11's, where its ``ucp.json`` looks for it
_SERVICE_URI = "https://ucp.dev/services/service_schema.json"


def _folder(version: str) -> Traversable:
    return resources.files("cartagent.protocols").joinpath(_SPECS[version])


def spec_file(path: str, version: str = UCP_VERSION) -> dict[str, Any]:
    """A JSON file of a shipped release, by its path there (``schemas/ucp.json``, ...)."""
    loaded: dict[str, Any] = json.loads(_folder(version).joinpath(path).read_text("utf-8"))
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
                value.replace(*_PROFILE_REFS, 1)
                if key == "$ref" and isinstance(value, str) and value.startswith(_PROFILE_REFS[0])
                else _fixed_refs(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_fixed_refs(item) for item in node]
    return node


@cache
def _documents(version: str) -> dict[str, dict[str, Any]]:
    """Every schema of a release by its ``$id``."""
    documents: dict[str, dict[str, Any]] = {}
    for entry in _json_files(_folder(version).joinpath("schemas")):
        document = json.loads(entry.read_text("utf-8"))
        documents[document["$id"]] = document
    service = _folder(version).joinpath(_SERVICE)
    if service.is_file():
        documents[_SERVICE_URI] = json.loads(service.read_text("utf-8"))
    profile = _fixed_refs(spec_file(_PROFILE, version))
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
def _registry(shape: RequestShape | None, version: str) -> Registry[Any]:
    documents = _documents(version)
    if shape is not None:
        documents = {uri: _request(copy.deepcopy(doc), shape) for uri, doc in documents.items()}
    resources_ = [(uri, DRAFT202012.create_resource(doc)) for uri, doc in documents.items()]
    return Registry().with_resources(resources_).crawl()


@cache
def validator(
    ref: str, shape: RequestShape | None = None, version: str = UCP_VERSION
) -> Draft202012Validator:
    """A validator for ``ref`` (an absolute schema URI, e.g. ``BASE + "ucp.json#/$defs/base"``)
    in release ``version``; with ``shape``, for the request shape of that operation derived
    from the response schema."""
    return Draft202012Validator(
        {"$ref": ref}, registry=_registry(shape, version), format_checker=FormatChecker()
    )


def request_problem(
    ref: str, shape: RequestShape | None, body: Any, version: str = UCP_VERSION
) -> CheckoutError | None:
    """Why ``body`` is not a valid request for ``ref`` (in ``shape``, release ``version``), or
    ``None``."""
    return first_problem(validator(ref, shape, version), body)
