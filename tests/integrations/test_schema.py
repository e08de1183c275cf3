"""Which schemas OpenAI's strict mode takes as they are."""

from __future__ import annotations

from typing import Any

import pytest

from cartagent.integrations import strict_compatible

CLOSED = {
    "type": "object",
    "properties": {"id": {"type": "string"}},
    "required": ["id"],
    "additionalProperties": False,
}


def closed(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def test_a_closed_object_with_every_property_required_is_strict_compatible() -> None:
    assert strict_compatible(CLOSED)


@pytest.mark.parametrize(
    "schema",
    [
        {**CLOSED, "required": []},
        {k: v for k, v in CLOSED.items() if k != "additionalProperties"},
        {**CLOSED, "additionalProperties": True},
        closed(item={"type": "object", "properties": {"x": {"type": "integer"}}}),
        closed(items={"type": "array", "items": {**CLOSED, "required": []}}),
        {**closed(item={"$ref": "#/$defs/Item"}), "$defs": {"Item": {**CLOSED, "required": []}}},
        closed(kind={"type": "string", "default": "a"}),
        closed(kind={"oneOf": [{"type": "string"}, {"type": "integer"}]}),
    ],
    ids=[
        "optional property",
        "open object",
        "additional properties allowed",
        "nested open object",
        "open object in an array",
        "open object in $defs",
        "a default",
        "oneOf",
    ],
)
def test_schemas_strict_mode_would_reject_or_rewrite_are_not(schema: dict[str, Any]) -> None:
    assert not strict_compatible(schema)


def test_nested_closed_objects_and_anyof_are_strict_compatible() -> None:
    schema = {
        **closed(
            item={"$ref": "#/$defs/Item"},
            price={"anyOf": [{"type": "number"}, {"type": "string"}]},
            tags={"type": "array", "items": CLOSED},
        ),
        "$defs": {"Item": CLOSED},
    }

    assert strict_compatible(schema)
