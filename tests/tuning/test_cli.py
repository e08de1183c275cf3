"""``cartagent tune data`` through click's test runner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cartagent.cli.main import cli

from .conftest import TAU


def test_tune_data_writes_the_splits_and_prints_the_card(tmp_path: Path) -> None:
    out = tmp_path / "data"
    args = ["tune", "data", "--catalog", str(TAU), "--synthetic", "40", "--size", "200"]
    result = CliRunner().invoke(cli, [*args, "--seed", "4", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["examples"] == 200
    assert f"set sha256 {card['set_sha256']}" in result.output
    assert "train 160, dev 20, test 20" in result.output
    assert len((out / "train.jsonl").read_text(encoding="utf-8").splitlines()) == 160


def test_tune_data_reports_bad_input_clearly(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["tune", "data", "--catalog", str(tmp_path / "no")])
    assert missing.exit_code == 1
    assert "does not exist" in missing.output
    zero = CliRunner().invoke(
        cli, ["tune", "data", "--catalog", "none", "--size", "0", "--out", str(tmp_path)]
    )
    assert zero.exit_code == 1
    assert "size must be a positive number" in zero.output
