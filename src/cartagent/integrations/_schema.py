"""Whether a tool's JSON Schema can be used in OpenAI's strict mode unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Keywords strict mode rejects outright; composition beyond anyOf is among them.
_UNSUPPORTED = frozenset(
    {"default", "oneOf", "not", "if", "then", "else", "patternProperties", "dependentRequired"}
)
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "prefixItems")


def strict_compatible(schema: dict[str, Any]) -> bool:
    """True when strict mode accepts ``schema`` as is.

    Strict mode needs every object closed (``additionalProperties: false``) with all its
    properties required. Rewriting a schema to get there (as some SDKs do) would make optional
    arguments mandatory, so a schema that does not already qualify is sent non-strict instead.
    """
    return all(_node_ok(node) for node in _nodes(schema))


def _node_ok(node: dict[str, Any]) -> bool:
    if _UNSUPPORTED & node.keys():
        return False
    is_object = node.get("type") == "object" or "properties" in node
    if not is_object:
        return True
    properties = node.get("properties", {})
    return node.get("additionalProperties") is False and set(node.get("required", ())) == set(
        properties
    )


def _nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for key in _SUBSCHEMA_MAPS:
        for child in (schema.get(key) or {}).values():
            if isinstance(child, dict):
                yield from _nodes(child)
    for key in _SUBSCHEMA_LISTS:
        for child in schema.get(key) or ():
            if isinstance(child, dict):
                yield from _nodes(child)
    for key in ("items", "additionalProperties"):
        child = schema.get(key)
        if isinstance(child, dict):
            yield from _nodes(child)
