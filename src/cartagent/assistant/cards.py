"""Product cards: what a shopper is shown for each search result, rendered from the catalog."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..retrieval import NO, YES

if TYPE_CHECKING:
    from ..catalog import Product, Variant
    from ..retrieval import Hit

__all__ = ["ProductCard", "card_from_hit", "option_words"]


def option_words(options: Mapping[str, str]) -> str:
    """A variant's options as a shopper reads them: "12, leather, waterproof" rather than
    "12, leather, yes" (a yes/no value says its option's name)."""
    words = []
    for name, value in options.items():
        said = value.casefold()
        words.append(name if said in YES else f"not {name}" if said in NO else value)
    return ", ".join(words)


@dataclass(frozen=True)
class ProductCard:
    """One result as shown: the product, the variant that fits the request, its price.

    ``rank`` counts from 1 in the list it was shown in, so "the second one" is ``rank == 2``.
    ``variant_id``, ``price`` and ``currency`` are ``None`` only for a product without variants
    (there is nothing to buy yet). ``breaks`` is empty for a match; for a near miss, offered
    when too few products match, it says what the card does not satisfy.
    """

    id: str
    title: str
    variant_id: str | None
    price: Decimal | None
    currency: str | None
    available: bool
    rank: int
    options: dict[str, str] = field(default_factory=dict)
    breaks: tuple[str, ...] = ()
    category: str | None = None  # the product's most specific category ("T-Shirts")
    image: str | None = None  # the catalog's picture: an http(s) address or a catalog file

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "variant_id": self.variant_id,
            "options": dict(self.options),
            "price": None if self.price is None else str(self.price),
            "currency": self.currency,
            "available": self.available,
            "rank": self.rank,
            "breaks": list(self.breaks),
        }
        if self.category is not None:
            shown["category"] = self.category
        if self.image is not None:
            shown["image"] = self.image
        return shown

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProductCard:
        price = data.get("price")
        return cls(
            id=str(data["id"]),
            title=str(data["title"]),
            variant_id=None if data.get("variant_id") is None else str(data["variant_id"]),
            options={str(k): str(v) for k, v in (data.get("options") or {}).items()},
            price=None if price is None else Decimal(str(price)),
            currency=None if data.get("currency") is None else str(data["currency"]),
            available=bool(data["available"]),
            rank=int(data["rank"]),
            breaks=tuple(str(b) for b in data.get("breaks") or ()),
            category=None if data.get("category") is None else str(data["category"]),
            image=None if data.get("image") is None else str(data["image"]),
        )

    def describe(self) -> str:
        """``"T-Shirt (blue, M) - 50.88 USD"``: a one-line name for confirmations."""
        options = option_words(self.options)
        price = "no price" if self.price is None else f"{self.price} {self.currency}"
        stock = "" if self.available else ", out of stock"
        return f"{self.title}{f' ({options})' if options else ''} - {price}{stock}"


def card_from_variant(product: Product, variant: Variant, rank: int) -> ProductCard:
    """The card for one variant of ``product``."""
    return ProductCard(
        product.id,
        product.title,
        variant.id,
        variant.price,
        variant.currency,
        variant.available,
        rank,
        dict(variant.options),
        category=_category(product),
        image=product.image,
    )


def _category(product: Product) -> str | None:
    path = [part for part in product.category if part.strip()]
    return path[-1] if path else None


def card_from_hit(hit: Hit, rank: int) -> ProductCard:
    """The card for a search hit: its chosen variant, else the product's lowest price."""
    product, variant = hit.product, hit.variant
    if variant is not None:
        return card_from_variant(product, variant, rank)
    return ProductCard(
        id=product.id,
        title=product.title,
        variant_id=None,
        price=product.price_min,
        currency=product.currency,
        available=False,
        rank=rank,
        category=_category(product),
        image=product.image,
    )
