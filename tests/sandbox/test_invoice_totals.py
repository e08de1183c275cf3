"""PayPal's invoice arithmetic, as pure functions: examples and properties."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cartagent.sandbox.invoicing.totals import Discount, Line, TotalsError, compute

D = Decimal


def test_the_house_painting_example_totals_461_70() -> None:
    totals = compute(
        [Line(D("1"), D("450.00"), tax_percent=D("8"))],
        "USD",
        invoice_discount=Discount(percent=D("5")),
    )
    assert totals.item_total == D("450.00")
    assert totals.invoice_discount == D("22.50")
    assert totals.tax_total == D("34.20")
    assert totals.total == D("461.70")


def test_paypals_published_yoga_example_totals_74_21() -> None:
    totals = compute(
        [
            Line(D("1"), D("50.00"), D("7.25"), Discount(percent=D("5"))),
            Line(D("1"), D("10.00"), D("7.25"), Discount(amount=D("5.00"))),
        ],
        "USD",
        invoice_discount=Discount(percent=D("5")),
        shipping=D("10.00"),
        shipping_tax_percent=D("7.25"),
        custom=D("10.00"),
    )
    assert [line.tax for line in totals.lines] == [D("3.27"), D("0.34")]
    assert [line.discount for line in totals.lines] == [D("2.50"), D("5.00")]
    assert totals.item_discount == D("7.50")
    assert totals.invoice_discount == D("2.63")
    assert totals.shipping_tax == D("0.73")
    assert totals.tax_total == D("4.34")
    assert totals.total == D("74.21")


def test_item_amount_is_quantity_times_unit_amount_rounded_half_up() -> None:
    totals = compute([Line(D("1.5"), D("0.25"))], "USD")
    assert totals.item_total == D("0.38")  # 0.375 rounds up


def test_an_amount_discount_beats_a_percent_discount_on_the_same_item() -> None:
    totals = compute([Line(D("2"), D("50.00"), discount=Discount(D("50"), D("3.00")))], "USD")
    assert totals.item_discount == D("3.00")
    assert totals.total == D("97.00")


def test_an_amount_invoice_discount_beats_its_percent() -> None:
    totals = compute(
        [Line(D("1"), D("100.00"))], "USD", invoice_discount=Discount(D("50"), D("1.00"))
    )
    assert totals.invoice_discount == D("1.00")
    assert totals.total == D("99.00")


def test_invoice_discount_applies_to_the_item_total_after_item_discounts() -> None:
    totals = compute(
        [Line(D("1"), D("100.00"), discount=Discount(percent=D("10")))],
        "USD",
        invoice_discount=Discount(percent=D("10")),
    )
    assert totals.item_discount == D("10.00")
    assert totals.invoice_discount == D("9.00")
    assert totals.total == D("81.00")


def test_tax_is_rounded_per_item_after_its_pro_rata_share_of_the_invoice_discount() -> None:
    # Each 10.00 item bears 1.00 of the 3.00 invoice discount, so is taxed on 9.00:
    # 0.675 rounds to 0.68 per item, 2.04 in all (taxing the 27.00 once would give 2.03).
    lines = [Line(D("1"), D("10.00"), D("7.5")) for _ in range(3)]
    totals = compute(lines, "USD", invoice_discount=Discount(percent=D("10")))
    assert totals.invoice_discount == D("3.00")
    assert [line.tax for line in totals.lines] == [D("0.68")] * 3
    assert totals.tax_total == D("2.04")
    assert totals.total == D("29.04")


def test_per_item_rounding_can_differ_from_rounding_the_sum() -> None:
    # 0.05 * 10% = 0.005 per item: rounded per item that is 0.01 each, 0.03 in all,
    # where taxing the 0.15 sum once would give 0.02 (0.015 half-up is 0.02).
    lines = [Line(D("1"), D("0.05"), D("10")) for _ in range(3)]
    totals = compute(lines, "USD")
    assert totals.tax_total == D("0.03")


def test_items_with_different_rates_share_the_invoice_discount_by_net_amount() -> None:
    totals = compute(
        [Line(D("1"), D("300.00"), D("10")), Line(D("1"), D("100.00"), D("20"))],
        "USD",
        invoice_discount=Discount(amount=D("40.00")),
    )
    # shares are 30.00 and 10.00: taxes 27.00 and 18.00
    assert [line.tax for line in totals.lines] == [D("27.00"), D("18.00")]
    assert totals.total == D("400.00") - D("40.00") + D("45.00")


def test_shipping_tax_is_added_to_the_tax_total_and_the_total() -> None:
    totals = compute(
        [Line(D("1"), D("20.00"))], "USD", shipping=D("5.00"), shipping_tax_percent=D("10")
    )
    assert totals.shipping_tax == D("0.50")
    assert totals.tax_total == D("0.50")
    assert totals.total == D("25.50")


def test_custom_amount_may_be_negative() -> None:
    totals = compute([Line(D("1"), D("20.00"))], "USD", custom=D("-2.00"))
    assert totals.total == D("18.00")


def test_yen_amounts_have_no_decimals() -> None:
    totals = compute(
        [Line(D("3"), D("333"), D("8"))], "JPY", invoice_discount=Discount(percent=D("5"))
    )
    assert totals.item_total == D("999")
    assert totals.invoice_discount == D("50")  # 49.95 half-up
    assert totals.tax_total == D("76")  # 949 * 8% = 75.92
    assert totals.total == D("1025")
    assert totals.total.as_tuple().exponent == 0


def test_tax_before_discount_is_charged_on_the_undiscounted_amount() -> None:
    totals = compute(
        [Line(D("1"), D("100.00"), D("10"), Discount(percent=D("50")))],
        "USD",
        tax_after_discount=False,
    )
    assert totals.tax_total == D("10.00")
    assert totals.total == D("60.00")


def test_tax_inclusive_prices_contain_their_tax() -> None:
    totals = compute([Line(D("1"), D("108.00"), D("8"))], "USD", tax_inclusive=True)
    assert totals.tax_total == D("8.00")
    assert totals.total == D("108.00")


def test_an_item_discount_larger_than_the_item_is_refused() -> None:
    with pytest.raises(TotalsError) as caught:
        compute([Line(D("1"), D("5.00"), discount=Discount(amount=D("6.00")))], "USD")
    assert caught.value.field == "/items/0/discount"


def test_an_invoice_discount_larger_than_the_items_is_refused() -> None:
    with pytest.raises(TotalsError):
        compute([Line(D("1"), D("5.00"))], "USD", invoice_discount=Discount(amount=D("5.01")))


def test_a_negative_total_is_refused() -> None:
    with pytest.raises(TotalsError):
        compute([Line(D("1"), D("5.00"))], "USD", custom=D("-5.01"))


def test_no_items_make_a_zero_total() -> None:
    totals = compute([], "USD", invoice_discount=Discount(percent=D("10")))
    assert totals.total == D("0")


cents = st.integers(min_value=0, max_value=1_000_000).map(lambda n: D(n) / 100)
percents = st.integers(min_value=0, max_value=10_000).map(lambda n: D(n) / 100)
lines = st.builds(
    Line,
    quantity=st.integers(min_value=0, max_value=1000).map(D),
    unit_amount=cents,
    tax_percent=st.one_of(st.none(), percents),
    discount=st.one_of(st.none(), st.builds(Discount, percent=percents)),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(lines, max_size=8), percents, cents, st.one_of(st.none(), percents))
def test_total_is_items_less_discounts_plus_taxes_shipping_and_custom(
    items: list[Line], discount: Decimal, shipping: Decimal, shipping_tax: Decimal | None
) -> None:
    totals = compute(
        items,
        "USD",
        invoice_discount=Discount(percent=discount),
        shipping=shipping,
        shipping_tax_percent=shipping_tax,
    )
    assert totals.item_total == sum((line.amount for line in totals.lines), D(0))
    assert totals.tax_total == sum((line.tax for line in totals.lines), D(0)) + totals.shipping_tax
    assert totals.total == (
        totals.item_total
        - totals.item_discount
        - totals.invoice_discount
        + totals.tax_total
        + shipping
    )
    for value in (totals.total, totals.tax_total, totals.invoice_discount, totals.item_discount):
        assert value >= 0
        assert value == value.quantize(D("0.01"))


@settings(max_examples=100, deadline=None)
@given(st.lists(lines, min_size=1, max_size=8), percents, percents)
def test_one_rate_on_every_item_taxes_within_half_a_cent_per_item_of_the_whole(
    items: list[Line], rate: Decimal, discount: Decimal
) -> None:
    same_rate = [Line(i.quantity, i.unit_amount, rate, i.discount) for i in items]
    totals = compute(same_rate, "USD", invoice_discount=Discount(percent=discount))
    taxable = totals.item_total - totals.item_discount - totals.invoice_discount
    exact = taxable * rate / 100
    assert abs(totals.tax_total - exact) <= D("0.005") * len(items)


@settings(max_examples=100, deadline=None)
@given(st.lists(lines, min_size=1, max_size=6), percents)
def test_a_bigger_invoice_discount_never_raises_the_total(items: list[Line], rate: Decimal) -> None:
    small = compute(items, "USD", invoice_discount=Discount(percent=rate / 2))
    large = compute(items, "USD", invoice_discount=Discount(percent=rate))
    assert large.total <= small.total + D("0.01") * len(items)


@settings(max_examples=100, deadline=None)
@given(st.lists(lines, max_size=6))
def test_yen_totals_are_whole_numbers(items: list[Line]) -> None:
    whole = [Line(i.quantity, i.unit_amount.to_integral_value(), i.tax_percent) for i in items]
    totals = compute(whole, "JPY")
    assert totals.total == totals.total.to_integral_value()
    assert totals.tax_total == totals.tax_total.to_integral_value()
