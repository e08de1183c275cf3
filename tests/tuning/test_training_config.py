"""The training config file: defaults, overrides, and clear errors for what cannot be."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.tuning.training_config import TrainingConfig, load_training_config


def test_no_file_gives_the_documented_defaults() -> None:
    config = load_training_config(None)

    assert config.model.base == "smollm2"
    assert (config.lora.rank, config.lora.alpha) == (16, 32)
    assert (config.sft.optimizer, config.sft.schedule) == ("adamw", "cosine")


def test_a_file_sets_any_section(tmp_path: Path) -> None:
    file = tmp_path / "tune.toml"
    file.write_text(
        'seed = 7\n[lora]\nrank = 4\ntargets = ["q_proj", "v_proj"]\n'
        '[sft]\noptimizer = "adam"\nschedule = "constant"\nlearning_rate = 1e-4\n'
    )

    config = load_training_config(file)

    assert config.seed == 7
    assert config.lora.targets == ["q_proj", "v_proj"]
    assert (config.sft.optimizer, config.sft.schedule, config.sft.learning_rate) == (
        "adam",
        "constant",
        1e-4,
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[sft]\noptimizer = "sgd"\n', "sft.optimizer"),
        ('[sft]\nschedule = "step"\n', "sft.schedule"),
        ("[lora]\nrank = 0\n", "lora.rank"),
        ("[lora]\nrnak = 8\n", "lora.rnak"),
        ("[training]\nx = 1\n", "training"),
        ("[model]\nguided = true\n", "guided = true needs output"),
    ],
)
def test_a_wrong_setting_is_named_in_the_error(tmp_path: Path, text: str, named: str) -> None:
    file = tmp_path / "tune.toml"
    file.write_text(text)

    with pytest.raises(ConfigurationError, match=named.replace(".", r"\.")):
        load_training_config(file)


def test_a_missing_or_broken_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such training config"):
        load_training_config(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[sft\n")
    with pytest.raises(ConfigurationError, match="not valid TOML"):
        load_training_config(broken)


def test_overrides_replace_dotted_keys_and_are_validated() -> None:
    config = TrainingConfig().with_overrides({"sft.learning_rate": 3e-4, "lora.rank": 8})

    assert (config.sft.learning_rate, config.lora.rank) == (3e-4, 8)
    with pytest.raises(ConfigurationError, match=r"unknown setting 'sft\.lr'"):
        config.with_overrides({"sft.lr": 1.0})
    with pytest.raises(ConfigurationError, match=r"sft\.optimizer"):
        config.with_overrides({"sft.optimizer": "lion"})


def test_the_output_and_guidance_choose_the_prompt_style() -> None:
    styles = {
        (output, guided): TrainingConfig()
        .with_overrides({"model.output": output, "model.guided": guided})
        .model.prompt_style
        for output, guided in (("json", False), ("line", False), ("line", True))
    }
    assert styles == {
        ("json", False): "short",
        ("line", False): "line",
        ("line", True): "guided",
    }
    patch = {"model.output": "patch", "model.rules_first": True}
    assert TrainingConfig().with_overrides(patch).model.prompt_style == "patch"
    gaps = {"model.output": "gaps", "model.rules_first": True}
    assert TrainingConfig().with_overrides(gaps).model.prompt_style == "gaps"


def test_a_patch_model_must_be_served_behind_the_parser() -> None:
    for output in ("patch", "gaps"):
        with pytest.raises(ConfigurationError, match="needs rules_first = true"):
            TrainingConfig().with_overrides({"model.output": output})
