"""Catalog products: create, list, show and update the goods and services plans are built on."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..errors import ToolError
from ..paypal import api_path
from ._models import Args, PayPalId, id_field
from ._tool import ToolContext, tool

BASE = "/v1/catalogs/products"
URL = r"^https?://\S+$"


def _summary(product: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "name", "type", "category", "description", "image_url", "home_url")
    return {k: product[k] for k in keys if k in product}


class ProductFields(Args):
    description: str | None = Field(
        default=None, description="Product description.", min_length=1, max_length=256
    )
    category: str | None = Field(
        default=None,
        description="PayPal product category, e.g. SOFTWARE, BOOKS, CLOTHING (upper case).",
        min_length=4,
        max_length=256,
        pattern=r"^[A-Z_]+$",
    )
    image_url: str | None = Field(
        default=None, description="URL of a product image.", max_length=2000, pattern=URL
    )
    home_url: str | None = Field(
        default=None, description="URL of the product's home page.", max_length=2000, pattern=URL
    )


class CreateProductArgs(ProductFields):
    name: str = Field(description="Product name.", min_length=1, max_length=127)
    type: Literal["PHYSICAL", "DIGITAL", "SERVICE"] = Field(
        default="PHYSICAL", description="What kind of product it is."
    )


@tool(family="products", action="create")
async def create_product(ctx: ToolContext, args: CreateProductArgs) -> dict[str, Any]:
    """Create a catalog product (needed before a subscription plan); returns its id."""
    body = args.model_dump(exclude_none=True)
    product = await ctx.client.post(BASE, body, headers={"Prefer": "return=representation"})
    return _summary(product)


class ListProductsArgs(Args):
    page: int = Field(default=1, ge=1, le=100_000, description="Page number, from 1.")
    page_size: int = Field(default=10, ge=1, le=20, description="Products per page.")


@tool(family="products", action="list", read_only=True, idempotent=True)
async def list_products(ctx: ToolContext, args: ListProductsArgs) -> dict[str, Any]:
    """List the merchant's catalog products, a page at a time."""
    found = await ctx.client.get(
        BASE, params={"page": args.page, "page_size": args.page_size, "total_required": "true"}
    )
    return {
        "products": [_summary(p) for p in found.get("products", [])],
        "page": args.page,
        "total_items": found.get("total_items"),
        "total_pages": found.get("total_pages"),
    }


class ProductIdArgs(Args):
    product_id: PayPalId = id_field(
        "The product id, e.g. PROD-XXCD1234QWER65782.", min_length=6, max_length=50
    )


def _product(args: ProductIdArgs) -> str:
    return api_path(BASE + "/{}", args.product_id)


@tool(family="products", action="show", read_only=True, idempotent=True)
async def show_product_details(ctx: ToolContext, args: ProductIdArgs) -> dict[str, Any]:
    """Show one catalog product."""
    return _summary(await ctx.client.get(_product(args)))


class UpdateProductArgs(ProductFields, ProductIdArgs):
    pass


@tool(family="products", action="update", idempotent=True)
async def update_product(ctx: ToolContext, args: UpdateProductArgs) -> dict[str, Any]:
    """Change a product's description, category, image_url or home_url; returns the product."""
    changes = args.model_dump(exclude_none=True, include=set(ProductFields.model_fields))
    if not changes:
        raise ToolError(
            "nothing to change: give description, category, image_url or home_url",
            field="description",
        )
    patch = [{"op": "replace", "path": f"/{key}", "value": value} for key, value in changes.items()]
    path = _product(args)
    await ctx.client.patch(path, patch)
    return _summary(await ctx.client.get(path))


TOOLS = (create_product, list_products, show_product_details, update_product)
