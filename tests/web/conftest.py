"""Web fixtures: a real assistant over the small shop, API keys for two shoppers and a merchant."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import (
    Assistant,
    Conversation,
    ConversationConflict,
    ConversationStore,
    Domain,
    EmbeddingRouter,
    Reply,
    StoredMessage,
)
from cartagent.assistant.router import Example
from cartagent.retrieval.lexical import LexicalIndex
from cartagent.retrieval.search import Searcher
from cartagent.web import ApiKeys, Principal, Role, create_api
from tests.assistant.conftest import SHOP

pytest.importorskip("numpy")

ALICE = "alice-key-0123456789abcdef"
BOB = "bob-key-0123456789abcdefgh"
MERCHANT = "merchant-key-0123456789abc"

EXAMPLES = [
    Example("show me t-shirts", Domain.DISCOVERY),
    Example("find a coffee mug", Domain.DISCOVERY),
    Example("where is my order", Domain.ORDERS),
    Example("what's in my cart", Domain.CART_CHECKOUT),
    Example("tell me a joke", Domain.OUT_OF_SCOPE),
]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def new_session(client: TestClient, key: str = ALICE) -> str:
    created = client.post("/api/sessions", headers=bearer(key))
    assert created.status_code == 201
    return str(created.json()["id"])


def say(client: TestClient, session_id: str, text: str, key: str = ALICE) -> httpx.Response:
    return client.post(
        f"/api/sessions/{session_id}/messages", json={"text": text}, headers=bearer(key)
    )


class RacedStore(ConversationStore):
    """Another turn always wins the race to save."""

    def save_turn(self, state: Conversation, turn: Sequence[StoredMessage]) -> int:
        raise ConversationConflict(f"session {state.session_id!r} changed during this turn")


class BrokenAssistant(Assistant):
    async def turn(self, session_id: str, text: str, *, merchant: bool = False) -> Reply:
        raise RuntimeError("internal detail that must not leak")


@pytest.fixture(scope="session")
def shop_searcher() -> Searcher:
    return Searcher(LexicalIndex.build(SHOP))


@pytest.fixture
def keys() -> ApiKeys:
    return ApiKeys(
        [
            (ALICE, Principal("alice", Role.SHOPPER)),
            (BOB, Principal("bob", Role.SHOPPER)),
            (MERCHANT, Principal("mel", Role.MERCHANT)),
        ]
    )


@pytest.fixture
def store() -> Iterator[ConversationStore]:
    conversations = ConversationStore.open("sqlite://")
    yield conversations
    conversations.close()


def make_assistant(
    store: ConversationStore, searcher: Searcher, kind: type[Assistant] = Assistant
) -> Assistant:
    """The real assistant; only the router's embedder is a test double (hashing, no model)."""
    from cartagent.testing import HashingEmbedder

    router = EmbeddingRouter(HashingEmbedder(256), EXAMPLES, k=1)
    return kind(router, store, searcher=searcher)


@pytest.fixture
def assistant(store: ConversationStore, shop_searcher: Searcher) -> Assistant:
    return make_assistant(store, shop_searcher)


@pytest.fixture
def client(assistant: Assistant, keys: ApiKeys) -> Iterator[TestClient]:
    with TestClient(create_api(assistant, keys), raise_server_exceptions=False) as http:
        yield http
