"""The one file that says how a model is tuned: base model, LoRA, SFT and DPO settings.

A TOML file with the sections ``[model]``, ``[lora]``, ``[sft]`` and ``[dpo]``; every key has a
default, unknown keys and values out of range are a :class:`ConfigurationError` naming them.

::

    [model]
    base = "smollm2"          # a packaged GGUF name, a local Hugging Face folder, or a model name
    output = "line"           # what the model answers: json (a SearchQuery) | line (query line)
                              # | patch (only what the parser's line lacks: shows that line,
                              # needs rules_first)
    guided = true             # show the rule parser's line in the prompt (line output only)
    rules_first = true        # asked only where the rule parser leaves words unplaced: trained
                              # on those requests alone, and served behind the parser
    [lora]
    rank = 16
    [sft]
    learning_rate = 2e-4
    optimizer = "adamw"       # adam | adamw
    schedule = "cosine"       # cosine | linear | constant (each after warmup_ratio of the steps)
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigurationError, field_problems
from ..llm.adapters import TrainedStyle, trained_prompt_style

__all__ = [
    "DpoSettings",
    "LoraSettings",
    "ModelSettings",
    "Optimisation",
    "SftSettings",
    "TrainingConfig",
    "load_training_config",
]

Optimizer = Literal["adam", "adamw"]
Schedule = Literal["cosine", "linear", "constant"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Output = Literal["json", "line", "patch", "gaps"]


class ModelSettings(_Section):
    base: str = Field(default="smollm2", min_length=1)
    max_length: int = Field(default=512, ge=32, le=8192)
    output: Output = "json"
    guided: bool = False
    rules_first: bool = False

    @model_validator(mode="after")
    def _outputs_fit(self) -> ModelSettings:
        if self.guided and self.output != "line":
            raise ValueError('guided = true needs output = "line" (the parser\'s line is shown)')
        if self.output in ("patch", "gaps") and not self.rules_first:
            raise ValueError(
                f'output = "{self.output}" needs rules_first = true (it fills parser gaps)'
            )
        return self

    @property
    def prompt_style(self) -> TrainedStyle:
        """The understanding prompt the model is trained and served with."""
        return trained_prompt_style(self.output, self.guided)


class LoraSettings(_Section):
    rank: int = Field(default=16, ge=1, le=512)
    alpha: int = Field(default=32, ge=1, le=1024)
    dropout: float = Field(default=0.05, ge=0, lt=1)
    targets: str | list[str] = "all-linear"


class Optimisation(_Section):
    """What SFT and DPO share: the optimizer, its schedule and the batch."""

    learning_rate: float = Field(gt=0, le=1)
    optimizer: Optimizer = "adamw"
    schedule: Schedule = "cosine"
    warmup_ratio: float = Field(default=0.1, ge=0, lt=1)
    weight_decay: float = Field(default=0.0, ge=0, le=1)
    epochs: float = Field(default=1.0, gt=0, le=100)
    max_steps: int = Field(default=0, ge=0, description="Stop after this many steps; 0: epochs.")
    batch_size: int = Field(default=8, ge=1, le=1024)
    gradient_accumulation: int = Field(default=1, ge=1, le=1024)
    save_steps: int = Field(default=50, ge=1)
    logging_steps: int = Field(default=5, ge=1)


class SftSettings(Optimisation):
    learning_rate: float = Field(default=2e-4, gt=0, le=1)


class DpoSettings(Optimisation):
    learning_rate: float = Field(default=5e-5, gt=0, le=1)
    beta: float = Field(default=0.1, gt=0, le=10)
    requests: int = Field(
        default=300, ge=1, le=100_000, description="Train requests the SFT model answers for pairs."
    )
    batch_size: int = Field(default=4, ge=1, le=1024)


class TrainingConfig(_Section):
    model: ModelSettings = ModelSettings()
    lora: LoraSettings = LoraSettings()
    sft: SftSettings = SftSettings()
    dpo: DpoSettings = DpoSettings()
    seed: int = Field(default=0, ge=0)

    def with_overrides(self, overrides: dict[str, Any]) -> TrainingConfig:
        """A copy with dotted keys replaced, e.g. ``{"sft.learning_rate": 1e-4}``."""
        data = self.model_dump()
        for dotted, value in overrides.items():
            *path, key = dotted.split(".")
            node = data
            for part in path:
                if not isinstance(node.get(part), dict):
                    raise ConfigurationError(f"unknown setting {dotted!r}")
                node = node[part]
            if key not in node:
                raise ConfigurationError(f"unknown setting {dotted!r}")
            node[key] = value
        return _validated(data, "overrides")


def _validated(data: Any, source: str) -> TrainingConfig:
    try:
        return TrainingConfig.model_validate(data)
    except ValidationError as error:
        found = field_problems(error, whole="(top)")
        problems = "; ".join(f"{where}: {message}" for where, message in found)
        raise ConfigurationError(f"{source}: {problems}") from None


def load_training_config(path: str | Path | None) -> TrainingConfig:
    """The config in the TOML file at ``path`` (defaults for ``None``)."""
    if path is None:
        return TrainingConfig()
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"{file}: no such training config") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{file}: not valid TOML: {error}") from None
    return _validated(data, str(file))
