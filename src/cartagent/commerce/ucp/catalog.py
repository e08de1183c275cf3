"""UCP's catalog capabilities over the merchant's catalog: search (``catalog_search.json``),
batch lookup and product detail (``catalog_lookup.json``), products as ``types/product.json``.

Search is cartagent's own lexical retrieval (:class:`~cartagent.retrieval.lexical.LexicalIndex`:
BM25 over title, category, brand, attributes, options and description, built in memory from the
store's products on first use). A query without text browses (best rated first). The price
filter is applied by the index, variant by variant; the category filter (``filters.categories``,
OR of the values) matches a product's category path or any level above it, case-insensitively.
Pages are cut from the full, ordered result, so ``cursor`` is an opaque offset and
``total_count`` is exact. Price filters are read in the store's currency when ``context.currency``
is absent (the spec lets a business ignore them then); in another currency they are ignored
with a warning, there being no conversion.

The release disagrees with itself on the severity of catalog errors (catalog/index.md: always
``recoverable``; catalog/rest.md: a missing product is ``unrecoverable``); the REST binding's
rule is followed.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ...catalog.product import Product, Variant
from ...errors import CheckoutError
from ...money import Money
from ...retrieval import LexicalIndex, PriceRange, SearchQuery
from ..offers import MerchantCatalog

__all__ = ["MAX_IDS", "MAX_LIMIT", "Found", "UcpCatalog"]

MAX_PRICE_FILTER = 10**13
"""The largest price bound, in minor units (ten billion dollars): beyond, no price exists."""

MAX_IDS = 50
MAX_LIMIT = 50
DEFAULT_LIMIT = 10
MAX_QUERY = 512
MAX_FILTER_VALUES = 20
MAX_ID = 256
MAX_SELECTED = 20


@dataclass(frozen=True)
class Found:
    """A catalog answer: products (or one), pagination, messages."""

    products: list[dict[str, Any]] = field(default_factory=list)
    pagination: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    kind, _, number = text.partition(":")
    if kind != "o" or not number.isdigit() or len(number) > 9:
        raise CheckoutError(
            "the cursor is not one this store issued",
            code="invalid",
            param=("pagination", "cursor"),
        )
    return int(number)


def _variant_title(product: Product, variant: Variant) -> str:
    return " / ".join(variant.options.values()) or product.title


def _category_path(product: Product) -> str:
    return " > ".join(product.category)


def _option_names(variants: Iterable[Variant]) -> list[str]:
    names: list[str] = []
    for variant in variants:
        names.extend(name for name in variant.options if name not in names)
    return names


def _option_labels(variants: Iterable[Variant], name: str) -> list[str]:
    labels: list[str] = []
    for variant in variants:
        label = variant.options.get(name)
        if label is not None and label not in labels:
            labels.append(label)
    return labels


def _matches(variant: Variant, selections: Sequence[tuple[str, str]]) -> bool:
    options = {name.casefold(): label.casefold() for name, label in variant.options.items()}
    return all(options.get(name.casefold()) == label.casefold() for name, label in selections)


class UcpCatalog:
    """Search, lookup and product detail over ``catalog``'s products, priced in ``currency``."""

    def __init__(self, catalog: MerchantCatalog, currency: str) -> None:
        self.catalog = catalog
        self.currency = currency.upper()
        self._products = {product.id: product for product in catalog.products}
        self._index: LexicalIndex | None = None
        self._lock = threading.Lock()

    def _search_index(self) -> LexicalIndex:
        with self._lock:
            if self._index is None:
                self._index = LexicalIndex.build(self.catalog.products)
            return self._index

    # ------------------------------------------------------------ rendering

    def _price(self, amount: Decimal) -> dict[str, Any]:
        return {"amount": Money(amount, self.currency).minor_units, "currency": self.currency}

    def _variant(self, product: Product, variant: Variant) -> dict[str, Any]:
        return {
            "id": variant.id,
            "sku": variant.id,
            "title": _variant_title(product, variant),
            "description": {"plain": product.description or product.title},
            "price": self._price(variant.price),
            "availability": {
                "available": variant.available,
                "status": "in_stock" if variant.available else "out_of_stock",
            },
            "options": [{"name": name, "label": label} for name, label in variant.options.items()],
        }

    def _product(
        self,
        product: Product,
        variants: Sequence[Variant],
        inputs: Mapping[str, list[dict[str, str]]] | None = None,
    ) -> dict[str, Any]:
        """``product`` showing ``variants`` (featured first); ``inputs`` by variant id for a
        lookup's correlation."""
        prices = [variant.price for variant in product.variants]
        body: dict[str, Any] = {
            "id": product.id,
            "title": product.title,
            "description": {"plain": product.description or product.title},
        }
        if product.category:
            body["categories"] = [{"value": _category_path(product), "taxonomy": "merchant"}]
        body["price_range"] = {"min": self._price(min(prices)), "max": self._price(max(prices))}
        body["options"] = [
            {
                "name": name,
                "values": [{"label": label} for label in _option_labels(product.variants, name)],
            }
            for name in _option_names(product.variants)
        ]
        rendered = []
        for variant in variants:
            entry = self._variant(product, variant)
            if inputs is not None:
                entry["inputs"] = inputs[variant.id]
            rendered.append(entry)
        body["variants"] = rendered
        if product.rating is not None:
            body["rating"] = {
                "value": product.rating,
                "scale_min": 0,
                "scale_max": 5,
                "count": product.rating_count,
            }
        metadata: dict[str, Any] = {}
        if product.brand:
            metadata["brand"] = product.brand
        if product.attributes:
            metadata["attributes"] = {k: list(v) for k, v in product.attributes.items()}
        if metadata:
            body["metadata"] = metadata
        return body

    # ------------------------------------------------------------ filters

    def _filters(
        self, body: Mapping[str, Any]
    ) -> tuple[list[str], PriceRange | None, list[dict[str, Any]]]:
        """The category values, price range and any message about them, from ``filters``."""
        filters = body.get("filters") or {}
        categories = filters.get("categories") or []
        if len(categories) > MAX_FILTER_VALUES or any(len(c) > MAX_ID for c in categories):
            raise CheckoutError(
                f"filter on at most {MAX_FILTER_VALUES} categories of at most {MAX_ID} characters",
                code="invalid",
                param=("filters", "categories"),
            )
        price = filters.get("price")
        if not price:
            return categories, None, []
        currency = str((body.get("context") or {}).get("currency") or self.currency).upper()
        if currency != self.currency:
            warning = {
                "type": "warning",
                "code": "price_filter_ignored",
                "path": "$.filters.price",
                "content": f"prices here are in {self.currency}; the {currency[:3]} price "
                "filter was not applied",
            }
            return categories, None, [warning]
        for key in ("min", "max"):
            if key in price and not 0 <= price[key] <= MAX_PRICE_FILTER:
                raise CheckoutError(
                    f"filters.price.{key} must be from 0 to {MAX_PRICE_FILTER} (minor units)",
                    code="invalid",
                    param=("filters", "price", key),
                )
        bounds = {
            key: Money.from_minor(price[key], self.currency).amount
            for key in ("min", "max")
            if key in price
        }
        try:
            return categories, PriceRange(currency=self.currency, **bounds), []
        except ValueError:
            raise CheckoutError(
                "filters.price.min is above filters.price.max",
                code="invalid",
                param=("filters", "price"),
            ) from None

    @staticmethod
    def _in_categories(product: Product, categories: Sequence[str]) -> bool:
        if not categories:
            return True
        levels = {
            " > ".join(product.category[:depth]).casefold()
            for depth in range(1, len(product.category) + 1)
        }
        wanted = {" > ".join(part.strip() for part in c.split(">")).casefold() for c in categories}
        return bool(levels & wanted)

    @staticmethod
    def _in_price(variant: Variant, price: PriceRange | None) -> bool:
        if price is None:
            return True
        return (price.min is None or variant.price >= price.min) and (
            price.max is None or variant.price <= price.max
        )

    # ------------------------------------------------------------ operations

    def search(self, body: Mapping[str, Any]) -> Found:
        """``search_catalog``: a (schema-valid) ``search_request``."""
        query = " ".join(str(body.get("query") or "").split())
        if len(query) > MAX_QUERY:
            raise CheckoutError(
                f"the query is longer than {MAX_QUERY} characters", code="invalid", param=("query",)
            )
        categories, price, messages = self._filters(body)
        if not query and not categories and not (body.get("filters") or {}).get("price"):
            raise CheckoutError(
                "a search needs a query or a categories or price filter",
                code="invalid",
                param=("query",),
            )
        pagination = body.get("pagination") or {}
        limit = min(int(pagination.get("limit", DEFAULT_LIMIT)), MAX_LIMIT)
        offset = _offset(pagination.get("cursor"))
        hits = self._search_index().search(
            SearchQuery(text=query, price=price), k=max(len(self._products), 1)
        )
        matching = [hit for hit in hits if self._in_categories(hit.product, categories)]
        products = []
        for hit in matching[offset : offset + limit]:
            variants = [v for v in hit.product.variants if self._in_price(v, price)]
            if hit.variant is not None and hit.variant in variants:
                variants.remove(hit.variant)
                variants.insert(0, hit.variant)
            products.append(self._product(hit.product, variants))
        more = offset + limit < len(matching)
        page: dict[str, Any] = {"has_next_page": more, "total_count": len(matching)}
        if more:
            page["cursor"] = _cursor(offset + limit)
        return Found(products, page, messages)

    @staticmethod
    def _featured(variants: Sequence[Variant]) -> Variant:
        return next((v for v in variants if v.available), variants[0])

    def lookup(self, body: Mapping[str, Any]) -> Found:
        """``lookup_catalog``: products and variants by id (a product id resolves to its
        featured variant, a variant id to itself); unknown ids are reported as info."""
        ids = list(dict.fromkeys(body["ids"]))
        if len(ids) > MAX_IDS:
            raise CheckoutError(
                f"look up at most {MAX_IDS} ids at once", code="request_too_large", param=("ids",)
            )
        categories, price, messages = self._filters(body)
        resolved: dict[str, dict[str, list[dict[str, str]]]] = {}  # product -> variant -> inputs
        for wanted in ids:
            product = self._products.get(wanted) if len(wanted) <= MAX_ID else None
            variant: Variant | None = None
            match = "featured"
            if product is not None:
                candidates = [v for v in product.variants if self._in_price(v, price)]
                variant = self._featured(candidates) if candidates else None
            else:
                offer = self.catalog.offer(wanted) if len(wanted) <= MAX_ID else None
                if offer is not None:
                    product = self._products[offer.product_id]
                    variant, match = product.variant(wanted), "exact"
            if product is None:
                messages.append({"type": "info", "code": "not_found", "content": wanted[:MAX_ID]})
                continue
            if variant is None or not self._in_price(variant, price):
                continue
            if not self._in_categories(product, categories):
                continue
            inputs = resolved.setdefault(product.id, {}).setdefault(variant.id, [])
            inputs.append({"id": wanted, "match": match})
        products = []
        for product_id, by_variant in resolved.items():
            product = self._products[product_id]
            variants = [v for v in product.variants if v.id in by_variant]
            variants.sort(key=lambda v: list(by_variant).index(v.id))
            products.append(self._product(product, variants, by_variant))
        return Found(products, None, messages)

    def product(self, body: Mapping[str, Any]) -> Found:
        """``get_product``: one product with the variants matching the effective option
        selections (relaxed per ``preferences``, from the end) and availability signals on
        every option value. No product: an empty :class:`Found` with the reason."""
        wanted = str(body["id"])
        selected = body.get("selected") or []
        preferences = [str(p) for p in body.get("preferences") or []]
        if len(selected) > MAX_SELECTED or len(preferences) > MAX_SELECTED:
            raise CheckoutError(
                f"send at most {MAX_SELECTED} selections and preferences",
                code="invalid",
                param=("selected",),
            )
        names = [str(s["name"]).casefold() for s in selected]
        if len(set(names)) != len(names):
            raise CheckoutError(
                "each option name may be selected once", code="invalid", param=("selected",)
            )
        categories, price, messages = self._filters(body)
        product = self._products.get(wanted) if len(wanted) <= MAX_ID else None
        requested: Variant | None = None
        if product is None:
            offer = self.catalog.offer(wanted) if len(wanted) <= MAX_ID else None
            if offer is not None:
                product = self._products[offer.product_id]
                requested = product.variant(wanted)
        variants = (
            [] if product is None else [v for v in product.variants if self._in_price(v, price)]
        )
        excluded = requested is not None and requested not in variants
        if (
            product is None
            or not variants
            or excluded
            or not self._in_categories(product, categories)
        ):
            error = {
                "type": "error",
                "code": "not_found",
                "content": f"no product {wanted[:MAX_ID]!r}",
                "severity": "unrecoverable",
            }
            return Found([], None, [error, *messages])
        if requested is not None:
            effective = list(requested.options.items())
        else:
            effective = self._relaxed(
                [(str(s["name"]), str(s["label"])) for s in selected], preferences, variants
            )
        matching = [v for v in variants if _matches(v, effective)]
        featured = requested if requested in matching else self._featured(matching)
        if not selected and requested is None:
            effective = list(featured.options.items())
            matching = [v for v in variants if _matches(v, effective)]
        ordered = [featured, *(v for v in matching if v is not featured)]
        detail = self._product(product, ordered)
        detail["selected"] = [{"name": name, "label": label} for name, label in effective]
        detail["options"] = self._availability(variants, effective)
        return Found([detail], None, messages)

    @staticmethod
    def _relaxed(
        selections: list[tuple[str, str]], preferences: Sequence[str], variants: Sequence[Variant]
    ) -> list[tuple[str, str]]:
        """``selections`` less the fewest options needed for a variant to match: first those
        named in ``preferences`` from its end, then the remaining ones from the last."""
        order = [p.casefold() for p in reversed(preferences)]
        active = list(selections)
        while active and not any(_matches(v, active) for v in variants):
            names = [name.casefold() for name, _ in active]
            drop = next((names.index(p) for p in order if p in names), len(active) - 1)
            del active[drop]
        return active

    @staticmethod
    def _availability(
        variants: Sequence[Variant], effective: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any]]:
        out = []
        for name in _option_names(variants):
            others = [(n, label) for n, label in effective if n.casefold() != name.casefold()]
            values = []
            for label in _option_labels(variants, name):
                fits = [v for v in variants if v.options.get(name) == label and _matches(v, others)]
                values.append(
                    {
                        "label": label,
                        "available": any(v.available for v in fits),
                        "exists": bool(fits),
                    }
                )
            out.append({"name": name, "values": values})
        return out
