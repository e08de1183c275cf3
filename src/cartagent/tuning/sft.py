"""LoRA supervised fine-tuning of the query-understanding model, top to bottom.

``train_sft`` loads the base model, wraps it in a LoRA adapter, trains on the train split's
prompt-completion pairs (loss on the completion only) and writes the adapter with a
``training.json`` that records what made it (on which hardware too). Checkpoints are kept every
``save_steps``; running again into the same folder resumes from the last one, and an adapter
already finished there with the same config and data is used as it is (a run killed in DPO, or
an SFT trained on a GPU elsewhere and copied in, goes on without training it again). The same
seed, data and config give the same adapter.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .base_model import load_base_model
from .training_config import LoraSettings, Optimisation, TrainingConfig
from .training_data import Split, chat

__all__ = [
    "SftResult",
    "last_checkpoint",
    "lora_config",
    "loss_listener",
    "optimizer_choice",
    "train_sft",
    "training_arguments",
]

ADAPTER = "adapter"
CHECKPOINTS = "checkpoints"
RECORD = "training.json"


@dataclass(frozen=True)
class SftResult:
    adapter: Path
    steps: int
    losses: list[tuple[int, float]] = field(default_factory=list)
    eval_loss: float | None = None
    seconds: float = 0.0
    resumed_from: str | None = None
    reused: bool = False


def lora_config(settings: LoraSettings) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=settings.targets,
        task_type="CAUSAL_LM",
    )


def _total_steps(settings: Optimisation, examples: int) -> int:
    if settings.max_steps:
        return settings.max_steps
    per_epoch = math.ceil(examples / (settings.batch_size * settings.gradient_accumulation))
    return max(1, math.ceil(per_epoch * settings.epochs))


def _scheduler(schedule: str) -> str:
    # HF's "constant" ignores warm-up; the config's constant schedule warms up like the others.
    return "constant_with_warmup" if schedule == "constant" else schedule


def training_arguments(
    settings: Optimisation, config: TrainingConfig, out: Path, examples: int
) -> dict[str, Any]:
    """The keyword arguments of TRL's ``SFTConfig`` (also the shape DPO's config takes)."""
    import torch

    total = _total_steps(settings, examples)
    gpu = torch.cuda.is_available()
    return {
        "output_dir": str(out / CHECKPOINTS),
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": _scheduler(settings.schedule),
        "warmup_steps": round(total * settings.warmup_ratio),
        "weight_decay": settings.weight_decay,
        "num_train_epochs": settings.epochs,
        "max_steps": settings.max_steps or -1,
        "per_device_train_batch_size": settings.batch_size,
        "per_device_eval_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation,
        "save_steps": settings.save_steps,
        "save_total_limit": 2,
        "logging_steps": settings.logging_steps,
        # The dev split is scored once, after training (a sweep compares trials at their end).
        "eval_strategy": "no",
        "seed": config.seed,
        "data_seed": config.seed,
        "bf16": gpu,
        "use_cpu": not gpu,
        "report_to": [],
        "dataloader_num_workers": 0,
    }


def optimizer_choice(settings: Optimisation) -> tuple[type[Any], dict[str, Any]] | None:
    """``None`` for AdamW (the trainer's own); plain Adam, whose weight decay is L2, by class."""
    if settings.optimizer == "adamw":
        return None
    if settings.optimizer == "adam":
        import torch

        # The trainer hands a custom optimizer no learning rate: without ``lr`` here, Adam ran
        # at torch's default 1e-3 whatever the config said.
        return torch.optim.Adam, {
            "lr": settings.learning_rate,
            "weight_decay": settings.weight_decay,
        }
    raise ConfigurationError(f"unknown optimizer {settings.optimizer!r}; use 'adam' or 'adamw'")


def loss_listener(
    losses: list[tuple[int, float]],
    on_log: Callable[[int, dict[str, float]], bool | None] | None = None,
) -> Any:
    """A trainer callback that appends ``(step, loss)`` to ``losses`` and passes every log line
    to ``on_log``, stopping the training when it returns True."""
    from transformers import TrainerCallback

    class Listen(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **_: Any) -> None:
            logs = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            if "loss" in logs:
                losses.append((state.global_step, logs["loss"]))
            if on_log is not None and on_log(state.global_step, logs) is True:
                control.should_training_stop = True

    return Listen()


def last_checkpoint(out: Path) -> str | None:
    """The newest ``checkpoint-N`` folder of a run in ``out``, if it has one."""
    folder = out / CHECKPOINTS
    steps = [
        (int(p.name.removeprefix("checkpoint-")), p)
        for p in folder.glob("checkpoint-*")
        if p.is_dir() and p.name.removeprefix("checkpoint-").isdigit()
    ]
    return str(max(steps)[1]) if steps else None


def train_sft(
    config: TrainingConfig,
    train: Split,
    out: str | Path,
    *,
    dev: Split | None = None,
    progress: bool = True,
    on_log: Callable[[int, dict[str, float]], bool | None] | None = None,
    base_cache: Path | None = None,
) -> SftResult:
    """Train a LoRA adapter on ``train``; write it to ``out/adapter`` with its record.

    ``on_log(step, logs)`` sees every log line (``loss`` among them); returning True stops the
    training there (a sweep pruning a bad trial); the adapter is still written. A GGUF base
    is dequantized once into ``base_cache`` (None: every time).
    """
    folder = Path(out)
    finished = _finished(folder / ADAPTER, config, train, dev)
    if finished is not None:
        return finished

    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    settings = config.sft
    base = load_base_model(config.model.base, cache_dir=base_cache)
    losses: list[tuple[int, float]] = []

    style = config.model.prompt_style
    arguments = training_arguments(settings, config, folder, len(train.examples))
    sft_config = SFTConfig(
        **arguments,
        max_length=config.model.max_length,
        completion_only_loss=True,
        packing=False,
        disable_tqdm=not progress,
    )
    trainer = SFTTrainer(
        model=base.model,
        args=sft_config,
        train_dataset=Dataset.from_list([chat(e, style) for e in train.examples]),
        eval_dataset=Dataset.from_list([chat(e, style) for e in dev.examples]) if dev else None,
        processing_class=base.tokenizer,
        peft_config=lora_config(config.lora),
        optimizer_cls_and_kwargs=optimizer_choice(settings),
        callbacks=[loss_listener(losses, on_log)],
    )
    resume = last_checkpoint(folder)
    started = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume)
    seconds = time.perf_counter() - started
    eval_loss = None
    if dev is not None:
        eval_loss = float(trainer.evaluate()["eval_loss"])
    adapter = folder / ADAPTER
    trained: Any = trainer.model
    trained.save_pretrained(str(adapter))
    base.tokenizer.save_pretrained(str(adapter))
    result = SftResult(adapter, trainer.state.global_step, losses, eval_loss, seconds, resume)
    _record(adapter, config, train, dev, result)
    return result


def _hashes(data: Any) -> Any:
    if not isinstance(data, dict):
        return None
    return {name: (part or {}).get("sha256") for name, part in data.items()}


def _finished(
    adapter: Path, config: TrainingConfig, train: Split, dev: Split | None
) -> SftResult | None:
    """The adapter already in ``adapter`` when its record says the same config trained it on
    the same data to the end, else None."""
    try:
        record = json.loads((adapter / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (
        isinstance(record, dict)
        and (adapter / "adapter_config.json").is_file()
        and record.get("config") == config.model_dump(mode="json")
        and _hashes(record.get("data")) == _hashes(_data(train, dev))
        and record.get("steps") == _total_steps(config.sft, len(train.examples))
    ):
        return None
    final = record.get("final_loss")
    steps = int(record["steps"])
    return SftResult(
        adapter,
        steps,
        [(steps, float(final))] if isinstance(final, int | float) else [],
        record.get("eval_loss"),
        float(record.get("seconds") or 0.0),
        reused=True,
    )


def _data(train: Split, dev: Split | None) -> dict[str, Any]:
    return {
        "train": {"path": str(train.path), "sha256": train.sha256, "rows": len(train.examples)},
        "dev": None
        if dev is None
        else {"path": str(dev.path), "sha256": dev.sha256, "rows": len(dev.examples)},
    }


def _hardware() -> str:
    import torch

    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"


def _record(
    adapter: Path, config: TrainingConfig, train: Split, dev: Split | None, result: SftResult
) -> None:
    record = {
        "method": "sft",
        "base_model": config.model.base,
        "config": config.model_dump(mode="json"),
        "data": _data(train, dev),
        "hardware": _hardware(),
        "steps": result.steps,
        "final_loss": result.losses[-1][1] if result.losses else None,
        "eval_loss": result.eval_loss,
        "seconds": round(result.seconds, 1),
        "resumed_from": result.resumed_from,
    }
    (adapter / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
