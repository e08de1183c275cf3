"""Catalog search: ``search_products`` finds products a shopper describes in their own words.

The tool needs a :class:`~cartagent.retrieval.search.Searcher` (an index over a catalog), which a
:class:`~cartagent.tools.ToolContext` does not carry, so it is built per searcher with
:func:`search_tool` and is not part of ``ALL_TOOLS``::

    toolkit = Toolkit(client, [*ALL_TOOLS, search_tool(searcher)], config=config)

and enabled like any other with ``{"catalog": {"search": true}}``.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError

from ..errors import ToolError
from ..tools import Amount, Args, Tool, ToolContext, tool

if TYPE_CHECKING:
    from .query import SearchQuery
    from .search import Searcher

__all__ = ["SearchProductsArgs", "search_tool"]


class SearchProductsArgs(Args):
    request: str = Field(
        description=(
            'What the shopper wants, in their own words, e.g. "red cotton t-shirt size M under '
            '$30, not polyester". Prices, sizes, colours, exclusions and sorting are understood '
            "from the text; the fields below override what was understood."
        ),
        min_length=1,
        max_length=1000,
    )
    k: int = Field(default=5, ge=1, le=50, description="How many products to return.")
    min_price: Amount | None = Field(default=None, description="Lowest acceptable price.")
    max_price: Amount | None = Field(default=None, description="Highest acceptable price.")
    currency: str | None = Field(
        default=None,
        description="Currency of min_price/max_price (ISO 4217, e.g. USD); default USD.",
        min_length=3,
        max_length=3,
    )
    category: str | None = Field(
        default=None, description="Product type, e.g. 'jeans', 'coffee maker'.", max_length=200
    )
    brand: str | None = Field(default=None, description="Brand to restrict to.", max_length=200)
    options: dict[str, list[str]] | None = Field(
        default=None,
        description=(
            "Variant choices by name, replacing what was understood for those names, e.g. "
            '{"size": ["M"], "color": ["red", "blue"]} (values under a name are alternatives).'
        ),
    )
    exclude: list[str] | None = Field(
        default=None,
        description="Words or values the products must not have, e.g. ['leather', 'hood'].",
        max_length=20,
    )
    min_rating: float | None = Field(
        default=None, ge=0, le=5, description="Lowest acceptable average rating (0-5)."
    )
    in_stock_only: bool | None = Field(
        default=None, description="true: only products that can be bought now."
    )
    sort: Literal["relevance", "price_asc", "price_desc", "rating"] | None = Field(
        default=None, description="Result order; default: as understood (usually relevance)."
    )


def _with_overrides(query: SearchQuery, args: SearchProductsArgs) -> SearchQuery:
    from .query import Exclusion, SearchQuery

    data = query.model_dump()
    if args.min_price is not None or args.max_price is not None or args.currency is not None:
        price = query.price
        low: Decimal | None = args.min_price
        high: Decimal | None = args.max_price
        if price is not None:
            low = price.min if low is None else low
            high = price.max if high is None else high
        currency = args.currency or (price.currency if price is not None else "USD")
        data["price"] = {"min": low, "max": high, "currency": currency}
    if args.category is not None:
        data["category"] = args.category
    if args.brand is not None:
        data["brand"] = args.brand
    if args.options:
        data["options"] = {**query.options, **args.options}
    if args.exclude:
        data["exclude"] = [
            *data["exclude"],
            *(Exclusion(field=None, value=v).model_dump() for v in args.exclude if v.strip()),
        ]
    if args.min_rating is not None:
        data["min_rating"] = args.min_rating
    if args.in_stock_only is not None:
        data["available_only"] = args.in_stock_only
    if args.sort is not None:
        data["sort"] = args.sort
    try:
        return SearchQuery.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        field = "min_price" if where.startswith("price") else where or None
        raise ToolError(f"conflicting search constraints: {first['msg']}", field=field) from error


def search_tool(searcher: Searcher) -> Tool[SearchProductsArgs]:
    """The ``search_products`` tool (family ``catalog``, action ``search``) over ``searcher``."""

    @tool(family="catalog", action="search", read_only=True, idempotent=True, open_world=False)
    async def search_products(ctx: ToolContext, args: SearchProductsArgs) -> dict[str, Any]:
        """Search the store's catalog for products matching a shopper's request.

        Returns the best matches with id, title, price, the variant (id and options such as
        size and colour) that fits the request, and which constraints it matched; use the
        variant id to add it to an order. When fewer products than ``k`` match every
        constraint (none, or a few), ``near_misses`` follows with the nearest others and what
        each breaks (e.g. "0.88 USD over your limit of 50 USD"): offer them as alternatives,
        never as matches, or relax a constraint and search again.
        """
        return await asyncio.to_thread(_search, searcher, args)

    return search_products


def _search(searcher: Searcher, args: SearchProductsArgs) -> dict[str, Any]:
    from .search import hit_summary, near_miss_summary

    query = _with_overrides(searcher.understand(args.request), args)
    result = searcher.search_query(query, args.k)
    hits = [_without_score(hit_summary(hit)) for hit in result.hits]
    content: dict[str, Any] = {
        "understood": query.model_dump(mode="json", exclude_defaults=True),
        "count": len(hits),
        "products": hits,
    }
    near = [_without_score(near_miss_summary(n)) for n in result.near_misses]
    if near:
        content["near_misses"] = near
    if not hits:
        content["hint"] = (
            "no product matches every constraint; near_misses say what each breaks"
            if near
            else "no products match every constraint; drop one and search again"
        )
    elif near:
        content["hint"] = (
            "products lists every match; near_misses are close alternatives, each with what "
            "it breaks"
        )
    return content


def _without_score(summary: dict[str, Any]) -> dict[str, Any]:
    summary.pop("score", None)
    return summary
