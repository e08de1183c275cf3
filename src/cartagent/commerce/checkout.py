"""A checkout, whichever protocol carries it: lines, buyer, destination, cost and state.

ACP and UCP render the same :class:`Checkout` in their own wire shapes; the rules live here once.
Stored status is ``open`` (being built), ``in_progress`` (being paid: a recovery point, so a
crashed or concurrent completion never pays twice), ``completed`` or ``canceled``. Whether an open
checkout can be paid is derived each time from the catalog and the store's terms
(:func:`bill`), so a price change or a variant going out of stock shows up on the next read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from ..addresses import Address, Contact
from ..errors import CheckoutError
from ..money import Money, percent_of, unit_tax
from .offers import MerchantCatalog, Offer
from .terms import Discount, StoreTerms

__all__ = [
    "MAX_LINES",
    "MAX_QUANTITY",
    "AppliedDiscount",
    "Bill",
    "Changes",
    "Checkout",
    "Line",
    "LineCost",
    "Payment",
    "Problem",
    "ShippingOption",
    "bill",
    "merge_items",
]

MAX_LINES = 100
MAX_QUANTITY = 999
ADDRESS_FIELDS = {
    "name": "the recipient's name",
    "line_one": "the street address",
    "city": "the city",
    "postal_code": "the postal code",
    "country": "the country",
}

Status = Literal["open", "in_progress", "completed", "canceled"]
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Line:
    id: str
    item_id: str
    quantity: int


@dataclass(frozen=True)
class Problem:
    """Why a checkout cannot be paid yet, or something the buyer should know.

    ``code`` is one both protocols know (``not_found``, ``out_of_stock``, ``missing``,
    ``invalid``, ``payment_declined``); ``param`` is a path of keys and indexes into the
    checkout (``("line_items", 0)``) that each protocol renders its own way.
    """

    code: str
    message: str
    param: tuple[str | int, ...] = ()
    severity: Severity = "error"


@dataclass(frozen=True)
class Payment:
    """The PayPal side of a checkout. ``attempt`` rises after each definitive decline so a new
    instrument gets a new PayPal order, while a retry of the same attempt reuses its request ids
    (PayPal then answers the first result instead of charging again)."""

    attempt: int = 0
    paypal_order_id: str | None = None
    capture_id: str | None = None
    declined: str | None = None


@dataclass(frozen=True)
class Checkout:
    id: str
    owner: str
    protocol: str
    currency: str
    lines: tuple[Line, ...]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime
    status: Status = "open"
    buyer: dict[str, str] = field(default_factory=dict)
    contact: Contact | None = None
    address: Address | None = None
    shipping_option: str | None = None
    payment: Payment = Payment()
    order_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    consent: dict[str, bool] = field(default_factory=dict)  # the buyer's, by purpose
    discount_codes: tuple[str, ...] = ()  # as given, in the order given

    def to_json(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict deep-copies everything and was a tenth of a
        # checkout's CPU time in `bench merchant`.
        return {
            "id": self.id,
            "owner": self.owner,
            "protocol": self.protocol,
            "currency": self.currency,
            "lines": [vars(line) for line in self.lines],
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "status": self.status,
            "buyer": self.buyer,
            "contact": None if self.contact is None else vars(self.contact),
            "address": None if self.address is None else vars(self.address),
            "shipping_option": self.shipping_option,
            "payment": vars(self.payment),
            "order_id": self.order_id,
            "metadata": self.metadata,
            "version": self.version,
            "consent": self.consent,
            "discount_codes": list(self.discount_codes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkout:
        contact = data.get("contact")
        address = data.get("address")
        return cls(
            id=data["id"],
            owner=data["owner"],
            protocol=data["protocol"],
            currency=data["currency"],
            lines=tuple(Line(**line) for line in data["lines"]),
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            expires_at=datetime.fromisoformat(data["expires_at"]),
            status=data["status"],
            buyer=dict(data.get("buyer") or {}),
            contact=Contact(**contact) if contact else None,
            address=Address(**address) if address else None,
            shipping_option=data.get("shipping_option"),
            payment=Payment(**(data.get("payment") or {})),
            order_id=data.get("order_id"),
            metadata=dict(data.get("metadata") or {}),
            version=int(data.get("version", 0)),
            consent=dict(data.get("consent") or {}),
            discount_codes=tuple(data.get("discount_codes") or ()),
        )

    @property
    def order_number(self) -> str | None:
        return None if self.order_id is None else self.order_id.removeprefix("ord_").upper()

    def editable(self) -> None:
        """Raise unless the checkout can still change."""
        if self.status != "open":
            raise CheckoutError(
                f"checkout {self.id} is {self.status} and can no longer change",
                code="invalid_state",
                status=409,
            )

    def with_lines(self, items: Sequence[tuple[str, int]], catalog: MerchantCatalog) -> Checkout:
        """The same checkout holding exactly ``items`` ((item id, quantity) pairs, merged)."""
        lines = merge_items(items, catalog, self.currency)
        return replace(self, lines=lines)


def merge_items(
    items: Sequence[tuple[str, int]], catalog: MerchantCatalog, currency: str
) -> tuple[Line, ...]:
    """Lines for ``items``, one per item id in first-seen order (repeats add up).

    Raises :class:`CheckoutError` for an unknown id, a quantity out of range, an item sold in
    another currency, or too many lines.
    """
    if not items:
        raise CheckoutError("a checkout needs at least one item", code="missing", param=("items",))
    if len(items) > MAX_LINES:
        raise CheckoutError(
            f"a checkout holds at most {MAX_LINES} items", code="invalid", param=("items",)
        )
    quantities: dict[str, int] = {}
    for index, (item_id, given) in enumerate(items):
        # JSON Schema's "integer" admits 2.0; PayPal does not take "2.0" as a quantity.
        raw: object = given
        quantity = int(raw) if isinstance(raw, float) and raw.is_integer() else raw
        if not isinstance(quantity, int) or isinstance(quantity, bool):
            raise CheckoutError(
                f"quantity must be a whole number, not {given!r}",
                code="invalid",
                param=("items", index, "quantity"),
            )
        offer = catalog.offer(item_id)
        if offer is None:
            raise CheckoutError(
                f"item {item_id!r} not found: no item with that id is sold here",
                code="not_found",
                param=("items", index, "id"),
            )
        if offer.currency != currency:
            raise CheckoutError(
                f"item {item_id!r} is sold in {offer.currency}, not {currency}",
                code="invalid",
                param=("items", index, "id"),
            )
        total = quantities.get(item_id, 0) + quantity
        if quantity >= 1 and offer.stock is not None and total > offer.stock:
            raise CheckoutError(
                f"Insufficient stock: {offer.stock} of {offer.name} left, not {total}",
                code="out_of_stock",
                param=("items", index, "quantity"),
            )
        if not quantity >= 1 or total > MAX_QUANTITY:
            raise CheckoutError(
                f"quantity must be between 1 and {MAX_QUANTITY}, not {total}",
                code="invalid",
                param=("items", index, "quantity"),
            )
        quantities[item_id] = total
    return tuple(
        Line(id=f"li_{item_id}", item_id=item_id, quantity=quantity)
        for item_id, quantity in quantities.items()
    )


@dataclass(frozen=True)
class LineCost:
    """One line at today's price. Tax is per unit, rounded, times the quantity (PayPal's rule),
    so the total a protocol shows is the total PayPal captures; on a line a discount reached,
    tax is on the discounted amount (``taxed``), rounded once."""

    line: Line
    offer: Offer | None
    unit_price: Money
    unit_tax: Money
    discount: Money | None = None  # this line's share of the discount codes
    taxed: Money | None = None  # the tax on the discounted amount, where discounted

    @property
    def base(self) -> Money:
        return self.unit_price * self.line.quantity

    @property
    def tax(self) -> Money:
        return self.taxed if self.taxed is not None else self.unit_tax * self.line.quantity

    @property
    def total(self) -> Money:
        off = self.discount if self.discount is not None else Money.zero(self.base.currency)
        return self.base - off + self.tax


@dataclass(frozen=True)
class AppliedDiscount:
    """A discount code as applied: what it took off, and from which lines (by index)."""

    code: str
    title: str
    amount: Money
    allocations: tuple[tuple[int, Money], ...]
    automatic: bool = False


@dataclass(frozen=True)
class ShippingOption:
    id: str
    title: str
    cost: Money
    earliest: datetime
    latest: datetime


@dataclass(frozen=True)
class Bill:
    """What a checkout costs now and what, if anything, stops it from being paid."""

    lines: tuple[LineCost, ...]
    items: Money
    tax: Money
    shipping: Money
    total: Money
    options: tuple[ShippingOption, ...]
    problems: tuple[Problem, ...]
    discounts: tuple[AppliedDiscount, ...] = ()

    @property
    def payable(self) -> bool:
        return not any(problem.severity == "error" for problem in self.problems)

    @property
    def discount(self) -> Money:
        """What the discount codes took off the items."""
        return sum((d.amount for d in self.discounts), Money.zero(self.items.currency))


def _allocate(amount: Money, weights: Sequence[Money]) -> list[Money]:
    """``amount`` split over ``weights`` in proportion, in whole minor units (the largest
    remainders get the leftover units), never more than a weight."""
    units = amount.minor_units
    total = sum(w.minor_units for w in weights)
    if total <= 0:
        return [Money.zero(amount.currency) for _ in weights]
    exact = [Decimal(units) * w.minor_units / total for w in weights]
    shares = [int(share) for share in exact]
    order = sorted(range(len(weights)), key=lambda i: exact[i] - shares[i], reverse=True)
    for i in order[: units - sum(shares)]:
        shares[i] += 1
    return [Money.from_minor(share, amount.currency) for share in shares]


def _discounts(
    checkout: Checkout, costs: list[LineCost], terms: StoreTerms, problems: list[Problem]
) -> tuple[AppliedDiscount, ...]:
    """The store's automatic promotions the items earn, then the checkout's codes in order,
    each applied to what the ones before it left; a code the store does not know is a warning
    on the bill."""
    left = [cost.base for cost in costs]
    applied: list[AppliedDiscount] = []
    items = sum(left, Money.zero(checkout.currency))
    wanted: list[Discount | None] = list(terms.promotions_for(items))
    for index, code in enumerate(checkout.discount_codes):
        found = terms.discount(code)
        wanted.append(found)
        if found is None:
            problems.append(
                Problem(
                    "discount_code_invalid",
                    f"{code} is not a discount code of this store",
                    ("discount_codes", index),
                    severity="warning",
                )
            )
    for found in wanted:
        if found is None:
            continue
        running = sum(left, Money.zero(checkout.currency))
        off = found.off(running)
        if off.amount <= 0:
            continue
        shares = _allocate(off, left)
        left = [rest - share for rest, share in zip(left, shares, strict=True)]
        allocations = tuple((i, share) for i, share in enumerate(shares) if share.amount > 0)
        applied.append(AppliedDiscount(found.code, found.title, off, allocations, found.automatic))
    return tuple(applied)


def bill(checkout: Checkout, catalog: MerchantCatalog, terms: StoreTerms, now: datetime) -> Bill:
    """Price ``checkout`` against the catalog and the store's terms as of ``now``."""
    currency = checkout.currency
    problems: list[Problem] = []
    costs: list[LineCost] = []
    address = checkout.address
    # Before a destination is known the store's default rate is an estimate.
    percent = terms.tax_rate(address.country, address.state) if address else terms.tax_percent
    for index, line in enumerate(checkout.lines):
        offer = catalog.offer(line.item_id)
        price = offer.unit_price if offer is not None else Decimal(0)
        if offer is None:
            problems.append(
                Problem("not_found", f"item {line.item_id} is no longer sold", ("lines", index))
            )
        elif not offer.available:
            problems.append(
                Problem("out_of_stock", f"{offer.name} is out of stock", ("lines", index))
            )
        elif offer.stock is not None and line.quantity > offer.stock:
            problems.append(
                Problem(
                    "out_of_stock",
                    f"only {offer.stock} of {offer.name} are left",
                    ("lines", index),
                )
            )
        unit = Money(price, currency)
        costs.append(LineCost(line, offer, unit, unit_tax(unit, percent)))
    applied = _discounts(checkout, costs, terms, problems)
    if applied:
        off = [Money.zero(currency) for _ in costs]
        for code in applied:
            for index, share in code.allocations:
                off[index] = off[index] + share
        costs = [
            replace(cost, discount=cut, taxed=percent_of(cost.base - cut, percent))
            if cut.amount > 0
            else cost
            for cost, cut in zip(costs, off, strict=True)
        ]
    items = sum((cost.base for cost in costs), Money.zero(currency))
    tax = sum((cost.tax for cost in costs), Money.zero(currency))
    discount = sum((d.amount for d in applied), Money.zero(currency))
    options: tuple[ShippingOption, ...] = ()
    shipping = Money.zero(currency)
    if address is None or not address.country:
        needed = "a shipping address is needed" if address is None else "the country is needed"
        problems.append(Problem("missing", needed, ("address",), severity="error"))
    else:
        if address.missing():
            problems.append(
                Problem(
                    "incomplete",
                    "the shipping address lacks "
                    + ", ".join(ADDRESS_FIELDS[name] for name in address.missing()),
                    ("address",),
                    severity="warning",
                )
            )
        item_ids = [cost.line.item_id for cost in costs]
        options = tuple(
            ShippingOption(
                id=offer.rate.id,
                title=offer.rate.title + (" (Free)" if offer.free else ""),
                cost=offer.cost,
                earliest=now + timedelta(days=offer.rate.days[0]),
                latest=now + timedelta(days=offer.rate.days[1]),
            )
            for offer in terms.shipping_offers(address.country, items, item_ids)
        )
        chosen = checkout.shipping_option or (options[0].id if options else "")
        selected = next((option for option in options if option.id == chosen), None)
        if selected is None:
            problems.append(
                Problem("invalid", f"no shipping option {chosen!r}", ("shipping_option",))
            )
        else:
            shipping = selected.cost
    if checkout.payment.declined and checkout.status == "open":
        problems.append(
            Problem(
                "payment_declined",
                f"the last payment was declined ({checkout.payment.declined}); "
                "try another instrument",
                ("payment",),
                severity="warning",
            )
        )
    return Bill(
        lines=tuple(costs),
        items=items,
        tax=tax,
        shipping=shipping,
        total=items - discount + tax + shipping,
        options=options,
        problems=tuple(problems),
        discounts=applied,
    )


@dataclass(frozen=True)
class Changes:
    """What a create or update sets; ``None`` leaves a field as it is."""

    items: Sequence[tuple[str, int]] | None = None
    buyer: dict[str, str] | None = None
    contact: Contact | None = None
    address: Address | None = None
    shipping_option: str | None = None
    metadata: dict[str, Any] | None = None
    consent: dict[str, bool] | None = None
    discount_codes: tuple[str, ...] | None = None
