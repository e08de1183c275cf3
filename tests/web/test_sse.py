"""Replies as Server-Sent Events: the framing, the order of events, errors and disconnects."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from cartagent.assistant import STAGES, ConversationStore, Domain, Reply, UnknownSession
from cartagent.retrieval.search import Searcher
from cartagent.web import ApiKeys, create_api
from cartagent.web.sse import KEEPALIVE, frame, reply_events, text_deltas

from .conftest import ALICE, BrokenAssistant, RacedStore, bearer, make_assistant, new_session, say


def parse(stream: str) -> list[tuple[str, Any]]:
    """``(event, data)`` for each event of an SSE body; comments are skipped."""
    events = []
    for block in stream.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        assert set(fields) == {"event", "data"}, block
        events.append((fields["event"], orjson.loads(fields["data"])))
    return events


def _stream(client: TestClient, session_id: str, text: str) -> list[tuple[str, Any]]:
    response = client.post(
        f"/api/sessions/{session_id}/messages/stream", json={"text": text}, headers=bearer(ALICE)
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse(response.text)


def test_a_streamed_reply_is_the_domain_then_deltas_then_cards_then_done(
    client: TestClient,
) -> None:
    session_id = new_session(client)
    events = _stream(client, session_id, "show me t-shirts in blue")
    names = [name for name, _ in events]
    deltas = names.count("delta")
    assert deltas > 1
    assert names == ["domain"] + ["delta"] * deltas + ["card"] * 3 + ["done"]
    assert events[0][1] == {"domain": "discovery"}

    history = client.get(f"/api/sessions/{session_id}/messages", headers=bearer(ALICE))
    stored = history.json()["messages"][-1]
    assert "".join(data["text"] for name, data in events if name == "delta") == stored["text"]
    assert [data for name, data in events if name == "card"] == stored["cards"]
    done = events[-1][1]
    assert done["domain"] == "discovery" and set(done["timings"]) == {*STAGES, "total"}
    assert done["data"]["search"]["request"] == "show me t-shirts in blue"


def test_a_streamed_reply_continues_the_conversation_like_a_posted_one(
    client: TestClient,
) -> None:
    session_id = new_session(client)
    say(client, session_id, "show me t-shirts in blue")
    events = _stream(client, session_id, "the second one")
    assert [d["variant_id"] for name, d in events if name == "card"] == ["tee-blue-s"]


def test_a_refused_input_streams_its_answer_with_no_domain(client: TestClient) -> None:
    events = _stream(client, new_session(client), "x" * 3000)
    assert events[0] == ("domain", {"domain": None})
    assert "3,000 characters" in "".join(d["text"] for name, d in events if name == "delta")
    assert events[-1][0] == "done" and "card" not in [name for name, _ in events]


def test_a_turn_that_loses_a_race_streams_one_error_event(
    shop_searcher: Searcher, keys: ApiKeys
) -> None:
    store = RacedStore.open("sqlite://")
    with TestClient(create_api(make_assistant(store, shop_searcher), keys)) as client:
        events = _stream(client, new_session(client), "show me t-shirts")
    store.close()
    assert events == [
        (
            "error",
            {"status": 409, "detail": "another message on this session is being answered; retry"},
        )
    ]


@given(st.text())
def test_deltas_join_back_to_exactly_the_text(text: str) -> None:
    pieces = text_deltas(text)
    assert "".join(pieces) == text and all(pieces)


def test_deltas_are_words_with_their_spacing() -> None:
    assert text_deltas("  Found 2:\n1. Mug  ") == ["  Found ", "2:\n", "1. ", "Mug  "]


def test_an_event_is_one_data_line_even_for_text_with_newlines() -> None:
    assert frame("delta", {"text": "a\nb\r\n"}) == b'event: delta\ndata: {"text":"a\\nb\\r\\n"}\n\n'


async def _collect(events: Any) -> list[bytes]:
    return [chunk async for chunk in events]


@pytest.mark.anyio
async def test_keep_alive_comments_flow_while_the_turn_runs() -> None:
    async def slow_turn() -> Reply:
        await asyncio.sleep(0.2)
        return Reply("Hi.", Domain.OUT_OF_SCOPE, timings={"total": 1.0})

    chunks = await _collect(reply_events(slow_turn(), keepalive=0.02))
    assert chunks[0] == KEEPALIVE and chunks.count(KEEPALIVE) >= 2
    assert [name for name, _ in parse(b"".join(chunks).decode())] == ["domain", "delta", "done"]


@pytest.mark.anyio
async def test_a_client_that_goes_away_cancels_the_turn() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def endless_turn() -> Reply:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("not reached")

    events = reply_events(endless_turn(), keepalive=0.01)
    assert await anext(events) == KEEPALIVE and started.is_set()
    await events.aclose()
    await asyncio.wait_for(cancelled.wait(), timeout=5)


@pytest.mark.anyio
async def test_an_unknown_session_streams_a_404_error_event() -> None:
    async def gone() -> Reply:
        raise UnknownSession("deleted meanwhile")

    chunks = await _collect(reply_events(gone()))
    assert parse(b"".join(chunks).decode()) == [
        ("error", {"status": 404, "detail": "no such session"})
    ]


def test_an_unexpected_failure_streams_a_500_without_detail(
    store: ConversationStore, shop_searcher: Searcher, keys: ApiKeys
) -> None:
    assistant = make_assistant(store, shop_searcher, BrokenAssistant)
    with TestClient(create_api(assistant, keys)) as client:
        response = client.post(
            f"/api/sessions/{new_session(client)}/messages/stream",
            json={"text": "show me t-shirts"},
            headers=bearer(ALICE),
        )
    assert parse(response.text) == [
        ("error", {"status": 500, "detail": "internal error: the message was not answered"})
    ]
    assert "internal detail" not in response.text
