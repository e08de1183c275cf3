"""Exact money with PayPal's rules: ``Decimal``, the currency's minor units, half-up rounding.

Tax on order items is computed and rounded per unit, then multiplied by quantity, because
that is how PayPal checks ``tax_total`` (the sum of per-unit tax times quantity); taxing the
line total and rounding once gives totals PayPal rejects with ``TAX_TOTAL_MISMATCH``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

__all__ = ["CURRENCY_DECIMALS", "Money", "paypal_amount", "percent_of", "unit_tax"]

# ISO 4217 codes PayPal supports and their decimal places.
CURRENCY_DECIMALS: dict[str, int] = {
    "AUD": 2, "BRL": 2, "CAD": 2, "CNY": 2, "CZK": 2, "DKK": 2, "EUR": 2, "HKD": 2, "HUF": 0,
    "ILS": 2, "JPY": 0, "MYR": 2, "MXN": 2, "TWD": 0, "NZD": 2, "NOK": 2, "PHP": 2, "PLN": 2,
    "GBP": 2, "RUB": 2, "SGD": 2, "SEK": 2, "CHF": 2, "THB": 2, "USD": 2,
}  # fmt: skip


def _quantum(currency: str) -> Decimal:
    return Decimal(1).scaleb(-CURRENCY_DECIMALS[currency])


@dataclass(frozen=True, order=True)
class Money:
    """An amount in one currency, always held at the currency's precision."""

    amount: Decimal
    currency: str

    def __post_init__(self) -> None:
        currency = self.currency.upper()
        if currency not in CURRENCY_DECIMALS:
            raise ValueError(f"currency {self.currency!r} is not one PayPal supports")
        amount = self.amount if isinstance(self.amount, Decimal) else Decimal(str(self.amount))
        if not amount.is_finite():
            raise ValueError(f"amount {self.amount!r} is not a finite number")
        object.__setattr__(self, "currency", currency)
        object.__setattr__(
            self, "amount", amount.quantize(_quantum(currency), rounding=ROUND_HALF_UP)
        )

    @classmethod
    def of(cls, value: str | int | Decimal, currency: str) -> Money:
        """Parse ``value`` exactly; more decimals than the currency has are rounded half-up."""
        try:
            return cls(Decimal(str(value)), currency)
        except InvalidOperation:
            raise ValueError(f"{value!r} is not an amount") from None

    @classmethod
    def from_paypal(cls, obj: dict[str, Any]) -> Money:
        return cls.of(obj["value"], obj["currency_code"])

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls(Decimal(0), currency)

    @classmethod
    def from_minor(cls, units: int, currency: str) -> Money:
        """``units`` of the currency's smallest unit: ``from_minor(1234, "USD")`` is 12.34 USD."""
        currency = currency.upper()
        if currency not in CURRENCY_DECIMALS:
            raise ValueError(f"currency {currency!r} is not one PayPal supports")
        return cls(Decimal(units).scaleb(-CURRENCY_DECIMALS[currency]), currency)

    @property
    def minor_units(self) -> int:
        """The amount in the currency's smallest unit, as the checkout protocols send it."""
        return int(self.amount.scaleb(CURRENCY_DECIMALS[self.currency]))

    def to_paypal(self) -> dict[str, str]:
        return {"currency_code": self.currency, "value": str(self.amount)}

    def _same(self, other: Money) -> None:
        if other.currency != self.currency:
            raise ValueError(f"cannot combine {self.currency} with {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return Money(self.amount - other.amount, self.currency)

    def __mul__(self, factor: int | Decimal) -> Money:
        return Money(self.amount * Decimal(factor), self.currency)

    __rmul__ = __mul__

    def __str__(self) -> str:
        return f"{self.amount} {self.currency}"


def percent_of(money: Money, percent: Decimal | str) -> Money:
    """``percent``% of ``money``, rounded half-up to the currency's minor unit."""
    return Money(money.amount * Decimal(str(percent)) / 100, money.currency)


def unit_tax(unit_price: Money, percent: Decimal | str) -> Money:
    """The tax on ONE unit, rounded: PayPal's ``items[].tax`` (multiplied by quantity later)."""
    return percent_of(unit_price, percent)


def paypal_amount(value: Decimal, currency: str) -> dict[str, str]:
    """``value`` in ``currency`` as PayPal's money object, rounded the way PayPal rounds."""
    return Money(value, currency).to_paypal()
