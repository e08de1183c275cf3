"""Money: exact Decimal amounts with PayPal's precision and half-up rounding."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cartagent.money import Money, paypal_amount, percent_of, unit_tax

cents = st.integers(min_value=0, max_value=10**9).map(lambda c: Decimal(c).scaleb(-2))


def test_amounts_are_held_at_the_currencys_precision_rounding_half_up() -> None:
    assert Money.of("1.005", "USD").amount == Decimal("1.01")
    assert Money.of("1.004", "USD").amount == Decimal("1.00")
    assert Money.of("100.5", "JPY").amount == Decimal("101")
    assert Money.of("2", "usd").to_paypal() == {"currency_code": "USD", "value": "2.00"}


def test_unsupported_currencies_and_non_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="currency"):
        Money.of("1", "XXX")
    with pytest.raises(ValueError, match="amount"):
        Money.of("ten", "USD")
    with pytest.raises(ValueError, match="finite"):
        Money(Decimal("NaN"), "USD")


def test_currencies_never_mix() -> None:
    with pytest.raises(ValueError, match="USD with EUR"):
        _ = Money.of("1", "USD") + Money.of("1", "EUR")


def test_per_unit_tax_times_quantity_is_what_paypal_checks() -> None:
    # 3 x 9.99 at 8.25 %: per-unit tax 0.824175 -> 0.82, so tax_total 2.46. Taxing the line
    # total (29.97 * 8.25 % = 2.4725 -> 2.47) is the amount PayPal rejects as a mismatch.
    tax = unit_tax(Money.of("9.99", "USD"), "8.25")
    assert tax.amount == Decimal("0.82")
    assert (tax * 3).amount == Decimal("2.46")
    assert percent_of(Money.of("29.97", "USD"), "8.25").amount == Decimal("2.47")


def test_the_house_painting_invoice_arithmetic() -> None:
    price = Money.of("450", "USD")
    discounted = price - percent_of(price, "5")
    assert discounted.amount == Decimal("427.50")
    assert (discounted + percent_of(discounted, "8")).amount == Decimal("461.70")


@given(cents, cents)
def test_addition_is_exact(a: Decimal, b: Decimal) -> None:
    assert (Money(a, "USD") + Money(b, "USD")).amount == a + b


@given(cents, st.integers(min_value=0, max_value=1000))
def test_percentages_round_half_up_to_cents(amount: Decimal, basis_points: int) -> None:
    percent = Decimal(basis_points) / 100
    exact = amount * percent / 100
    got = percent_of(Money(amount, "USD"), percent).amount
    assert abs(got - exact) <= Decimal("0.005")
    assert got.as_tuple().exponent == -2


def test_a_paypal_amount_is_rounded_to_the_currencys_places_half_up() -> None:
    assert paypal_amount(Decimal("1.005"), "USD") == {"currency_code": "USD", "value": "1.01"}
    assert paypal_amount(Decimal("3"), "USD") == {"currency_code": "USD", "value": "3.00"}
    assert paypal_amount(Decimal("12.5"), "JPY") == {"currency_code": "JPY", "value": "13"}


def test_amounts_that_are_not_decimals_are_read_from_their_text() -> None:
    assert Money(12, "USD").amount == Decimal("12.00")  # type: ignore[arg-type]
    # 1.005 as a float is 1.00499999..., as text it is 1.005, which rounds half-up to 1.01.
    assert Money(1.005, "USD").amount == Decimal("1.01")  # type: ignore[arg-type]


def test_minor_units_read_back_in_the_currencys_places() -> None:
    assert Money.from_minor(1234, "usd") == Money.of("12.34", "USD")
    assert Money.from_minor(1234, "JPY") == Money.of("1234", "JPY")
    assert Money.of("12.34", "USD").minor_units == 1234
    with pytest.raises(ValueError, match=r"^currency 'XXX' is not one PayPal supports$"):
        Money.from_minor(1, "xxx")
