"""``cartagent tune data`` through click's test runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli
from tests.conftest import TAU

from .tiny_model import write_split


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
    assert missing.exit_code == 2
    assert f"Invalid value for --catalog: {tmp_path / 'no'} does not exist" in missing.output
    zero = CliRunner().invoke(
        cli, ["tune", "data", "--catalog", "none", "--size", "0", "--out", str(tmp_path)]
    )
    assert zero.exit_code == 1
    assert "size must be a positive number" in zero.output


def _sweep_args(tmp_path: Path) -> list[str]:
    """``tune sweep`` on a small train and dev split written under ``tmp_path``."""
    data = tmp_path / "data"
    data.mkdir()
    write_split(data / "train.jsonl", copies=1)
    write_split(data / "dev.jsonl", copies=1)
    return ["tune", "sweep", "--data", str(data), "--out", str(tmp_path / "sweep")]


def test_tune_sweep_scores_trials_in_workers_through_transformers(
    tiny_base: str, tmp_path: Path
) -> None:
    settings = [f"model.base={tiny_base}", "model.output=line", "model.max_length=384"]
    args = _sweep_args(tmp_path)
    args += [a for pair in settings for a in ("--set", pair)]
    args += ["--lr", "1e-4,1e-3", "--optimizers", "adamw", "--ranks", "4", "--steps", "2"]
    args += ["--dev-requests", "3", "--dev-backend", "transformers", "--workers", "2", "--quiet"]

    result = CliRunner().invoke(cli, args)

    assert result.exit_code == 0, result.output
    assert result.output.count("complete: train_seconds") == 2
    summary = json.loads((tmp_path / "sweep" / "sweep.json").read_text(encoding="utf-8"))
    assert all(t["metrics"]["fallback_rate"] == 1.0 for t in summary["trials"])
    assert (tmp_path / "sweep" / "report.md").is_file()


def test_tune_sweep_refuses_a_backend_that_cannot_score_the_style(
    tiny_base: str, tmp_path: Path
) -> None:
    args = _sweep_args(tmp_path)
    args += ["--set", f"model.base={tiny_base}", "--set", "model.output=json"]

    result = CliRunner().invoke(cli, [*args, "--dev-backend", "transformers", "--quiet"])

    assert result.exit_code == 1
    assert "answers in JSON, so score it with llama.cpp" in result.output
    assert not (tmp_path / "sweep" / "trials").exists()


def test_tune_sweep_left_to_choose_compares_what_it_cannot_score_on_dev_loss(
    tiny_base: str, tmp_path: Path
) -> None:
    args = _sweep_args(tmp_path)
    args += ["--set", f"model.base={tiny_base}", "--set", "model.output=json"]
    args += ["--lr", "1e-3", "--optimizers", "adamw", "--ranks", "4", "--steps", "1"]

    result = CliRunner().invoke(cli, [*args, "--quiet"])  # --dev-backend auto

    assert result.exit_code == 0, result.output
    assert "dev requests not scored" in result.output
    summary = json.loads((tmp_path / "sweep" / "sweep.json").read_text(encoding="utf-8"))
    assert [sorted(t["metrics"]) for t in summary["trials"]] == [["eval_loss", "train_seconds"]]


def test_tune_export_writes_the_card_beside_the_gguf_where_model_tuned_reads_it(
    tiny_adapter: Path, tmp_path: Path
) -> None:
    adapter = tiny_adapter
    target = tmp_path / "mine.gguf"

    result = CliRunner().invoke(cli, ["tune", "export", str(adapter), "--out", str(target)])

    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "mine.json").read_text(encoding="utf-8"))
    assert card["gguf"] == "mine.gguf" and card["method"] == "sft"
    assert (
        card["config"]["model"]
        == json.loads((adapter / "training.json").read_text(encoding="utf-8"))["config"]["model"]
    )


def test_tune_train_keeps_a_dequantized_base_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    seen: dict[str, object] = {}

    def train_sft(config: object, train: object, out: Path, **options: object) -> object:
        seen.update(options)
        return SimpleNamespace(
            reused=False, steps=1, seconds=0.0, losses=[(1, 0.5)], eval_loss=None, adapter=out
        )

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("cartagent.tuning.sft.train_sft", train_sft)
    data = tmp_path / "data"
    data.mkdir()
    write_split(data / "train.jsonl", copies=1)
    write_split(data / "dev.jsonl", copies=1)
    args = ["tune", "train", "--data", str(data), "--out", str(tmp_path / "run"), "--no-dpo"]
    result = CliRunner().invoke(cli, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    assert seen["base_cache"] == tmp_path / "xdg" / "cartagent" / "cache" / "base-models"


def test_tune_data_adds_the_shipped_teacher_rows_in_their_products_splits(tmp_path: Path) -> None:
    shipped = Path(__file__).parents[2] / "data" / "teacher" / "qwen2.5-coder-1.5b-seed1.jsonl"
    out = tmp_path / "data"
    args = ["tune", "data", "--catalog", str(TAU), "--synthetic", "40", "--size", "200"]
    result = CliRunner().invoke(
        cli, [*args, "--teacher", str(shipped), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    (teacher,) = card["teacher"]
    assert teacher["name"] == shipped.name
    assert 250 <= teacher["kept"] <= 286  # a few may repeat a templated request
    assert card["examples"] == 200 + teacher["kept"]
    products: dict[str, set[str]] = {}
    for split in ("train", "dev", "test"):
        rows = [json.loads(line) for line in (out / f"{split}.jsonl").read_text().splitlines()]
        assert any(r["family"].startswith("teacher-") for r in rows), split
        products[split] = {r["product_id"] for r in rows} - {None}
    assert not products["train"] & (products["dev"] | products["test"])
    assert not products["dev"] & products["test"]
    missing = CliRunner().invoke(cli, [*args, "--teacher", str(tmp_path / "no.jsonl")])
    assert missing.exit_code == 1
    assert "cannot read the teacher rows" in missing.output
