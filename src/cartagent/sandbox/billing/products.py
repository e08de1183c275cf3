"""Catalog products v1: create, list, show and update (JSON Patch) the merchant's products.

A product id is PayPal's (``PROD-…``) unless the merchant names it; named ids may not use the
``PROD-`` prefix and, as on PayPal, are unique across the whole sandbox.
"""

from __future__ import annotations

import copy
import math
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from fastapi import APIRouter

from .. import spec
from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import invalid_request, unprocessable
from ..store import Row, Tx, resources
from ..webhooks.events import emit

router = APIRouter()

PRODUCT = "product"
SPEC = "catalogs_products_v1"
KEY_TTL = timedelta(hours=72)
PATCHABLE = ("description", "category", "image_url", "home_url")


def _links(call: Call, product_id: str) -> list[dict[str, str]]:
    path = f"/v1/catalogs/products/{product_id}"
    return [call.link(path, "self"), call.link(path, "edit", "PATCH")]


def render(call: Call, row: Row) -> dict[str, Any]:
    product = copy.deepcopy(row.data)
    product["links"] = _links(call, row.id)
    return product


@operation(
    router,
    "POST",
    "/v1/catalogs/products",
    f"{SPEC}:products.create",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
)
def create_product(call: Call, tx: Tx) -> Reply:
    body = call.body
    product_id = body.get("id")
    if product_id is None:
        product_id = call.sandbox.ids.product()
    elif product_id.upper().startswith("PROD-"):
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX",
            "Input identifier must not use system prefix(PROD-).",
            field="/id",
            value=product_id,
        )
    elif _taken(tx, product_id):
        raise unprocessable(
            "DUPLICATE_RESOURCE_IDENTIFIER", "Identifier must be unique.", field="/id"
        )
    now = iso(call.now)
    product: dict[str, Any] = {"id": product_id, "name": body["name"]}
    for key in ("description", "type", "category", "image_url", "home_url"):
        if key in body:
            product[key] = body[key]
    product.setdefault("type", "PHYSICAL")
    product["create_time"] = product["update_time"] = now
    tx.insert(PRODUCT, product_id, product, now=call.now)
    rendered = render(call, require(tx, PRODUCT, product_id))
    emit(call, tx, "CATALOG.PRODUCT.CREATED", rendered, "A product has been created")
    return Reply(rendered, 201)


def _taken(tx: Tx, product_id: str) -> bool:
    # Ids are global, not per merchant: the resources table is keyed by (id, kind).
    query = sa.select(resources.c.id).where(
        resources.c.kind == PRODUCT, resources.c.id == product_id
    )
    return tx.conn.execute(query).first() is not None


def page_of(call: Call, rows: list[Row], path: str) -> tuple[list[Row], dict[str, Any]]:
    """Slice ``rows`` by ``page``/``page_size``; the totals and links PayPal adds to a list."""
    page = int(call.query.get("page", 1))
    size = int(call.query.get("page_size", 10))
    total = len(rows)
    pages = max(1, math.ceil(total / size))
    chosen = rows[(page - 1) * size : page * size]
    extra: dict[str, Any] = {}
    if call.query.get("total_required"):
        extra["total_items"] = total
        extra["total_pages"] = math.ceil(total / size)
    kept = {k: v for k, v in call.query.items() if k not in ("page", "page_size")}
    suffix = "".join(
        f"&{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in kept.items()
    )

    def link(number: int, rel: str) -> dict[str, str]:
        return call.link(f"{path}?page_size={size}&page={number}{suffix}", rel)

    links = [link(page, "self"), link(1, "first"), link(pages, "last")]
    if page > 1:
        links.append(link(page - 1, "prev"))
    if page < pages:
        links.append(link(page + 1, "next"))
    extra["links"] = links
    return chosen, extra


@operation(router, "GET", "/v1/catalogs/products", f"{SPEC}:products.list", write=False)
def list_products(call: Call, tx: Tx) -> Reply:
    rows, extra = page_of(call, tx.find(PRODUCT, newest_first=False), "/v1/catalogs/products")
    body: dict[str, Any] = {}
    if rows:  # PayPal's schema allows no empty ``products`` array
        body["products"] = [_summary(call, row) for row in rows]
    body.update(extra)
    return Reply(body)


def _summary(call: Call, row: Row) -> dict[str, Any]:
    summary: dict[str, Any] = {
        k: row.data[k] for k in ("id", "name", "description", "create_time") if k in row.data
    }
    summary["links"] = [call.link(f"/v1/catalogs/products/{row.id}", "self")]
    return summary


@operation(router, "GET", "/v1/catalogs/products/{product_id}", f"{SPEC}:products.get", write=False)
def show_product(call: Call, tx: Tx, product_id: str) -> Reply:
    return Reply(render(call, require(tx, PRODUCT, product_id)))


@operation(router, "PATCH", "/v1/catalogs/products/{product_id}", f"{SPEC}:products.patch")
def update_product(call: Call, tx: Tx, product_id: str) -> Reply:
    row = require(tx, PRODUCT, product_id, lock=True)
    product = copy.deepcopy(row.data)
    for index, patch in enumerate(call.body):
        where = f"/{index}"
        path = patch.get("path", "")
        key = path[1:] if path.startswith("/") else path
        if key not in PATCHABLE:
            raise invalid_request(
                "INVALID_PATCH_PATH",
                "The specified field cannot be patched.",
                field=f"{where}/path",
                value=path,
            )
        op = patch["op"]
        if op not in ("add", "replace", "remove"):
            raise invalid_request(
                "UNSUPPORTED_PATCH_OPERATION",
                "The specified patch operation not supported for this field.",
                field=f"{where}/op",
                value=op,
            )
        if op == "remove":
            product.pop(key, None)
            continue
        if "value" not in patch:
            raise invalid_request(
                "MISSING_REQUIRED_PARAMETER", "A required field is missing.", field=f"{where}/value"
            )
        product[key] = _checked(key, patch["value"], f"{where}/value")
    product["update_time"] = iso(call.now)
    tx.update(PRODUCT, product_id, product, now=call.now)
    rendered = render(call, require(tx, PRODUCT, product_id))
    emit(call, tx, "CATALOG.PRODUCT.UPDATED", rendered, "A product has been updated")
    return Reply(None, 204)


def _checked(key: str, value: Any, field: str) -> str:
    schema = spec.load(SPEC)["components"]["schemas"]["product_request_POST"]["properties"]
    if key == "category":
        categories = spec.load(SPEC)["components"]["schemas"]["product_category"]["enum"]
        if value not in categories:
            raise invalid_request("INVALID_PARAMETER_VALUE", field=field, value=str(value))
        return str(value)
    limits = schema[key]
    if not isinstance(value, str) or not limits["minLength"] <= len(value) <= limits["maxLength"]:
        raise invalid_request("INVALID_PARAMETER_VALUE", field=field, value=str(value))
    if key.endswith("_url"):
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise invalid_request("INVALID_PARAMETER_SYNTAX", field=field, value=value)
    return value
