"""One reading of a turn: each part read once, shared by the router and the specialist."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from cartagent.assistant import Assistant, Conversation, ConversationStore, TurnContext
from cartagent.assistant import reading as reading_module
from cartagent.assistant.reading import TurnReading
from cartagent.assistant.router import RouteContext, rule_route
from cartagent.retrieval.search import Searcher
from tests.assistant.test_assistant import _assistant

pytest.importorskip("numpy")
pytestmark = pytest.mark.anyio


def _counting(monkeypatch: pytest.MonkeyPatch, calls: Counter[str], name: str) -> None:
    real: Callable[..., Any] = getattr(reading_module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(reading_module, name, counted)


def test_each_part_is_read_when_first_asked_for_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[str] = Counter()
    for name in ("find_reference", "find_fact_question", "small_talk"):
        _counting(monkeypatch, calls, name)
    reading = TurnReading("is the second one in stock?")
    assert calls == Counter()  # nothing read before it is asked for
    assert reading.reference is not None and reading.reference.rank == 2
    assert reading.fact is not None and reading.fact.kind == "stock"
    assert reading.reference is reading.reference and reading.small_talk is None
    assert calls == Counter({"find_reference": 1, "find_fact_question": 1, "small_talk": 1})
    # Without a conversation or a searcher, what needs them finds nothing.
    assert reading.option_pick is None and reading.about_shown is None
    with pytest.raises(ValueError, match="without a searcher"):
        reading.search()


def test_the_router_reads_the_reading_it_is_given_and_makes_one_for_other_words() -> None:
    given = TurnReading("the second one")
    assert RouteContext(reading=given).read("the second one") is given
    assert RouteContext(reading=given).read("the first one") is not given
    assert rule_route("the second one", RouteContext(has_results=True, reading=given))
    assert "reference" in given.__dict__  # the rules' reading, kept for the specialist


def test_a_turn_context_reuses_the_routers_reading_unless_its_words_change() -> None:
    conversation = Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))
    shared = TurnReading("something similar to a hoodie", conversation)
    turn = TurnContext("something similar to a hoodie", conversation, shared_reading=shared)
    assert turn.reading is shared
    searched = replace(turn, text="a hoodie")  # the specialist searches for the rest
    assert searched.reading is not shared and searched.reading.text == "a hoodie"
    assert TurnContext("hi", conversation).reading.small_talk is not None


async def test_a_turn_is_read_once_by_the_router_and_the_specialist(
    memory_store: ConversationStore, shop_searcher: Searcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant: Assistant = _assistant(memory_store, shop_searcher)
    sid = assistant.open_session()
    await assistant.turn(sid, "show me t-shirts in blue")
    calls: Counter[str] = Counter()
    _counting(monkeypatch, calls, "find_reference")
    picked = await assistant.turn(sid, "the second one")
    assert [c.variant_id for c in picked.cards] == ["tee-blue-s"]
    # The rule router found the reference, and the discovery specialist used that reading.
    assert calls["find_reference"] == 1
