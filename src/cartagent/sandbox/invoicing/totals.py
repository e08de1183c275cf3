"""PayPal's invoice arithmetic: items, discounts, tax, shipping and custom amount to a total.

Pure functions over ``Decimal``; nothing here reads a request or the database. The rules:

- an item's amount is ``quantity * unit_amount``, rounded half-up to the currency;
- its discount comes first: the ``amount`` when given, else ``percent`` of the item's amount;
- the invoice discount (``amount``, else ``percent``) applies to the discounted item total;
- each item's tax is charged on its net amount less its pro-rata share of the invoice discount
  and rounded per item (on the undiscounted amount when ``tax_calculated_after_discount`` is
  false; extracted from the price instead of added when ``tax_inclusive``);
- shipping carries its own tax, which counts in the tax total;
- total = item total - discounts + tax + shipping + custom amount (tax not added when inclusive).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..amounts import round_money

HUNDRED = Decimal(100)
ZERO = Decimal(0)


class TotalsError(ValueError):
    """Amounts that cannot make an invoice (a discount larger than what it discounts)."""

    def __init__(self, field: str, issue: str, description: str) -> None:
        super().__init__(description)
        self.field = field
        self.issue = issue
        self.description = description


@dataclass(frozen=True)
class Discount:
    percent: Decimal | None = None
    amount: Decimal | None = None


@dataclass(frozen=True)
class Line:
    quantity: Decimal
    unit_amount: Decimal
    tax_percent: Decimal | None = None
    discount: Discount | None = None


@dataclass(frozen=True)
class LineTotal:
    amount: Decimal
    discount: Decimal
    tax: Decimal

    @property
    def net(self) -> Decimal:
        return self.amount - self.discount


@dataclass(frozen=True)
class Totals:
    lines: tuple[LineTotal, ...]
    item_total: Decimal
    item_discount: Decimal
    invoice_discount: Decimal
    tax_total: Decimal
    shipping: Decimal
    shipping_tax: Decimal
    custom: Decimal
    total: Decimal


def discount_of(base: Decimal, discount: Discount | None, currency: str) -> Decimal:
    """The discount taken off ``base``: a fixed amount wins over a percentage."""
    if discount is None:
        return ZERO
    if discount.amount is not None:
        return round_money(discount.amount, currency)
    if discount.percent is not None:
        return round_money(base * discount.percent / HUNDRED, currency)
    return ZERO


def tax_of(taxable: Decimal, percent: Decimal | None, currency: str, inclusive: bool) -> Decimal:
    """Tax on ``taxable`` at ``percent``, or the tax contained in it when prices include tax."""
    if not percent:
        return ZERO
    rate = percent / (HUNDRED + percent) if inclusive else percent / HUNDRED
    return round_money(taxable * rate, currency)


def compute(
    lines: list[Line],
    currency: str,
    *,
    invoice_discount: Discount | None = None,
    shipping: Decimal = ZERO,
    shipping_tax_percent: Decimal | None = None,
    custom: Decimal = ZERO,
    tax_after_discount: bool = True,
    tax_inclusive: bool = False,
) -> Totals:
    """Every amount PayPal shows for an invoice with these lines and charges."""
    amounts = [round_money(line.quantity * line.unit_amount, currency) for line in lines]
    discounts: list[Decimal] = []
    for index, (line, amount) in enumerate(zip(lines, amounts, strict=True)):
        taken = discount_of(amount, line.discount, currency)
        if taken > amount:
            raise TotalsError(
                f"/items/{index}/discount",
                "INVALID_DISCOUNT",
                "Item discount cannot exceed the item amount.",
            )
        discounts.append(taken)
    nets = [amount - taken for amount, taken in zip(amounts, discounts, strict=True)]
    discounted = sum(nets, ZERO)
    whole = discount_of(discounted, invoice_discount, currency)
    if whole > discounted:
        raise TotalsError(
            "/amount/breakdown/discount/invoice_discount",
            "INVALID_DISCOUNT",
            "Invoice discount cannot exceed the discounted item total.",
        )
    taxes: list[Decimal] = []
    for line, amount, net in zip(lines, amounts, nets, strict=True):
        if not tax_after_discount:
            taxable = amount
        elif discounted:
            # The item's share of the invoice discount is kept exact; only its tax is rounded.
            taxable = net - whole * net / discounted
        else:
            taxable = net
        taxes.append(tax_of(taxable, line.tax_percent, currency, tax_inclusive))
    shipping_tax = tax_of(shipping, shipping_tax_percent, currency, tax_inclusive)
    tax_total = sum(taxes, ZERO) + shipping_tax
    total = discounted - whole + shipping + custom + (ZERO if tax_inclusive else tax_total)
    if total < 0:
        raise TotalsError(
            "/amount/breakdown/custom/amount",
            "INVALID_TOTAL_AMOUNT",
            "The invoice total cannot be negative.",
        )
    return Totals(
        lines=tuple(
            LineTotal(amount, taken, tax)
            for amount, taken, tax in zip(amounts, discounts, taxes, strict=True)
        ),
        item_total=sum(amounts, ZERO),
        item_discount=sum(discounts, ZERO),
        invoice_discount=whole,
        tax_total=tax_total,
        shipping=shipping,
        shipping_tax=shipping_tax,
        custom=custom,
        total=total,
    )
