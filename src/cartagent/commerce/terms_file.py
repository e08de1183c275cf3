"""A store's terms from a file: ``cartagent merchant --terms FILE``.

Two shapes are read:

* a TOML file (documented in the README, "Store terms")::

      currency = "USD"
      tax_percent = "8"            # where tax_regions has no rate; "0" for none
      return_days = 30
      [tax_regions]                # country, or country-region (ISO 3166)
      "US-CA" = "7.25"
      CA = "5"
      [[shipping]]                 # per service level: a country's rate beats the default
      id = "standard"
      title = "Standard shipping"
      price = "5.99"
      days = [3, 5]                # level = "standard" and no country (everywhere) by default
      [[shipping]]
      id = "express-us"
      title = "Express (US)"
      price = "15.00"
      level = "express"
      country = "US"
      [[free_shipping]]            # level "standard" by default
      min_items = "50.00"          # from this items subtotal; or items = ["item-id", ...]
      [[discounts]]                # a code: percent off the items, or amount off
      code = "WELCOME10"
      title = "10% off your first order"
      percent = "10"               # or amount = "5.00"
      [[discounts]]                # a promotion: applied without a code
      code = "SPRING"              # its id (never shown to buyers)
      title = "Spring sale"
      percent = "5"
      automatic = true
      min_items = "100.00"         # from this items subtotal (optional)

  A shipping rate may also carry a price band, ``min_items`` (inclusive) and ``max_items``
  (exclusive): it is offered only for an items subtotal in it.

* a UCP sample shop folder (the conformance suite's ``test_data/flower_shop``):
  ``shipping_rates.csv`` (``id,country_code,service_level,price,title``, ``default`` for
  everywhere, prices in minor units) and ``promotions.csv`` (``free_shipping`` rows with a
  ``min_subtotal`` in minor units or ``eligible_item_ids`` as a JSON list) and
  ``discounts.csv`` (``code,type,value,description``: ``percentage`` with a percent, or
  ``fixed_amount`` in minor units); it charges no tax.

Every problem is a :class:`~cartagent.errors.ConfigurationError` naming the file and the entry.
"""

from __future__ import annotations

import csv
import json
import tomllib
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from ..errors import ConfigurationError
from .terms import Discount, FreeShipping, ShippingRate, StoreTerms

__all__ = ["csv_rows", "load_terms", "ucp_shop_terms"]

MINOR_UNITS = Decimal(100)
Amount = Annotated[Decimal, Field(ge=0, max_digits=12, decimal_places=2)]
Percent = Annotated[Decimal, Field(ge=0, le=100, max_digits=7, decimal_places=4)]
Text = Annotated[str, Field(min_length=1, max_length=200)]
Region = Annotated[str, Field(pattern=r"^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class _Rate(_Strict):
    id: Text
    title: Text
    price: Amount
    level: Text = "standard"
    country: Annotated[str, Field(pattern=r"^[A-Za-z]{2}$")] | None = None
    days: tuple[Annotated[int, Field(ge=0, le=365)], Annotated[int, Field(ge=0, le=365)]] = (3, 5)
    min_items: Amount | None = None
    max_items: Amount | None = None


class _Free(_Strict):
    level: Text = "standard"
    min_items: Amount | None = None
    items: list[Text] = Field(default_factory=list)
    title: str = ""


class _Discount(_Strict):
    code: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    title: Text
    percent: Annotated[Decimal, Field(gt=0, le=100, max_digits=7, decimal_places=4)] | None = None
    amount: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)] | None = None
    automatic: bool = False
    min_items: Amount | None = None


class _Terms(_Strict):
    currency: Annotated[str, Field(pattern=r"^[A-Za-z]{3}$")] = "USD"
    tax_percent: Percent = Decimal(8)
    return_days: Annotated[int, Field(ge=0, le=3650)] = 30
    tax_regions: dict[Region, Percent] = Field(default_factory=dict)
    shipping: list[_Rate] = Field(default_factory=list, max_length=100)
    free_shipping: list[_Free] = Field(default_factory=list, max_length=100)
    discounts: list[_Discount] = Field(default_factory=list, max_length=1000)


def _decimals(value: Any) -> Any:
    """TOML numbers as exact decimals (``5.99`` must not become 5.9900000000000002...)."""
    if isinstance(value, float):
        return str(value)
    if isinstance(value, dict):
        return {key: _decimals(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decimals(item) for item in value]
    return value


def _where(error: ErrorDetails) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(top level)"


def load_terms(path: Path) -> StoreTerms:
    """The terms in ``path``: a TOML file, or a UCP sample shop folder."""
    if path.is_dir():
        return ucp_shop_terms(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: {error}") from error
    try:
        terms = _Terms.model_validate(_decimals(data))
    except ValidationError as error:
        first = error.errors()[0]
        raise ConfigurationError(f"{path}: {_where(first)}: {first['msg']}") from None
    ids = [rate.id for rate in terms.shipping]
    if len(set(ids)) != len(ids):
        raise ConfigurationError(f"{path}: shipping: two rates share an id")
    try:
        discounts = _unique(
            [
                Discount(d.code, d.title, d.percent, d.amount, d.automatic, d.min_items)
                for d in terms.discounts
            ]
        )
    except ValueError as error:
        raise ConfigurationError(f"{path}: discounts: {error}") from None
    return StoreTerms(
        currency=terms.currency.upper(),
        tax_percent=terms.tax_percent,
        return_days=terms.return_days,
        tax_regions={key.upper(): value for key, value in terms.tax_regions.items()},
        rates=tuple(
            ShippingRate(
                rate.id,
                rate.title,
                rate.price,
                rate.level,
                rate.country.upper() if rate.country else None,
                rate.days,
                rate.min_items,
                rate.max_items,
            )
            for rate in terms.shipping
        ),
        promotions=tuple(
            FreeShipping(free.level, free.min_items, frozenset(free.items), free.title)
            for free in terms.free_shipping
        ),
        discounts=discounts,
        free_shipping_from=None,
    )


def _unique(discounts: list[Discount]) -> tuple[Discount, ...]:
    codes = [discount.code.upper() for discount in discounts]
    if len(set(codes)) != len(codes):
        raise ValueError("two discounts share a code (codes are case-insensitive)")
    return tuple(discounts)


def csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows, values stripped; none for a missing file."""
    if not path.is_file():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return [
                {key: (value or "").strip() for key, value in row.items() if key}
                for row in csv.DictReader(handle)
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error


def _cents(text: str, where: str) -> Decimal:
    try:
        cents = Decimal(text)
    except InvalidOperation:
        raise ConfigurationError(f"{where}: {text!r} is not an amount in minor units") from None
    if not cents.is_finite() or cents < 0 or cents != cents.to_integral_value():
        raise ConfigurationError(f"{where}: {text!r} is not an amount in minor units")
    return cents / MINOR_UNITS


def ucp_shop_terms(folder: Path) -> StoreTerms:
    """The terms of a UCP sample shop folder: its shipping rates and free-shipping promotions,
    no tax (the suite's totals carry none)."""
    rates = []
    path = folder / "shipping_rates.csv"
    for line, row in enumerate(csv_rows(path), start=2):
        where = f"{path}:{line}"
        country = row.get("country_code", "")
        if country.lower() != "default" and (len(country) != 2 or not country.isalpha()):
            raise ConfigurationError(f"{where}: country_code {country!r}")
        if not row.get("id") or not row.get("title"):
            raise ConfigurationError(f"{where}: a rate needs an id and a title")
        rates.append(
            ShippingRate(
                row["id"],
                row["title"],
                _cents(row.get("price", ""), where),
                row.get("service_level") or "standard",
                None if country.lower() == "default" else country.upper(),
            )
        )
    promotions = []
    path = folder / "promotions.csv"
    for line, row in enumerate(csv_rows(path), start=2):
        where = f"{path}:{line}"
        if row.get("type") != "free_shipping":
            raise ConfigurationError(f"{where}: only free_shipping promotions are read")
        items: frozenset[str] = frozenset()
        if row.get("eligible_item_ids"):
            try:
                listed = json.loads(row["eligible_item_ids"])
            except json.JSONDecodeError:
                listed = None
            if not isinstance(listed, list) or not all(isinstance(i, str) for i in listed):
                raise ConfigurationError(f"{where}: eligible_item_ids must be a JSON list of ids")
            items = frozenset(listed)
        minimum = _cents(row["min_subtotal"], where) if row.get("min_subtotal") else None
        if minimum is None and not items:
            raise ConfigurationError(f"{where}: give min_subtotal or eligible_item_ids")
        promotions.append(FreeShipping("standard", minimum, items, row.get("description", "")))
    discounts = []
    path = folder / "discounts.csv"
    for line, row in enumerate(csv_rows(path), start=2):
        where = f"{path}:{line}"
        kind, value = row.get("type"), row.get("value", "")
        code = row.get("code", "")
        try:
            if kind == "percentage":
                discounts.append(Discount(code, row.get("description") or code, Decimal(value)))
            elif kind == "fixed_amount":
                amount = _cents(value, where)
                discounts.append(Discount(code, row.get("description") or code, amount=amount))
            else:
                raise ConfigurationError(f"{where}: type {kind!r} (percentage, fixed_amount)")
        except (InvalidOperation, ValueError) as error:
            raise ConfigurationError(f"{where}: {error or value!r}") from None
        if not code:
            raise ConfigurationError(f"{where}: a discount needs a code")
    try:
        unique = _unique(discounts)
    except ValueError as error:
        raise ConfigurationError(f"{path}: {error}") from None
    return StoreTerms(
        tax_percent=Decimal(0),
        rates=tuple(rates),
        promotions=tuple(promotions),
        discounts=unique,
        free_shipping_from=None,
    )
