"""The catalog's two models: a ``Product`` and the ``Variant`` s a shopper can actually buy.

A product is what a search result shows (title, brand, category path, descriptive attributes,
rating); a variant is one purchasable configuration of it (its ``options`` such as size and
colour, its price and whether it is in stock). Both are frozen pydantic models, so catalogs can
be shared between an index, a tool and a test without anyone editing them in place.

Inputs are normalised where that loses nothing: surrounding whitespace is stripped, a category
may be given as ``"A > B > C"``, an attribute as a single string, option values as numbers;
currency codes are upper-cased. Everything else is validated: prices are finite and not
negative, ratings lie in 0-5, variant ids are unique in a product and its variants share one
currency.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["CATEGORY_SEPARATOR", "PICTURE_TYPES", "Product", "Variant", "is_web_address"]

CATEGORY_SEPARATOR = ">"
"""Separates the levels of a category path written as text: ``"Clothing > Women > Jeans"``."""

_CURRENCY = re.compile(r"[A-Z]{3}")
PICTURE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}
"""The picture files a catalog may name, by suffix (no SVG: it can carry scripts)."""
MAX_IMAGE_CHARS = 2048
_WEB_ADDRESS = re.compile(r"https?://[^\s/?#]+[^\s]*", re.IGNORECASE)
_UNSAFE_PATH = re.compile(r"(^|/)\.\.(/|$)|^/|\\|:|[\x00-\x1f]")


def is_web_address(image: str) -> bool:
    """Whether a product's ``image`` is an http(s) address rather than a file of the catalog."""
    return _WEB_ADDRESS.fullmatch(image) is not None


def _image_problem(image: str) -> str | None:
    if is_web_address(image):
        return None
    if image.lower().startswith(("http:", "https:")) or _UNSAFE_PATH.search(image):
        return (
            "image must be an http(s) address or a path inside the catalog's folder "
            f"(no '..', no leading '/'), got {image[:80]!r}"
        )
    suffix = "." + image.rsplit(".", 1)[-1].lower() if "." in image else ""
    if suffix not in PICTURE_TYPES:
        return f"image must be a {', '.join(sorted(PICTURE_TYPES))} file, got {image[:80]!r}"
    return None


class Variant(BaseModel):
    """One purchasable configuration of a product (a SKU)."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1, description="The variant's (item's) id, unique in its product.")
    options: dict[str, str] = Field(
        default_factory=dict,
        description='What distinguishes this variant, e.g. {"size": "30", "color": "blue"}.',
    )
    price: Decimal = Field(ge=0, description="Unit price in `currency`, e.g. 49.99.")
    currency: str = Field(default="USD", description="ISO 4217 code, e.g. USD.")
    available: bool = Field(default=True, description="Whether it can be bought now.")
    stock: int | None = Field(
        default=None, ge=0, description="Units on hand, where the store counts them."
    )

    @field_validator("options", mode="before")
    @classmethod
    def _options_as_text(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(item, bool):
                item = "yes" if item else "no"
            elif isinstance(item, int | float | Decimal):
                item = str(item)
            out[key.strip() if isinstance(key, str) else key] = (
                item.strip() if isinstance(item, str) else item
            )
        return out

    @field_validator("price")
    @classmethod
    def _finite_price(cls, value: Decimal) -> Decimal:
        if not value.is_finite():
            raise ValueError("price must be a finite number")
        return value

    @field_validator("currency", mode="before")
    @classmethod
    def _upper_currency(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("currency")
    @classmethod
    def _iso_currency(cls, value: str) -> str:
        if not _CURRENCY.fullmatch(value):
            raise ValueError(f"{value!r} is not a three-letter currency code")
        return value


class Product(BaseModel):
    """A catalog entry: what it is, who makes it, where it sits, and its variants."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1, description="The product's id, unique in its catalog.")
    title: str = Field(min_length=1, description="The product's name as a shop shows it.")
    description: str = Field(default="", description="Free text about the product.")
    brand: str | None = Field(default=None, description="The brand or maker, if known.")
    category: tuple[str, ...] = Field(
        default=(),
        description='Category path from the most general, e.g. ("Clothing", "Women", "Jeans").',
    )
    attributes: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description='Descriptive facts, e.g. {"material": ("denim",), "fit": ("baggy",)}.',
    )
    variants: tuple[Variant, ...] = Field(default=(), description="The purchasable variants.")
    rating: float | None = Field(default=None, ge=0, le=5, description="Average rating, 0-5.")
    rating_count: int = Field(default=0, ge=0, description="How many ratings `rating` averages.")
    image: str | None = Field(
        default=None,
        max_length=MAX_IMAGE_CHARS,
        description="A picture of it: an http(s) address, or a png/jpg/webp/gif file's path "
        "relative to the catalog file's folder.",
    )

    @field_validator("brand", mode="before")
    @classmethod
    def _blank_brand_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("image", mode="before")
    @classmethod
    def _blank_image_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        problem = None if value is None else _image_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("category", mode="before")
    @classmethod
    def _category_path(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part for part in value.split(CATEGORY_SEPARATOR) if part.strip())
        return value

    @field_validator("category")
    @classmethod
    def _no_empty_levels(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        path = tuple(part.strip() for part in value)
        if any(not part for part in path):
            raise ValueError("category levels must not be empty")
        return path

    @field_validator("attributes", mode="before")
    @classmethod
    def _attribute_values(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out: dict[Any, Any] = {}
        for key, items in value.items():
            if isinstance(items, str):
                items = (items,)
            if isinstance(items, list | tuple):
                items = tuple(
                    item.strip() if isinstance(item, str) else item
                    for item in items
                    if not (isinstance(item, str) and not item.strip())
                )
            out[key.strip() if isinstance(key, str) else key] = items
        return out

    @field_validator("rating")
    @classmethod
    def _finite_rating(cls, value: float | None) -> float | None:
        if value is not None and math.isnan(value):
            raise ValueError("rating must be a number")
        return value

    @model_validator(mode="after")
    def _consistent_variants(self) -> Product:
        seen: set[str] = set()
        for variant in self.variants:
            if variant.id in seen:
                raise ValueError(f"variant id {variant.id!r} appears more than once")
            seen.add(variant.id)
        currencies = {variant.currency for variant in self.variants}
        if len(currencies) > 1:
            raise ValueError(f"variants mix currencies: {', '.join(sorted(currencies))}")
        return self

    @property
    def price_min(self) -> Decimal | None:
        """The lowest variant price (available or not); ``None`` without variants."""
        return min((v.price for v in self.variants), default=None)

    @property
    def price_max(self) -> Decimal | None:
        """The highest variant price (available or not); ``None`` without variants."""
        return max((v.price for v in self.variants), default=None)

    @property
    def currency(self) -> str | None:
        """The variants' (single) currency; ``None`` without variants."""
        return self.variants[0].currency if self.variants else None

    @property
    def available(self) -> bool:
        """Whether any variant can be bought now."""
        return any(v.available for v in self.variants)

    def option_values(self) -> dict[str, set[str]]:
        """Every option name with the values its variants offer, e.g. {"size": {"S", "M"}}."""
        values: dict[str, set[str]] = {}
        for variant in self.variants:
            for name, value in variant.options.items():
                values.setdefault(name, set()).add(value)
        return values

    def variant(self, variant_id: str) -> Variant | None:
        """The variant with id ``variant_id``, or ``None``."""
        return next((v for v in self.variants if v.id == variant_id), None)
