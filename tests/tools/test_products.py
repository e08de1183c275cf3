"""Catalog product tools against the sandbox."""

from __future__ import annotations

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit
from cartagent.tools.products import TOOLS

from .conftest import call
from .flows import hints, sandbox_get


def test_a_product_is_created_listed_shown_and_updated(toolkit: Toolkit) -> None:
    made = call(
        toolkit,
        "create_product",
        {"name": "Coffee club", "type": "SERVICE", "category": "SOFTWARE"},
    )
    assert not made.is_error, made.content
    product_id = made.content["id"]
    assert made.content == {
        "id": product_id,
        "name": "Coffee club",
        "type": "SERVICE",
        "category": "SOFTWARE",
    }

    listed = call(toolkit, "list_products", {})
    assert [p["id"] for p in listed.content["products"]] == [product_id]
    assert listed.content["total_items"] == 1

    updated = call(
        toolkit,
        "update_product",
        {"product_id": product_id, "description": "Beans monthly", "home_url": "https://ex.com"},
    )
    assert not updated.is_error, updated.content
    assert updated.content["description"] == "Beans monthly"
    assert updated.content["home_url"] == "https://ex.com"

    shown = call(toolkit, "show_product_details", {"product_id": product_id})
    assert shown.content == updated.content


def test_a_bad_image_url_is_refused_naming_it_and_nothing_is_created(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    result = call(toolkit, "create_product", {"name": "Mug", "image_url": "not a url"})
    assert result.is_error
    assert result.content["field"] == "image_url"
    assert "products" not in sandbox_get(paypal_client, "/v1/catalogs/products")


def test_an_update_with_nothing_to_change_is_refused_naming_a_field(toolkit: Toolkit) -> None:
    product_id = call(toolkit, "create_product", {"name": "Mug"}).content["id"]
    result = call(toolkit, "update_product", {"product_id": product_id})
    assert result.is_error
    assert result.content["field"] == "description"


def test_product_tools_are_read_only_or_plain_writes() -> None:
    assert hints(TOOLS) == {
        "create_product": ("openWorldHint",),
        "list_products": ("readOnlyHint", "idempotentHint", "openWorldHint"),
        "show_product_details": ("readOnlyHint", "idempotentHint", "openWorldHint"),
        "update_product": ("idempotentHint", "openWorldHint"),
    }
