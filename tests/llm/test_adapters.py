"""The shipped LoRA adapter: found in the package, refused clearly when it is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli
from cartagent.errors import ConfigurationError
from cartagent.llm import adapters
from cartagent.llm.adapters import card_prompt_style, shipped_adapter


def test_the_search_adapter_ships_with_its_card() -> None:
    adapter = shipped_adapter()

    assert adapter.base == "smollm2"
    assert adapter.path.read_bytes()[:4] == b"GGUF"
    assert adapter.card["base_model"] == "smollm2"
    assert adapter.card["gguf_sha256"]
    assert adapter.card["data"]["train"]["sha256"]


def test_an_unknown_or_missing_adapter_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigurationError, match="no shipped adapter 'nope'"):
        shipped_adapter("nope")
    monkeypatch.setattr(adapters.resources, "files", lambda package: tmp_path)
    with pytest.raises(ConfigurationError, match="make adapter"):
        shipped_adapter()
    (tmp_path / "search-smollm2.gguf").write_bytes(b"GGUF")
    (tmp_path / "search-smollm2.json").write_text("{not json")
    with pytest.raises(ConfigurationError, match="unreadable adapter card"):
        shipped_adapter()
    (tmp_path / "search-smollm2.json").write_text(json.dumps({"base_model": "smollm2"}))
    assert shipped_adapter().card == {"base_model": "smollm2"}


def test_model_tuned_with_a_missing_adapter_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARTAGENT_SEARCH_ADAPTER", str(tmp_path / "missing.gguf"))

    result = CliRunner().invoke(cli, ["understand", "--model", "tuned", "red shoes"])

    assert result.exit_code != 0
    assert "no LoRA adapter file at" in result.output


def test_the_config_that_rebuilds_it_is_valid_and_names_its_base() -> None:
    pytest.importorskip("pydantic")
    from cartagent.tuning.training_config import load_training_config

    folder = Path(adapters.__file__).parent
    config = load_training_config(folder / "search-smollm2.toml")

    assert config.model.base == adapters.SHIPPED_ADAPTERS["search-smollm2"]


def test_the_shipped_adapter_writes_what_the_rule_parsers_line_misses() -> None:
    assert shipped_adapter("search-smollm2").prompt_style == "gaps"


def test_a_card_names_the_prompt_its_adapter_was_trained_on() -> None:
    def card(**model: object) -> dict[str, object]:
        return {"config": {"model": model}}

    assert card_prompt_style(card(output="json")) == "short"
    assert card_prompt_style(card(output="line")) == "line"
    assert card_prompt_style(card(output="line", guided=True)) == "guided"
    assert card_prompt_style(card(output="patch", rules_first=True)) == "patch"
    assert card_prompt_style(card(output="gaps", rules_first=True)) == "gaps"
    assert card_prompt_style({}) == "short"
