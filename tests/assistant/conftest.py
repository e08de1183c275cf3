"""Assistant fixtures: a conversation store per backend, small and real catalogs, embedders,
and the assistant's toolkit on the in-process sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import ConversationStore, EmbeddingRouter
from cartagent.assistant.toolkit import assistant_toolkit
from cartagent.catalog import Product, Variant
from cartagent.paypal import AsyncPayPalClient
from cartagent.retrieval.embeddings import MiniLMEmbedder
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.search import Searcher
from cartagent.tools import Toolkit
from tests.conftest import START, TAU

_STORES: dict[str, ConversationStore] = {}


@pytest.fixture(scope="session")
def _stores() -> Iterator[dict[str, ConversationStore]]:
    yield _STORES
    while _STORES:
        _STORES.popitem()[1].close()


@pytest.fixture
def conversations(database_url: str, _stores: dict[str, ConversationStore]) -> ConversationStore:
    """A conversation store on SQLite and on PostgreSQL (the sandbox tests' databases)."""
    store = _stores.get(database_url)
    if store is None:
        store = _stores[database_url] = ConversationStore.open(database_url)
    return store


@pytest.fixture
def memory_store() -> Iterator[ConversationStore]:
    """An in-memory SQLite store, for tests that are not about the database."""
    store = ConversationStore.open("sqlite://")
    yield store
    store.close()


def _shirt(
    vid: str, color: str, size: str, material: str, price: str, available: bool = True
) -> Variant:
    return Variant(
        id=vid,
        options={"color": color, "size": size, "material": material},
        price=Decimal(price),
        available=available,
    )


SHOP = [
    Product(
        id="tee",
        title="T-Shirt",
        category=("Clothing", "Tops", "T-Shirts"),
        variants=(
            _shirt("tee-blue-m", "blue", "M", "cotton", "50.88"),
            _shirt("tee-blue-s", "blue", "S", "cotton", "53.43"),
            _shirt("tee-blue-poly", "blue", "S", "polyester", "54.84", available=False),
            _shirt("tee-red-l", "red", "L", "cotton", "46.66"),
            _shirt("tee-black-xl", "black", "XL", "polyester", "49.52"),
        ),
    ),
    Product(
        id="hoodie",
        title="Hoodie",
        category=("Clothing", "Tops", "Hoodies"),
        variants=(
            _shirt("hoodie-red", "red", "M", "cotton", "79.00"),
            _shirt("hoodie-grey", "grey", "L", "polyester", "35.00"),
        ),
    ),
    Product(
        id="mug",
        title="Coffee Mug",
        category=("Home & Kitchen", "Mugs"),
        variants=(
            Variant(id="mug-white", options={"color": "white"}, price=Decimal("12.00")),
            Variant(id="mug-red", options={"color": "red"}, price=Decimal("14.50")),
        ),
    ),
]


@pytest.fixture(scope="session")
def shop_searcher() -> Searcher:
    """A lexical searcher (rule understanding) over three small products."""
    return Searcher(LexicalIndex.build(SHOP))


@pytest.fixture(scope="session")
def tau_searcher() -> Searcher:
    from cartagent.catalog.tau import tau_catalog

    return Searcher(LexicalIndex.build(tau_catalog(TAU)))


@pytest.fixture(scope="session")
def tau_grounded_searcher() -> Searcher:
    """The tau-bench store searched as the assistant does: rules, grounded in its vocabulary
    (lexical, to stay quick)."""
    from cartagent.catalog.tau import tau_catalog
    from cartagent.retrieval.catalog_search import catalog_searcher
    from cartagent.retrieval.rules import parse

    return catalog_searcher(tau_catalog(TAU), parse, mode="lexical")


@pytest.fixture(scope="session")
def minilm_router(minilm: MiniLMEmbedder) -> EmbeddingRouter:
    """The embedded default router on the real MiniLM embedder, examples embedded once."""
    router = EmbeddingRouter(minilm)
    router.warm_up()
    return router


@pytest.fixture
def shop_toolkit(paypal_client: AsyncPayPalClient) -> Toolkit:
    """Every tool, approved only under a grant (the assistant's policy), today pinned."""
    return assistant_toolkit(paypal_client, today=lambda: START.date())


def approve_on_paypal(http: TestClient, order_id: str) -> httpx.Response:
    """The shopper presses "Pay Now" on the sandbox's buyer page."""
    response = http.post(f"/checkoutnow?token={order_id}", data={}, follow_redirects=False)
    assert response.status_code == 200, response.text
    return response
