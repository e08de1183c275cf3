"""Scoring an adapter on dev requests, through transformers where llama.cpp is not installed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.llm.model import Message, ToolSpec
from cartagent.tuning.dev_eval import DevEvaluator, cases_from, default_backend
from cartagent.tuning.sft import train_sft
from cartagent.tuning.training_data import load_split

from .test_sft import config_for
from .tiny_model import tiny_base, write_split

__all__ = ["tiny_base"]


@pytest.fixture(scope="module")
def tiny_adapter(tiny_base: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("adapter")
    train = load_split(write_split(folder / "train.jsonl", copies=1))
    return train_sft(config_for(tiny_base), train, folder / "run", progress=False).adapter


def test_the_transformers_model_answers_within_its_token_bound(
    tiny_base: str, tiny_adapter: Path
) -> None:
    from cartagent.tuning.transformers_model import TransformersModel

    with TransformersModel.with_adapter(tiny_adapter, tiny_base, max_tokens=5) as model:
        reply = asyncio.run(model.complete([Message("user", "red running shoes")]))
        again = asyncio.run(model.complete([Message("user", "red running shoes")]))

    assert reply.usage is not None and 0 < reply.usage.output_tokens <= 5
    assert reply.usage.input_tokens > 3  # the chat template wraps the request
    assert reply.message.content == again.message.content  # greedy
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(model.complete([Message("user", "red running shoes")]))


def test_the_transformers_model_refuses_what_it_cannot_constrain(
    tiny_base: str, tiny_adapter: Path
) -> None:
    from cartagent.tuning.transformers_model import TransformersModel

    with TransformersModel.with_adapter(tiny_adapter, tiny_base) as model:
        asking = [Message("user", "shoes")]
        with pytest.raises(ConfigurationError, match="no JSON grammar"):
            asyncio.run(model.complete(asking, response_format={"type": "json_object"}))
        with pytest.raises(ConfigurationError, match="no tool calling"):
            asyncio.run(model.complete(asking, tools=[ToolSpec("t", "d", {})]))


def test_a_folder_without_an_adapter_is_a_clear_error(tiny_base: str, tmp_path: Path) -> None:
    from cartagent.tuning.transformers_model import TransformersModel

    with pytest.raises(ConfigurationError, match="not a PEFT LoRA adapter folder"):
        TransformersModel.with_adapter(tmp_path, tiny_base)


def test_the_transformers_backend_scores_an_adapter_on_every_dev_metric(
    tiny_base: str, tiny_adapter: Path, tmp_path: Path
) -> None:
    dev = load_split(write_split(tmp_path / "dev.jsonl", copies=1))
    evaluate = DevEvaluator(
        tuple(cases_from(dev.examples)), tiny_base, "line", backend="transformers"
    )

    metrics = evaluate(tiny_adapter)

    assert set(metrics) == {
        "f1", "exact", "price_exact", "valid_json", "fallback_rate", "p50_ms", "p95_ms"
    }  # fmt: skip
    # A random tiny model writes no usable line: the rule parser answers every request.
    assert metrics["fallback_rate"] == 1.0
    assert 0.5 < metrics["f1"] <= 1.0
    assert 0 < metrics["p50_ms"] <= metrics["p95_ms"]


def test_backends_are_checked_before_any_trial_runs(tiny_base: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown dev backend 'vllm'"):
        DevEvaluator((), tiny_base, "line", backend="vllm")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="answers in JSON"):
        DevEvaluator((), tiny_base, "short", backend="transformers")
    with pytest.raises(ConfigurationError, match="use the transformers backend"):
        DevEvaluator((), tiny_base, "line", backend="llama-cpp")
    assert default_backend(tiny_base) == "transformers"  # not a packaged base
