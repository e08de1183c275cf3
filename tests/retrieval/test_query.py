"""SearchQuery: the jeans example, JSON round trips, and a schema fit for grammar conversion."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

import cartagent.retrieval as retrieval
from cartagent.retrieval import Exclusion, PriceRange, SearchQuery, search_query_json_schema

JEANS = SearchQuery(
    category="jeans",
    attributes={
        "gender": ["women"],
        "fit": ["baggy"],
        "waist": ["high"],
        "material": ["denim"],
    },
    options={"size": ["30"]},
    price=PriceRange(min=Decimal("114")),
)

# Keywords llama.cpp's json-schema-to-grammar converts (plus description, which it ignores).
ALLOWED = {
    "type",
    "properties",
    "required",
    "enum",
    "items",
    "anyOf",
    "minimum",
    "maximum",
    "additionalProperties",
    "description",
}
TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def test_package_exports() -> None:
    assert set(retrieval.__all__) >= {
        "SearchQuery",
        "PriceRange",
        "Exclusion",
        "search_query_json_schema",
        "parse_rules",
    }
    assert callable(retrieval.parse_rules)


def test_jeans_example_is_expressible_and_round_trips() -> None:
    dumped = JEANS.model_dump_json()
    again = SearchQuery.model_validate_json(dumped)
    assert again == JEANS
    assert again.price is not None and again.price.min == Decimal("114")
    assert again.price.max is None and again.price.currency == "USD"
    assert SearchQuery.model_validate(json.loads(dumped)) == JEANS
    # what we emit conforms to the schema we publish for constrained decoding
    jsonschema.validate(json.loads(dumped), search_query_json_schema())


def test_full_query_round_trips_through_python_and_json() -> None:
    query = SearchQuery(
        text="graphic print",
        category="t-shirt",
        brand="Levi's",
        attributes={"material": ["cotton"]},
        options={"color": ["black", "white"], "size": ["XL"]},
        price=PriceRange(min=Decimal("9.99"), max=Decimal("25"), currency="eur"),
        sort="price_asc",
        min_rating=4.5,
        available_only=True,
        exclude=[Exclusion(field="style", value="v-neck"), Exclusion(field=None, value="hood")],
    )
    assert query.price is not None and query.price.currency == "EUR"
    assert SearchQuery.model_validate(query.model_dump()) == query
    assert SearchQuery.model_validate_json(query.model_dump_json()) == query
    data = json.loads(query.model_dump_json())
    assert data["price"] == {"min": 9.99, "max": 25, "currency": "EUR"}
    jsonschema.validate(data, search_query_json_schema())


def test_defaults_are_an_empty_query() -> None:
    empty = SearchQuery()
    assert empty.is_empty()
    assert not JEANS.is_empty()
    assert empty.model_dump() == {
        "text": "",
        "category": None,
        "brand": None,
        "attributes": {},
        "options": {},
        "price": None,
        "sort": "relevance",
        "min_rating": None,
        "available_only": False,
        "exclude": [],
    }


def test_values_are_tidied() -> None:
    query = SearchQuery(
        text="  two   words ",
        category="  ",
        attributes={" Material ": ["denim", " Denim", "", "cotton"], "fit": [" "]},
        exclude=[Exclusion(field=" Colour ", value="red"), Exclusion(field="", value="hood")],
    )
    assert query.text == "two words"
    assert query.category is None
    assert query.attributes == {"material": ["denim", "cotton"]}
    assert [e.field for e in query.exclude] == ["colour", None]


@pytest.mark.parametrize(
    "data",
    [
        {"unknown": 1},
        {"sort": "newest"},
        {"min_rating": 6},
        {"price": {"min": -1}},
        {"price": {"min": 50, "max": 10}},
        {"price": {"max": 10, "extra": True}},
        {"exclude": [{"field": "material"}]},
        {"attributes": {"material": "denim"}},
    ],
)
def test_invalid_queries_are_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchQuery.model_validate(data)


def test_models_are_frozen() -> None:
    with pytest.raises(ValidationError):
        JEANS.category = "dress"


def _walk(node: Any, path: str, refs: list[str], bad: list[str]) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, f"{path}[{i}]", refs, bad)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        where = f"{path}.{key}"
        if key in {"$ref", "$defs", "definitions"}:
            refs.append(where)
        elif key not in ALLOWED:
            bad.append(where)
        if key == "properties":
            assert isinstance(value, dict)
            for name, sub in value.items():
                _walk(sub, f"{where}.{name}", refs, bad)
        elif key == "type":
            assert value in TYPES, where
        elif key == "additionalProperties":
            assert value is False or isinstance(value, dict), where
            if isinstance(value, dict):
                _walk(value, where, refs, bad)
        elif key in {"items", "anyOf"}:
            _walk(value, where, refs, bad)
        elif key == "required":
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), where


def test_schema_is_self_contained_and_grammar_friendly() -> None:
    schema = search_query_json_schema()
    refs: list[str] = []
    bad: list[str] = []
    _walk(schema, "$", refs, bad)
    assert refs == [], f"schema must not use references: {refs}"
    assert bad == [], f"keywords a grammar converter may not support: {bad}"
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(SearchQuery.model_fields)
    assert schema["properties"]["sort"]["enum"] == [
        "relevance",
        "price_asc",
        "price_desc",
        "rating",
    ]
    # every nested object closes itself too
    price = schema["properties"]["price"]["anyOf"][0]
    exclusion = schema["properties"]["exclude"]["items"]
    assert price["additionalProperties"] is False and exclusion["additionalProperties"] is False
    assert exclusion["required"] == ["value"]
    jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_describes_every_field() -> None:
    schema = search_query_json_schema()
    for name, prop in schema["properties"].items():
        assert prop.get("description"), name


def test_schema_is_a_fresh_copy() -> None:
    first = search_query_json_schema()
    first["properties"].clear()
    assert search_query_json_schema()["properties"]


def test_schema_accepts_what_a_constrained_model_would_write() -> None:
    schema = search_query_json_schema()
    llm_output = {
        "text": "",
        "category": "jeans",
        "brand": None,
        "attributes": {"gender": ["women"], "fit": ["baggy"]},
        "options": {"size": ["30"]},
        "price": {"min": 114, "max": None, "currency": "USD"},
        "sort": "relevance",
        "min_rating": None,
        "available_only": False,
        "exclude": [{"field": "material", "value": "leather"}],
    }
    jsonschema.validate(llm_output, schema)
    query = SearchQuery.model_validate(llm_output)
    assert query.price is not None and query.price.min == Decimal(114)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**llm_output, "sort": "newest"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**llm_output, "surprise": 1}, schema)
