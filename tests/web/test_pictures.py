"""Product pictures: the addresses cards carry, and catalog files served by the API."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import ConversationStore, ProductCard
from cartagent.catalog import Product, Variant
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.search import Searcher
from cartagent.web import ApiKeys, create_api
from cartagent.web.pictures import MAX_PICTURE_BYTES
from cartagent.web.schemas import Card, picture_address

from .conftest import ALICE, bearer, make_assistant, new_session, say

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2a3a1c40000000049454e44ae426082"
)


def product(product_id: str, image: str | None) -> Product:
    return Product(
        id=product_id,
        title=f"Travel mug {product_id}",
        category=("Kitchen", "Mugs"),
        image=image,
        variants=(Variant(id=f"{product_id}-1", price="24.90"),),
    )


@pytest.mark.parametrize(
    ("image", "address"),
    [
        ("https://cdn.example.com/mugs/1.jpg", "https://cdn.example.com/mugs/1.jpg"),
        ("http://cdn.example.com/mugs/1.jpg", None),  # a plain-http picture is not shown
        ("pictures/mug 1.png", "/api/products/m%2F1%20x/image"),
        (None, None),
    ],
)
def test_a_card_says_where_its_picture_loads_from(image: str | None, address: str | None) -> None:
    assert picture_address("m/1 x", image) == address
    card = ProductCard("m/1 x", "Mug", "v", None, None, True, 1, image=image)
    assert Card.of(card).image == address
    assert ProductCard.from_json(card.to_json()) == card


@pytest.fixture
def shop(tmp_path: Path, store: ConversationStore, keys: ApiKeys) -> Iterator[TestClient]:
    (tmp_path / "pictures").mkdir()
    (tmp_path / "pictures" / "mug.png").write_bytes(PNG)
    (tmp_path / "big.png").write_bytes(b"\0" * (MAX_PICTURE_BYTES + 1))
    outside = tmp_path.parent / f"{tmp_path.name}-outside.png"
    outside.write_bytes(PNG)
    os.symlink(outside, tmp_path / "pictures" / "away.png")
    products = [
        product("mug", "pictures/mug.png"),
        product("missing", "pictures/none.png"),
        product("big", "big.png"),
        product("linked", "pictures/away.png"),  # a link out of the folder
        product("cdn", "https://cdn.example.com/mug.jpg"),
        product("plain", None),
    ]
    assistant = make_assistant(store, Searcher(LexicalIndex.build(products)))
    app = create_api(assistant, keys, pictures=tmp_path)
    with TestClient(app, raise_server_exceptions=False) as http:
        yield http


def test_a_catalog_file_is_served_without_a_key(shop: TestClient) -> None:
    served = shop.get("/api/products/mug/image")
    assert served.status_code == 200 and served.content == PNG
    assert served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.headers["cache-control"] == "public, max-age=3600"


@pytest.mark.parametrize("product_id", ["missing", "big", "linked", "cdn", "plain", "nope"])
def test_nothing_else_is_served(shop: TestClient, product_id: str) -> None:
    assert shop.get(f"/api/products/{product_id}/image").status_code == 404
    assert shop.get("/api/products/" + "x" * 300 + "/image").status_code == 404


def test_search_cards_carry_the_pictures_address(shop: TestClient) -> None:
    session = new_session(shop)
    cards = say(shop, session, "travel mug").json()["cards"]
    by_id = {card["id"]: card["image"] for card in cards}
    assert by_id["mug"] == "/api/products/mug/image"
    assert by_id["cdn"] == "https://cdn.example.com/mug.jpg"
    assert by_id["plain"] is None
    assert shop.get("/api/products/mug/image", headers=bearer(ALICE)).status_code == 200


def test_without_a_catalog_folder_no_file_is_served(
    store: ConversationStore, keys: ApiKeys
) -> None:
    assistant = make_assistant(store, Searcher(LexicalIndex.build([product("mug", "m.png")])))
    with TestClient(create_api(assistant, keys)) as http:
        assert http.get("/api/products/mug/image").status_code == 404
