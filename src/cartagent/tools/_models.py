"""Argument types shared by several tool families."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
