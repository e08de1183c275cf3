"""Catalog products v1 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events
from tests.conftest import Api, issues

BASE = "/v1/catalogs/products"


def product_body(**extra: Any) -> dict[str, Any]:
    return {"name": "Video Streaming Service", "type": "SERVICE", **extra}


def create_product(api: Api, **extra: Any) -> dict[str, Any]:
    response = api.post(BASE, product_body(**extra))
    assert response.status_code == 201, response.text
    product: dict[str, Any] = response.json()
    return product


def test_create_returns_the_product_with_a_paypal_id(api: Api) -> None:
    response = api.post(BASE, product_body(category="SOFTWARE", home_url="https://example.com"))
    assert response.status_code == 201
    product = response.json()
    assert product["id"].startswith("PROD-") and len(product["id"]) == 22
    assert product["name"] == "Video Streaming Service"
    assert product["category"] == "SOFTWARE"
    assert product["create_time"] == "2026-11-21T12:00:00Z"
    rels = {link["rel"]: link["method"] for link in product["links"]}
    assert rels == {"self": "GET", "edit": "PATCH"}


def test_type_is_required(api: Api) -> None:
    response = api.post(BASE, {"name": "Mug"})
    assert response.status_code == 400
    assert issues(response) == ["MISSING_REQUIRED_PARAMETER"]
    assert response.json()["details"][0]["field"] == "/type"


def test_a_merchant_chosen_id_is_kept(api: Api) -> None:
    product = create_product(api, id="video-stream-abc1")
    assert product["id"] == "video-stream-abc1"
    assert api.get(f"{BASE}/video-stream-abc1").json()["name"] == "Video Streaming Service"


def test_a_duplicate_id_is_refused(api: Api) -> None:
    create_product(api, id="duplicate-prod-9")
    again = api.post(BASE, product_body(id="duplicate-prod-9"))
    assert again.status_code == 422
    assert issues(again) == ["DUPLICATE_RESOURCE_IDENTIFIER"]


def test_an_id_with_the_system_prefix_is_refused(api: Api) -> None:
    response = api.post(BASE, product_body(id="PROD-MINE12345"))
    assert response.status_code == 400
    assert issues(response) == ["INVALID_PARAMETER_SYNTAX"]
    assert api.get(f"{BASE}/PROD-MINE12345").status_code == 404


def test_bad_input_is_400(api: Api) -> None:
    missing = api.post(BASE, {"type": "SERVICE"})
    assert missing.status_code == 400 and issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    wrong_type = api.post(BASE, product_body(type="FOOD"))
    assert wrong_type.status_code == 400 and issues(wrong_type) == ["INVALID_PARAMETER_VALUE"]
    short_id = api.post(BASE, product_body(id="abc"))
    assert short_id.status_code == 400 and issues(short_id) == ["INVALID_STRING_MIN_LENGTH"]
    assert "products" not in api.get(BASE).json()
    unknown = api.post(BASE, product_body(colour="red"))
    assert unknown.status_code == 201 and "colour" not in unknown.json()  # ignored, as PayPal does


def test_list_pages_through_products_oldest_first(api: Api, sandbox: Sandbox) -> None:
    ids = []
    for n in range(3):
        ids.append(create_product(api, name=f"Product {n}")["id"])
        sandbox.clock.advance(timedelta(seconds=1))
    first = api.get(BASE, params={"page_size": 2, "total_required": "true"}).json()
    assert [p["id"] for p in first["products"]] == ids[:2]
    assert (first["total_items"], first["total_pages"]) == (3, 2)
    assert set(first["products"][0]) == {"id", "name", "create_time", "links"}
    rels = {link["rel"] for link in first["links"]}
    assert "next" in rels and "prev" not in rels
    second = api.get(BASE, params={"page_size": 2, "page": 2}).json()
    assert [p["id"] for p in second["products"]] == ids[2:]
    assert "total_items" not in second


def test_list_rejects_out_of_range_paging(api: Api) -> None:
    response = api.get(BASE, params={"page_size": 21})
    assert response.status_code == 400
    assert issues(response) == ["INVALID_PARAMETER_VALUE"]
    assert api.get(BASE, params={"page": "x"}).status_code == 400


def test_patch_updates_the_patchable_fields(api: Api) -> None:
    product = create_product(api, description="Old", image_url="https://example.com/a.png")
    response = api.patch(
        f"{BASE}/{product['id']}",
        [
            {"op": "replace", "path": "/description", "value": "Premium video streaming"},
            {"op": "add", "path": "/category", "value": "SOFTWARE"},
            {"op": "remove", "path": "/image_url"},
        ],
    )
    assert response.status_code == 204
    shown = api.get(f"{BASE}/{product['id']}").json()
    assert shown["description"] == "Premium video streaming"
    assert shown["category"] == "SOFTWARE"
    assert "image_url" not in shown


def test_patch_refuses_other_fields_and_writes_nothing(api: Api) -> None:
    product = create_product(api, description="Kept")
    path = f"{BASE}/{product['id']}"
    change = {"op": "replace", "path": "/description", "value": "Changed"}
    name = api.patch(path, [change, {"op": "replace", "path": "/name", "value": "New"}])
    assert name.status_code == 400 and issues(name) == ["INVALID_PATCH_PATH"]
    move = api.patch(path, [{"op": "move", "path": "/description", "from": "/category"}])
    assert move.status_code == 400 and issues(move) == ["UNSUPPORTED_PATCH_OPERATION"]
    category = api.patch(path, [{"op": "replace", "path": "/category", "value": "NOPE"}])
    assert category.status_code == 400 and issues(category) == ["INVALID_PARAMETER_VALUE"]
    url = api.patch(path, [{"op": "add", "path": "/home_url", "value": "not a url"}])
    assert url.status_code == 400 and issues(url) == ["INVALID_PARAMETER_SYNTAX"]
    assert api.get(path).json()["description"] == "Kept"


def test_replayed_create_returns_the_same_product(api: Api) -> None:
    key = {"PayPal-Request-Id": "product-key-1"}
    first = api.post(BASE, product_body(), headers=key)
    second = api.post(BASE, product_body(), headers=key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert len(api.get(BASE).json()["products"]) == 1


def test_merchants_cannot_see_each_others_products(api: Api, other_api: Api) -> None:
    product = create_product(api)
    assert other_api.get(f"{BASE}/{product['id']}").status_code == 404
    patch = [{"op": "replace", "path": "/description", "value": "Mine now"}]
    assert other_api.patch(f"{BASE}/{product['id']}", patch).status_code == 404
    assert "products" not in other_api.get(BASE).json()


def test_create_and_update_emit_catalog_events(api: Api, sandbox: Sandbox) -> None:
    product = create_product(api)
    api.patch(f"{BASE}/{product['id']}", [{"op": "add", "path": "/description", "value": "D"}])
    with sandbox.store.engine.connect() as conn:
        types = conn.execute(
            sa.select(events.c.event_type).where(events.c.resource_id == product["id"])
        ).scalars()
        # The test clock is pinned, so both events share a timestamp: compare without order.
        assert sorted(types) == ["CATALOG.PRODUCT.CREATED", "CATALOG.PRODUCT.UPDATED"]
