"""``SearchQuery``: what a shopper asked for, as structured constraints plus free text.

Every understanding path (the rule parser in :mod:`cartagent.retrieval.rules`, an LLM constrained
by :func:`search_query_json_schema`) produces this one model and every retriever consumes it.

Conventions (the retrievers rely on them):

* Keys of ``attributes`` and ``options`` are lower-case names such as ``"material"``, ``"fit"``,
  ``"gender"`` (product-level descriptors) and ``"color"``, ``"size"``, ``"capacity"``
  (variant-level choices). Several values under one key are alternatives (``color: [black, white]``
  means black *or* white); different keys must all hold.
* Values are matched case-insensitively; quantities are written ``"<number> <unit>"``, e.g.
  ``"32 oz"``, ``"2 pack"`` (see :func:`cartagent.retrieval.rules.canonical_quantity`).
* Price bounds are inclusive and compare against variant prices.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_validator,
    model_validator,
)

__all__ = ["Exclusion", "PriceRange", "SearchQuery", "Sort", "search_query_json_schema"]

Sort = Literal["relevance", "price_asc", "price_desc", "rating"]


def _json_number(value: Decimal | None) -> int | float | None:
    """Bounds travel as JSON numbers (as the schema says), integers where they are whole."""
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


_Bound = Annotated[
    Decimal | None,
    Field(ge=0),
    PlainSerializer(_json_number, return_type=int | float | None, when_used="json"),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0}, {"type": "null"}]}),
]


def _clean_values(values: dict[str, list[str]]) -> dict[str, list[str]]:
    """Lower-case, strip keys; strip and de-duplicate values (order kept); drop empty entries."""
    out: dict[str, list[str]] = {}
    for raw_key, raw_values in values.items():
        key = " ".join(raw_key.split()).lower()
        if not key:
            continue
        bucket = out.setdefault(key, [])
        seen = {v.casefold() for v in bucket}
        for raw in raw_values:
            value = " ".join(raw.split())
            if value and value.casefold() not in seen:
                seen.add(value.casefold())
                bucket.append(value)
        if not bucket:
            del out[key]
    return out


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class PriceRange(_Model):
    """An inclusive price interval; either bound may be open."""

    min: _Bound = Field(
        default=None, description="Lowest acceptable price (inclusive); null if open."
    )
    max: _Bound = Field(
        default=None, description="Highest acceptable price (inclusive); null if open."
    )
    currency: str = Field(
        default="USD", description="ISO 4217 code of the bounds, e.g. USD, EUR, GBP.", max_length=3
    )

    @field_validator("currency")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()

    @model_validator(mode="after")
    def _ordered(self) -> PriceRange:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"price min {self.min} is above max {self.max}")
        return self


class Exclusion(_Model):
    """Something the shopper does not want: "not leather", "without a hood", "no red"."""

    field: str | None = Field(
        default=None,
        description=(
            "Attribute or option the value belongs to (e.g. 'material', 'color'), or null "
            "when the value is a feature or word to avoid anywhere (e.g. 'hood')."
        ),
    )
    value: str = Field(..., description="The unwanted value, e.g. 'leather', 'red', 'hood'.")

    @field_validator("field")
    @classmethod
    def _field_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        key = " ".join(value.split()).lower()
        return key or None


class SearchQuery(_Model):
    """A shopper's request as structured constraints plus leftover free text."""

    text: str = Field(
        default="",
        description=(
            "Free-text search terms not captured by the structured fields, e.g. "
            "'graphic print crew'. Empty if everything was captured."
        ),
    )
    category: str | None = Field(
        default=None,
        description="Product type or category, e.g. 'jeans', 'running shoes', 'coffee maker'.",
    )
    brand: str | None = Field(
        default=None, description="Brand the shopper asked for, e.g. 'Levi's'."
    )
    attributes: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Product-level descriptors by name, e.g. {'gender': ['women'], 'material': "
            "['denim'], 'fit': ['baggy'], 'waist': ['high']}. Several values under one name "
            "are alternatives."
        ),
    )
    options: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Variant choices by name, e.g. {'size': ['30'], 'color': ['blue'], "
            "'capacity': ['32 oz'], 'pack': ['2 pack']}. Several values under one name are "
            "alternatives."
        ),
    )
    price: PriceRange | None = Field(
        default=None, description="Price bounds, or null if none given."
    )
    sort: Sort = Field(
        default="relevance",
        description=(
            "Result order: relevance, price_asc (cheapest first), price_desc (most "
            "expensive first) or rating (best rated first)."
        ),
    )
    min_rating: float | None = Field(
        default=None,
        ge=0,
        le=5,
        description="Lowest acceptable average rating (0-5 stars), or null.",
    )
    available_only: bool = Field(default=False, description="Only products that are in stock.")
    exclude: list[Exclusion] = Field(
        default_factory=list, description="Values the shopper does not want."
    )

    @field_validator("attributes", "options")
    @classmethod
    def _clean(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return _clean_values(value)

    @field_validator("category", "brand")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = " ".join(value.split())
        return value or None

    @field_validator("text")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return " ".join(value.split())

    def is_empty(self) -> bool:
        """True when the query constrains nothing and has no text."""
        return self == SearchQuery()


# JSON-Schema keywords llama.cpp's json-schema-to-grammar turns into grammar rules; descriptions
# are kept for the model's benefit (the converter ignores them).
_KEPT = {
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


def _simplify(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_simplify(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:  # pragma: no cover - the models have no recursion
            raise ValueError(f"recursive schema at {name}")
        inlined = _simplify(defs[name], defs, (*seen, name))
        if "description" in node:
            inlined = {**inlined, "description": node["description"]}
        return inlined
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "const":
            out["enum"] = [value]
        elif key == "properties":
            out[key] = {name: _simplify(sub, defs, seen) for name, sub in value.items()}
        elif key in _KEPT:
            out[key] = _simplify(value, defs, seen)
    return out


def search_query_json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`SearchQuery` for constrained decoding.

    Self-contained (no ``$ref``/``$defs``) and limited to ``type``, ``properties``, ``required``,
    ``enum``, ``items``, ``anyOf``, ``minimum``, ``maximum``, ``additionalProperties`` (plus
    ``description``), which llama.cpp's json-schema-to-grammar and similar converters support.
    """
    raw = SearchQuery.model_json_schema()
    defs = raw.pop("$defs", {})
    return copy.deepcopy(_simplify(raw, defs, ()))
