"""``cartagent bench assistant``: the statistics, and one real run over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartagent.bench.assistant import (
    APPROVE,
    SCRIPT,
    Conversation,
    RunResult,
    TurnRecord,
    render,
    run_model,
)
from tests.web.test_serve import PRODUCTS


def _turn(total: float, search: bool, understand: float = 0.0, retrieve: float = 0.0) -> TurnRecord:
    timings = {"route": 1.0, "understand": understand, "retrieve": retrieve, "total": total}
    return TurnRecord("c", "t", "discovery" if search else "orders", timings, total + 1, search)


def test_the_script_is_over_a_hundred_turns_mostly_searches_with_a_merchant() -> None:
    turns = [t for c in SCRIPT for t in c.turns if t != APPROVE]
    assert len(turns) >= 100
    assert any(c.merchant for c in SCRIPT)
    assert sum(c.turns.count(APPROVE) for c in SCRIPT) == 2


def test_latency_throughput_and_the_retrieval_share() -> None:
    turns = [_turn(10.0 * n, True, understand=n, retrieve=n) for n in range(1, 11)]
    turns += [_turn(5.0, False), _turn(7.0, False)]
    turns.append(TurnRecord("c", "broken", None, {}, 3.0, False, error="500"))
    result = RunResult("rules", 8, turns, wall_s=2.0, peak_rss_bytes=512 * 2**20)
    assert result.latency(True) == (55.0, pytest.approx(95.5))
    assert result.latency(False) == (6.0, pytest.approx(6.9))
    assert result.turns_per_s == 6.5
    # understand + retrieve = 2n ms of 10n ms in every search turn
    assert result.retrieval_share() == pytest.approx(0.2)
    out = result.to_json()
    assert (out["turns"], out["search_turns"], out["peak_rss_mb"]) == (13, 10, 512.0)
    assert out["errors"] == [{"text": "broken", "error": "500"}]
    table = render([result])
    assert "| rules | 8        | 13    | 55.0 / 95.5" in table
    assert "20%" in table and "512 MB" in table
    assert table.splitlines()[2].endswith("| 1      | -       | -             |")
    assert (out["start_s"], out["first_turn_ms"]) == (None, None)
    started = RunResult("tuned", 1, turns, wall_s=2.0, start_s=6.234, first_turn_ms=812.04)
    assert started.to_json()["start_s"] == 6.23
    assert started.to_json()["first_turn_ms"] == 812.0
    assert render([started]).splitlines()[2].endswith("| 6.2     | 812.0         |")


@pytest.mark.slow
def test_a_real_serve_is_measured_over_http(tmp_path: Path) -> None:
    catalog = tmp_path / "products.json"
    catalog.write_text(json.dumps(PRODUCTS))
    script = (
        Conversation(
            "buy",
            ("a t-shirt", "in red", "add the first one to my cart", "checkout", APPROVE, "yes"),
        ),
        Conversation("ask", ("how much is shipping?", "a coffee mug")),
    )
    results = run_model("rules", [1, 2], script=script, catalog=str(catalog))
    assert [(r.model, r.concurrency) for r in results] == [("rules", 1), ("rules", 2)]
    for result in results:
        assert result.errors() == []
        assert len(result.turns) == 7 and result.wall_s > 0
        routed = [(t.text, t.domain) for t in result.turns]
        assert sum(t.search for t in result.turns) == 3, routed
        paid = next(t for t in result.turns if t.text == "yes")
        assert paid.answer.startswith("Paid.") and paid.timings["tools"] > 0
        assert result.peak_rss_bytes is not None and result.peak_rss_bytes > 50 * 2**20
        assert result.start_s is not None and result.start_s > 0
        assert result.first_turn_ms is not None and result.first_turn_ms > 0
    assert results[0].first_turn_ms == results[1].first_turn_ms  # once per server
