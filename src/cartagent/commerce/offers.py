"""What the merchant sells: every variant of the store's products as an offer, by item id.

Checkout protocols name a purchasable thing by one id (ACP ``item.id``, UCP ``item.id``); in
cartagent's catalogs that is a variant id, unique across the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from ..catalog.product import Product

__all__ = ["MerchantCatalog", "Offer"]


@dataclass(frozen=True)
class Offer:
    """One variant of one product, as it is sold now."""

    item_id: str
    product_id: str
    title: str
    unit_price: Decimal
    currency: str
    available: bool
    options: dict[str, str] = field(default_factory=dict)
    category: str | None = None
    description: str = ""
    stock: int | None = None  # units on hand, where the store counts them

    @property
    def name(self) -> str:
        """``"T-Shirt (blue, L)"``: the product with its variant's options."""
        if not self.options:
            return self.title
        return f"{self.title} ({', '.join(self.options.values())})"


class MerchantCatalog:
    """The store's offers keyed by item (variant) id.

    Raises ``ValueError`` if two products share a variant id: a checkout could not tell which
    one an agent means.
    """

    def __init__(self, products: Iterable[Product]) -> None:
        self.products = list(products)
        self._offers: dict[str, Offer] = {}
        for product in self.products:
            for variant in product.variants:
                if variant.id in self._offers:
                    raise ValueError(
                        f"variant id {variant.id!r} appears in more than one product "
                        f"({self._offers[variant.id].product_id} and {product.id})"
                    )
                self._offers[variant.id] = Offer(
                    item_id=variant.id,
                    product_id=product.id,
                    title=product.title,
                    unit_price=variant.price,
                    currency=variant.currency,
                    available=variant.available,
                    options=dict(variant.options),
                    category=" > ".join(product.category) or None,
                    description=product.description,
                    stock=variant.stock,
                )

    def offer(self, item_id: str) -> Offer | None:
        return self._offers.get(item_id)

    def __len__(self) -> int:
        return len(self._offers)

    def __iter__(self) -> Iterator[Offer]:
        return iter(self._offers.values())
