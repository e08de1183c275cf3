"""LoRA SFT end to end on a tiny model: adapter, record, seed, resume, optimizers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.tuning.base_model import resolve_base
from cartagent.tuning.sft import train_sft
from cartagent.tuning.training_config import TrainingConfig
from cartagent.tuning.training_data import load_split

from .tiny_model import write_split


def config_for(base: str, **overrides: object) -> TrainingConfig:
    settings = {
        "model.base": base,
        "model.max_length": 384,
        "lora.rank": 4,
        "lora.alpha": 8,
        "sft.batch_size": 4,
        "sft.max_steps": 3,
        "sft.logging_steps": 1,
        "sft.save_steps": 1,
        "dpo.logging_steps": 1,
        **overrides,
    }
    return TrainingConfig().with_overrides(settings)


def adapter_bytes(folder: Path) -> bytes:
    return (folder / "adapter_model.safetensors").read_bytes()


def test_training_writes_an_adapter_and_the_record_of_what_made_it(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))
    dev = load_split(write_split(tmp_path / "dev.jsonl", copies=1))

    result = train_sft(config_for(tiny_base), train, tmp_path / "run", dev=dev, progress=False)

    assert result.steps == 3
    assert [step for step, _ in result.losses] == [1, 2, 3]
    assert result.eval_loss is not None and result.eval_loss > 0
    assert (result.adapter / "adapter_config.json").is_file()
    record = json.loads((result.adapter / "training.json").read_text())
    assert record["method"] == "sft"
    assert record["data"]["train"]["sha256"] == train.sha256
    assert record["config"]["lora"]["rank"] == 4
    assert record["steps"] == 3


def test_the_same_seed_gives_the_same_adapter_and_another_seed_does_not(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))

    first = train_sft(config_for(tiny_base), train, tmp_path / "a", progress=False)
    again = train_sft(config_for(tiny_base), train, tmp_path / "b", progress=False)
    other = train_sft(config_for(tiny_base, seed=1), train, tmp_path / "c", progress=False)

    assert adapter_bytes(first.adapter) == adapter_bytes(again.adapter)
    assert adapter_bytes(first.adapter) != adapter_bytes(other.adapter)


def test_a_second_run_into_the_same_folder_resumes_from_the_last_checkpoint(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))

    first = train_sft(
        config_for(tiny_base, **{"sft.max_steps": 2}), train, tmp_path / "run", progress=False
    )
    resumed = train_sft(
        config_for(tiny_base, **{"sft.max_steps": 4}), train, tmp_path / "run", progress=False
    )

    assert first.resumed_from is None
    assert resumed.resumed_from is not None and resumed.resumed_from.endswith("checkpoint-2")
    assert resumed.steps == 4
    assert [step for step, _ in resumed.losses] == [3, 4]


@pytest.mark.parametrize(("optimizer", "schedule"), [("adam", "constant"), ("adamw", "linear")])
def test_each_optimizer_and_schedule_trains(
    tiny_base: str, tmp_path: Path, optimizer: str, schedule: str
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))
    config = config_for(tiny_base, **{"sft.optimizer": optimizer, "sft.schedule": schedule})

    result = train_sft(config, train, tmp_path / "run", progress=False)

    assert result.steps == 3
    assert all(loss > 0 for _, loss in result.losses)


def test_a_base_model_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such GGUF file"):
        resolve_base(str(tmp_path / "model.gguf"))
    with pytest.raises(ConfigurationError, match="no such folder"):
        resolve_base(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigurationError, match=r"no config\.json"):
        resolve_base(str(tmp_path / "empty"))
    assert resolve_base("smollm2")[1] == "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_the_learning_rate_reaches_either_optimizer(
    tiny_base: str, tmp_path: Path, optimizer: str
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))

    def trained(rate: float) -> bytes:
        settings = {"sft.optimizer": optimizer, "sft.learning_rate": rate}
        run = train_sft(
            config_for(tiny_base, **settings), train, tmp_path / str(rate), progress=False
        )
        return adapter_bytes(run.adapter)

    # Adam once ran at torch's default rate whatever the config said: same bytes for both.
    assert trained(1e-4) != trained(1e-2)


def test_a_finished_adapter_of_the_same_config_and_data_is_reused_not_retrained(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl"))
    first = train_sft(config_for(tiny_base), train, tmp_path / "run", progress=False)
    written = (first.adapter / "adapter_model.safetensors").stat().st_mtime_ns
    record = json.loads((first.adapter / "training.json").read_text())

    again = train_sft(config_for(tiny_base), train, tmp_path / "run", progress=False)
    other = train_sft(
        config_for(tiny_base, **{"sft.learning_rate": 1e-3}),
        train,
        tmp_path / "run",
        progress=False,
    )

    assert (first.reused, again.reused, other.reused) == (False, True, False)
    assert (again.adapter, again.steps, again.losses) == (
        first.adapter,
        first.steps,
        [(first.steps, record["final_loss"])],
    )
    assert record["hardware"] == "cpu"
    assert (other.adapter / "adapter_model.safetensors").stat().st_mtime_ns != written
