"""DPO after SFT: the SFT model's own wrong answers (rejected) against gold (chosen).

``preference_pairs`` asks the SFT model (greedy, the runtime's short prompt) to understand train
requests and keeps those it gets wrong: through llama.cpp with the GGUF LoRA and the JSON
grammar when the base is a packaged GGUF (:func:`gguf_answerer`: the answers it will really
give, at a fraction of the cost), else through transformers. ``train_dpo`` continues training
the SFT adapter on those pairs, with the frozen SFT model (base + adapter, merged) as the
reference, so the result is still one LoRA adapter on the original base model.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..errors import ConfigurationError
from ..retrieval import PromptStyle, UnrepairableOutput, answers_in_line, parse_query_line, repair
from .base_model import load_base_model
from .sft import ADAPTER, RECORD, last_checkpoint, loss_listener, training_arguments
from .training_config import TrainingConfig
from .training_data import Example, prompt_messages

__all__ = [
    "Answerer",
    "DpoResult",
    "Pair",
    "generate_answer",
    "gguf_answerer",
    "preference_pairs",
    "train_dpo",
]

Answerer = Callable[[Example], str]
"""Gives the SFT model's answer (completion text) to an example's request."""

MAX_NEW_TOKENS = 160


@dataclass(frozen=True)
class Pair:
    example: Example
    rejected: str
    style: PromptStyle = "short"

    def row(self) -> dict[str, Any]:
        """TRL's conversational preference form."""
        return {
            "prompt": prompt_messages(self.example.request, self.example.context, self.style),
            "chosen": [{"role": "assistant", "content": self.example.answer(self.style)}],
            "rejected": [{"role": "assistant", "content": self.rejected}],
        }


@dataclass(frozen=True)
class DpoResult:
    adapter: Path
    pairs: int
    steps: int
    losses: list[tuple[int, float]]
    seconds: float


def generate_answer(
    model: Any, tokenizer: Any, example: Example, style: PromptStyle = "short"
) -> str:
    """The model's greedy answer to ``example``'s prompt (the completion text only)."""
    import torch

    ids = tokenizer.apply_chat_template(
        prompt_messages(example.request, example.context, style),
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    with torch.no_grad():
        out = model.generate(
            **ids,
            max_new_tokens=MAX_NEW_TOKENS,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
    text: str = tokenizer.decode(out[0][ids["input_ids"].shape[1] :], skip_special_tokens=True)
    return text.strip()


def gguf_answerer(sft_adapter: Path, base: str, style: PromptStyle = "short") -> Answerer:
    """The SFT adapter served as it will be (:func:`~cartagent.tuning.export.served_model`):
    grammar-constrained JSON (``short``) or a free query line (``line``, ``guided``, ``patch``)."""
    import asyncio

    from ..retrieval import RESPONSE_FORMAT, understanding_messages
    from .export import served_model

    model = served_model(sft_adapter, base, style)

    schema = None if answers_in_line(style) else RESPONSE_FORMAT

    def answer(example: Example) -> str:
        messages = understanding_messages(example.request, example.context, style=style)
        completion = asyncio.run(model.complete(messages, response_format=schema))
        return (completion.message.content or "").strip()

    return answer


def _is_right(answer: str, example: Example, style: PromptStyle) -> bool:
    try:
        if answers_in_line(style):
            return parse_query_line(answer) == parse_query_line(example.answer(style))
        query, _ = repair(answer, example.request)
    except (UnrepairableOutput, ValueError):
        return False
    return query == example.gold


def preference_pairs(
    answerer: Answerer,
    examples: Iterable[Example],
    *,
    style: PromptStyle = "short",
    progress: bool = True,
) -> list[Pair]:
    """A pair for every example the model answers wrongly (unparseable or not the gold)."""
    pairs = []
    empty = "*" if answers_in_line(style) else "{}"
    for example in tqdm(list(examples), desc="asking the SFT model", disable=not progress):
        answer = answerer(example)
        if not _is_right(answer, example, style) and answer != example.answer(style):
            pairs.append(Pair(example, answer or empty, style))
    return pairs


def train_dpo(
    config: TrainingConfig,
    sft_adapter: str | Path,
    examples: Iterable[Example],
    out: str | Path,
    *,
    answerer: Answerer | None = None,
    progress: bool = True,
    base_cache: Path | None = None,
) -> DpoResult:
    """Collect pairs with the SFT adapter, then DPO-train it; write ``out/adapter``.

    ``answerer`` gives the SFT model's answers (default: transformers' greedy generation);
    ``base_cache`` keeps a dequantized GGUF base (see :func:`~.sft.train_sft`).
    """
    from datasets import Dataset
    from peft import PeftModel
    from trl import DPOConfig, DPOTrainer

    style = config.model.prompt_style
    adapter_in = Path(sft_adapter)
    if not (adapter_in / "adapter_config.json").is_file():
        raise ConfigurationError(
            f"{adapter_in}: not a LoRA adapter folder (no adapter_config.json)"
        )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    base = load_base_model(config.model.base, cache_dir=base_cache)
    reference = PeftModel.from_pretrained(copy.deepcopy(base.model), str(adapter_in))
    reference = reference.merge_and_unload()
    policy = PeftModel.from_pretrained(base.model, str(adapter_in), is_trainable=True)
    if answerer is None:
        policy.eval()

        def answerer(example: Example) -> str:
            return generate_answer(policy, base.tokenizer, example, style)

    pairs = preference_pairs(answerer, examples, style=style, progress=progress)
    if not pairs:
        raise ConfigurationError("the SFT model answered every request right: no DPO pairs")
    losses: list[tuple[int, float]] = []

    settings = config.dpo
    arguments = training_arguments(settings, config, folder, len(pairs))
    optimizers: tuple[Any, Any] = (None, None)
    if settings.optimizer == "adam":
        import torch

        trainable = [p for p in policy.parameters() if p.requires_grad]
        adam = torch.optim.Adam(
            trainable, lr=settings.learning_rate, weight_decay=settings.weight_decay
        )
        optimizers = (adam, None)
    trainer = DPOTrainer(
        model=policy,
        ref_model=reference,
        args=DPOConfig(
            **arguments,
            beta=settings.beta,
            max_length=config.model.max_length,
            disable_tqdm=not progress,
        ),
        train_dataset=Dataset.from_list([p.row() for p in pairs]),
        processing_class=base.tokenizer,
        optimizers=optimizers,
        callbacks=[loss_listener(losses)],
    )
    started = time.perf_counter()
    trainer.train(resume_from_checkpoint=last_checkpoint(folder))
    seconds = time.perf_counter() - started
    adapter = folder / ADAPTER
    trained: Any = trainer.model
    trained.save_pretrained(str(adapter))
    base.tokenizer.save_pretrained(str(adapter))
    result = DpoResult(adapter, len(pairs), trainer.state.global_step, losses, seconds)
    record = {
        "method": "dpo",
        "base_model": config.model.base,
        "sft_adapter": str(adapter_in),
        "config": config.model_dump(mode="json"),
        **sft_lineage(adapter_in),
        "pairs": len(pairs),
        "steps": result.steps,
        "final_loss": losses[-1][1] if losses else None,
        "seconds": round(seconds, 1),
    }
    (adapter / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return result


def sft_lineage(sft_adapter: Path) -> dict[str, Any]:
    """What a DPO adapter inherits from the SFT run it continues: the data it was trained on
    (files and SHA-256) and that run's figures, so its card and registry entry keep the lineage."""
    try:
        sft = json.loads((sft_adapter / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    figures = {k: sft.get(k) for k in ("steps", "final_loss", "eval_loss", "seconds", "hardware")}
    return {"data": sft.get("data"), "sft": figures}
