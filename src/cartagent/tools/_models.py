"""Argument types shared by several tool families."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from ..money import CURRENCY_DECIMALS

Currency = Annotated[
    str,
    Field(
        description="ISO 4217 currency code PayPal supports, e.g. USD, EUR, JPY.",
        min_length=3,
        max_length=3,
        examples=["USD"],
    ),
]
Amount = Annotated[
    Decimal,
    Field(
        description="Amount as a decimal number, e.g. 450 or 19.99 (no currency symbol).",
        ge=0,
        le=Decimal("9999999.99"),
    ),
]
Percent = Annotated[Decimal, Field(description="Percentage, e.g. 8 for 8 %.", ge=0, le=100)]

ID_PATTERN = r"^[A-Za-z0-9_-]+$"
_ID = re.compile(ID_PATTERN)


def _check_id(value: str) -> str:
    if not _ID.fullmatch(value):
        raise ValueError("a PayPal id has only letters, digits, '-' and '_'")
    return value


# An id goes into request paths: anything else could address another endpoint.
PayPalId = Annotated[str, AfterValidator(_check_id)]


def id_field(description: str, *, max_length: int = 64, min_length: int = 1, **extra: Any) -> Any:
    """``Field`` of a :data:`PayPalId`: its length bounds, and the pattern for the schema."""
    return Field(
        description=description,
        min_length=min_length,
        max_length=max_length,
        json_schema_extra={"pattern": ID_PATTERN},
        **extra,
    )


class Args(BaseModel):
    """Base for tool arguments: unknown fields are an error the model is told about."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def check_currency(value: str) -> str:
    code = value.upper()
    if code not in CURRENCY_DECIMALS:
        raise ValueError(f"{value!r} is not a currency PayPal supports")
    return code


class WithCurrency(Args):
    currency: Currency = "USD"

    @field_validator("currency")
    @classmethod
    def _known_currency(cls, value: str) -> str:
        return check_currency(value)
