"""The HTTP API on a real assistant: keys and owners, the turn round trip, and its failures."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import (
    STAGES,
    Assistant,
    Conversation,
    ConversationStore,
    Reply,
)
from cartagent.assistant.specialists import default_specialists
from cartagent.database import create_engine
from cartagent.retrieval.search import Searcher
from cartagent.web import ApiKeys, create_api
from tests import asgi
from tests.asgi import megabytes
from tests.assistant.conftest import SHOP

from .conftest import (
    ALICE,
    BOB,
    MERCHANT,
    BrokenAssistant,
    RacedStore,
    bearer,
    make_assistant,
    new_session,
    say,
)

BLUE_TEES = ["tee-blue-m", "tee-blue-s", "tee-blue-poly"]


def test_health_answers_without_a_key(client: TestClient) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        bearer("not-a-key-of-anyone-at-all"),
        bearer(ALICE[:-1]),
        {"Authorization": f"Basic {ALICE}"},
        {"Authorization": "Bearer"},
    ],
)
def test_a_missing_or_wrong_key_gets_401_with_a_bearer_challenge(
    client: TestClient, headers: dict[str, str]
) -> None:
    for response in (
        client.post("/api/sessions", headers=headers),
        client.get("/api/sessions", headers=headers),
        client.get("/api/sessions/any/messages", headers=headers),
        client.post("/api/sessions/any/messages", json={"text": "hi"}, headers=headers),
    ):
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert "Bearer" in response.json()["detail"]


def test_a_message_round_trip_returns_cards_and_timings_and_is_in_the_history(
    client: TestClient,
) -> None:
    session_id = new_session(client)
    reply = say(client, session_id, "show me t-shirts in blue")
    assert reply.status_code == 200
    body = reply.json()
    assert body["domain"] == "discovery"
    assert [c["variant_id"] for c in body["cards"]] == BLUE_TEES
    assert body["cards"][0] == {
        "id": "tee",
        "title": "T-Shirt",
        "variant_id": "tee-blue-m",
        "options": {"color": "blue", "size": "M", "material": "cotton"},
        "price": "50.88",
        "currency": "USD",
        "available": True,
        "rank": 1,
        "breaks": [],
        "category": "T-Shirts",  # and its picture, where the catalog has none
        "illustration": "garment",
        "image": None,
    }
    assert set(body["timings"]) == {*STAGES, "total"} and body["timings"]["retrieve"] > 0
    assert body["data"]["search"]["request"] == "show me t-shirts in blue"

    picked = say(client, session_id, "the second one").json()
    assert [c["variant_id"] for c in picked["cards"]] == ["tee-blue-s"]

    history = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
    assert history.status_code == 200
    messages = history.json()["messages"]
    assert [(m["role"], m["text"]) for m in messages] == [
        ("user", "show me t-shirts in blue"),
        ("assistant", body["text"]),
        ("user", "the second one"),
        ("assistant", picked["text"]),
    ]
    assert messages[1]["cards"] == body["cards"] and messages[0]["cards"] == []
    assert set(messages[1]["timings"]) == {*STAGES, "total"} and messages[0]["timings"] == {}
    assert all(m["created_at"] and m["domain"] == "discovery" for m in messages)


def test_a_shopper_never_sees_or_touches_another_shoppersnew_session(client: TestClient) -> None:
    mine = new_session(client, ALICE)
    say(client, mine, "show me t-shirts in blue")
    theirs = new_session(client, BOB)
    unknown = client.get("/api/sessions/no-such-session/messages", headers=bearer(BOB))
    assert unknown.status_code == 404

    for response in (
        client.get(f"/api/sessions/{mine}/messages", headers=bearer(BOB)),
        say(client, mine, "the second one", key=BOB),
        client.post(
            f"/api/sessions/{mine}/messages/stream", json={"text": "hi"}, headers=bearer(BOB)
        ),
    ):
        # Exactly what an unknown id gets: nothing says the session exists.
        assert (response.status_code, response.json()) == (404, unknown.json())

    still = client.get(f"/api/sessions/{mine}/messages", headers=bearer(ALICE)).json()
    assert len(still["messages"]) == 2
    listed = {
        key: [s["id"] for s in client.get("/api/sessions", headers=bearer(key)).json()["sessions"]]
        for key in (ALICE, BOB, MERCHANT)
    }
    assert listed == {ALICE: [mine], BOB: [theirs], MERCHANT: []}


def test_sessions_are_listed_most_recently_active_first(client: TestClient) -> None:
    first, second = new_session(client), new_session(client)
    say(client, first, "show me t-shirts")
    listed = client.get("/api/sessions", headers=bearer(ALICE)).json()["sessions"]
    assert [s["id"] for s in listed] == [first, second]
    assert listed[0]["updated_at"] > listed[0]["created_at"]
    one = client.get("/api/sessions", params={"limit": 1}, headers=bearer(ALICE)).json()
    assert [s["id"] for s in one["sessions"]] == [first]


class _RecordingAssistant(Assistant):
    """The real assistant, noting whether each turn was the merchant's."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.merchant_turns: list[bool] = []

    async def turn(self, session_id: str, text: str, *, merchant: bool = False) -> Reply:
        self.merchant_turns.append(merchant)
        return await super().turn(session_id, text, merchant=merchant)


def test_only_merchant_keys_make_merchant_turns(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    assistant = make_assistant(store, shop_searcher, _RecordingAssistant)
    assert isinstance(assistant, _RecordingAssistant)
    with TestClient(create_api(assistant, keys)) as client:
        for key in (ALICE, MERCHANT):
            session_id = new_session(client, key)
            assert say(client, session_id, "show me t-shirts", key=key).status_code == 200
            stream = client.post(
                f"/api/sessions/{session_id}/messages/stream",
                json={"text": "the first one"},
                headers=bearer(key),
            )
            assert stream.status_code == 200
    assert assistant.merchant_turns == [False, False, True, True]


def test_a_body_over_16_kib_gets_413(client: TestClient) -> None:
    session_id = new_session(client)
    declared = say(client, session_id, "x" * (16 * 1024))
    assert declared.status_code == 413 and "16,384 bytes" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(20):
            yield b"y" * 1024
        yield b'"}'

    chunked = client.post(
        f"/api/sessions/{session_id}/messages",
        content=chunks(),
        headers={**bearer(ALICE), "Content-Type": "application/json"},
    )
    assert chunked.status_code == 413
    history = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
    assert history.json()["messages"] == []


def test_a_long_message_under_the_body_limit_gets_the_assistants_clear_refusal(
    client: TestClient,
) -> None:
    reply = say(client, new_session(client), "x" * 5000)
    assert reply.status_code == 200
    assert reply.json()["domain"] is None and "5,000 characters" in reply.json()["text"]


def _message_of(size: int) -> bytes:
    """A message body of exactly ``size`` bytes."""
    body = b'{"text": "' + b"x" * (size - 12) + b'"}'
    assert len(body) == size
    return body


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_of_exactly_16_kib_is_read_and_one_byte_more_is_413(
    client: TestClient, chunked: bool
) -> None:
    session_id = new_session(client)
    headers = {**bearer(ALICE), "Content-Type": "application/json"}
    for size, status in ((16 * 1024, 200), (16 * 1024 + 1, 413)):
        body = _message_of(size)
        content = iter([body[:1000], body[1000:]]) if chunked else body
        response = client.post(
            f"/api/sessions/{session_id}/messages", content=content, headers=headers
        )
        assert response.status_code == status, size
        if status == 200:  # read, and refused by the assistant for its length, not the server
            assert "characters" in response.json()["text"]


@pytest.mark.anyio
@pytest.mark.parametrize("headers", [{}, bearer("not-a-key-of-anyone-at-all")])
async def test_a_big_body_without_a_valid_key_gets_401_and_is_never_read(
    assistant: Assistant, keys: ApiKeys, headers: dict[str, str]
) -> None:
    app = create_api(assistant, keys)
    for path in ("/api/sessions/abc/messages", "/api/sessions/abc/messages/stream"):
        sent = await asgi.request(app, "POST", path, headers=headers, chunks=megabytes(64))
        assert sent.status == 401 and sent.json()["detail"].startswith("a valid API key")
        assert sent.pulled == 0


def test_a_message_with_a_lone_surrogate_gets_422_saying_so_and_the_next_is_answered(
    client: TestClient,
) -> None:
    session_id = new_session(client)
    headers = {**bearer(ALICE), "Content-Type": "application/json"}
    for path in ("messages", "messages/stream"):
        refused = client.post(
            f"/api/sessions/{session_id}/{path}",
            content=b'{"text": "red shirt \\ud800"}',  # valid JSON: a lone surrogate
            headers=headers,
        )
        assert refused.status_code == 422
        assert refused.json()["detail"].startswith("text: must be valid Unicode text")
        assert "lone surrogate" in refused.json()["detail"]
    assert say(client, session_id, "show me t-shirts").status_code == 200
    history = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
    assert history.json()["messages"][0]["text"] == "show me t-shirts"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({}, "text: Field required"),
        ({"text": ""}, "text: must not be empty"),
        ({"text": "   \n"}, "text: must not be empty"),
        ({"text": 3}, "text: Input should be a valid string"),
        ({"text": "hi", "merchant": True}, "merchant: Extra inputs are not permitted"),
    ],
)
def test_a_missing_or_empty_text_gets_422_saying_what_is_wrong(
    client: TestClient, body: dict[str, Any], says: str
) -> None:
    session_id = new_session(client)
    for path in ("messages", "messages/stream"):
        response = client.post(
            f"/api/sessions/{session_id}/{path}", json=body, headers=bearer(ALICE)
        )
        assert response.status_code == 422
        assert response.json()["detail"] == says
        assert response.json()["errors"][0]["loc"][0] == "body"


def test_a_turn_that_loses_a_race_gets_409_and_stores_nothing(
    shop_searcher: Searcher, keys: ApiKeys
) -> None:
    store = RacedStore.open("sqlite://")
    with TestClient(create_api(make_assistant(store, shop_searcher), keys)) as client:
        session_id = new_session(client)
        response = say(client, session_id, "show me t-shirts")
        assert response.status_code == 409
        assert response.json() == {
            "detail": "another message on this session is being answered; retry"
        }
        history = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
        assert history.json()["messages"] == []
    store.close()


def test_an_unexpected_error_gets_a_500_without_a_trace(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    assistant = make_assistant(store, shop_searcher, BrokenAssistant)
    with TestClient(create_api(assistant, keys), raise_server_exceptions=False) as client:
        response = say(client, new_session(client), "show me t-shirts")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal error: the message was not answered"}
    assert "internal detail" not in response.text and "Traceback" not in response.text


class _SlowStore(ConversationStore):
    """Loads a conversation for a turn slowly (or only together with ``others`` more turns),
    so that turns overlap; the ownership check's loads (no history) are not held up."""

    def __init__(self, *args: Any, meet: threading.Barrier | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.meet = meet

    def load(self, session_id: str, *, history: int = 50) -> Conversation:
        if history:
            if self.meet is None:
                time.sleep(0.2)
            else:
                self.meet.wait(timeout=10)
        return super().load(session_id, history=history)


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'chat.db'}"


@pytest.mark.anyio
async def test_a_double_submit_on_one_session_is_answered_twice_in_order(
    tmp_path: Path, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    store = _SlowStore.open(_db(tmp_path))
    app = create_api(make_assistant(store, shop_searcher), keys)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        created = await client.post("/api/sessions", headers=bearer(ALICE))
        session_id = created.json()["id"]
        path = f"/api/sessions/{session_id}/messages"
        responses: list[httpx.Response] = []

        async def say(text: str) -> None:
            responses.append(await client.post(path, json={"text": text}, headers=bearer(ALICE)))

        async with anyio.create_task_group() as group:
            group.start_soon(say, "show me t-shirts")
            group.start_soon(say, "find a coffee mug")
        history = (await client.get(path, headers=bearer(ALICE))).json()["messages"]
    store.close()
    assert [r.status_code for r in responses] == [200, 200]
    assert len(history) == 4
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


@pytest.mark.anyio
async def test_turns_on_different_sessions_run_at_the_same_time(
    tmp_path: Path, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    # Each turn's load waits until the other turn is loading too: serialized turns would fail.
    store = _SlowStore(create_engine(_db(tmp_path)), meet=threading.Barrier(2))
    app = create_api(make_assistant(store, shop_searcher), keys)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        sessions = [
            (await client.post("/api/sessions", headers=bearer(key))).json()["id"]
            for key in (ALICE, BOB)
        ]
        statuses: list[int] = []

        async def say(session_id: str, key: str) -> None:
            response = await client.post(
                f"/api/sessions/{session_id}/messages",
                json={"text": "show me t-shirts"},
                headers=bearer(key),
            )
            statuses.append(response.status_code)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(say, sessions[0], ALICE)
                group.start_soon(say, sessions[1], BOB)
    store.close()
    assert statuses == [200, 200]


def test_the_access_log_names_routes_and_statuses_but_no_text_or_key(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="cartagent.web"):
        session_id = new_session(client)
        say(client, session_id, "my secret wish: a blue t-shirt")
        client.get("/api/sessions", headers=bearer("wrong-key-0123456789abcdef"))
    lines = [r.getMessage() for r in caplog.records if r.name == "cartagent.web"]
    assert lines[0].startswith("POST /api/sessions 201 ") and lines[0].endswith(" shopper")
    assert lines[1].startswith("POST /api/sessions/{session_id}/messages 200 ")
    assert lines[2].startswith("GET /api/sessions 401 ") and lines[2].endswith(" -")
    logged = "\n".join(lines)
    assert "secret wish" not in logged and ALICE not in logged and session_id not in logged


def test_the_openapi_schema_describes_the_replies(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    post = schema["paths"]["/api/sessions/{session_id}/messages"]["post"]
    ok = post["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/ReplyOut"}
    assert {"401", "404", "409", "413", "422"} <= set(post["responses"])
    reply = schema["components"]["schemas"]["ReplyOut"]
    assert set(reply["properties"]) == {"text", "domain", "cards", "data", "timings"}
    stream = schema["paths"]["/api/sessions/{session_id}/messages/stream"]["post"]
    assert "text/event-stream" in stream["responses"]["200"]["content"]
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_a_stored_message_says_its_approval_link_and_whether_it_confirms_an_add() -> None:
    from cartagent.assistant import StoredMessage
    from cartagent.web.schemas import Message

    url = "http://127.0.0.1:9/checkoutnow?token=ORDER1"
    asking = StoredMessage("assistant", f"Approve the payment on PayPal: {url}", payload={
        "order": {"id": "ORDER1", "approve_url": url}
    })  # fmt: skip
    shown = Message.of(asking)
    assert (shown.approve_url, shown.added) == (url, False)
    adding = Message.of(StoredMessage("assistant", "Added 1 x Mug", payload={"added": True}))
    assert (adding.approve_url, adding.added) == (None, True)
    odd = Message.of(StoredMessage("assistant", "x", payload={"order": "not an object"}))
    assert odd.approve_url is None


def test_the_examples_are_made_from_the_catalog_and_each_works(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    from cartagent.assistant.router import EmbeddingRouter, load_examples
    from cartagent.testing import HashingEmbedder

    # The shipped routing examples (the real router's), over a hashing embedder (no model).
    router = EmbeddingRouter(HashingEmbedder(256), load_examples(), k=1)
    specialists = default_specialists(catalog=SHOP)
    assistant = Assistant(router, store, searcher=shop_searcher, specialists=specialists)
    with TestClient(create_api(assistant, keys), raise_server_exceptions=False) as http:
        examples = http.get("/api/examples").json()["examples"]  # no key needed
        assert 4 <= len(examples) <= 6 and examples[0] == "What do you sell?"
        session_id = new_session(http)
        for text in examples:
            reply = say(http, session_id, text).json()
            assert reply["domain"] not in (None, "out_of_scope"), (text, reply["text"])
            if text.startswith(("Show me", "Do you have")) or " under $" in text:
                assert reply["cards"], (text, reply["text"])  # products, not an apology


@pytest.mark.parametrize(
    ("category", "title", "picture"),
    [
        ("T-Shirts", "T-Shirt", "garment"),
        ("Hiking Boots", "Trail boot", "footwear"),
        ("Mugs", "Coffee Mug", "mug"),
        ("", "Gaming Laptop", "laptop"),  # no category: the title decides
        ("Backpacks", "Commuter", "bag"),
        ("Garden", "Rake", "tag"),
    ],
)
def test_each_card_gets_a_picture_that_is_served(
    client: TestClient, category: str, title: str, picture: str
) -> None:
    from cartagent.web.schemas import illustration

    assert illustration(category, title) == picture
    served = client.get(f"/static/icon-{picture}.svg")
    assert served.status_code == 200 and served.headers["content-type"] == "image/svg+xml"
    assert served.text.startswith("<svg")
