"""Scoring an adapter on dev requests, through transformers where llama.cpp is not installed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.llm.model import Message, ToolSpec
from cartagent.tuning.dev_eval import DevEvaluator, cases_from, default_backend
from cartagent.tuning.training_data import load_split

from .tiny_model import write_split


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


def test_answers_decoded_in_a_batch_are_those_decoded_alone(
    tiny_base: str, tiny_adapter: Path
) -> None:
    from cartagent.tuning.transformers_model import TransformersModel

    asked = [
        [Message("user", "mouse")],
        [Message("user", "a cheap backpack under 40 dollars with a padded laptop sleeve")],
        [Message("system", "Answer in one line."), Message("user", "red running shoes")],
    ]
    with TransformersModel.with_adapter(tiny_adapter, tiny_base, max_tokens=8) as alone:
        expected = [asyncio.run(alone.complete(m)) for m in asked]
    with TransformersModel.with_adapter(tiny_adapter, tiny_base, max_tokens=8) as model:
        model.prefetch(asked + asked[:1], batch_size=2)  # padded rows; a repeat asked once
        model.model = None  # what is prefetched needs no decoding
        batched = [asyncio.run(model.complete(m)) for m in asked]
        with pytest.raises(RuntimeError, match="closed"):
            asyncio.run(model.complete([Message("user", "not prefetched")]))

    assert [b.message.content for b in batched] == [e.message.content for e in expected]
    assert [b.usage for b in batched] == [e.usage for e in expected]
    with pytest.raises(ConfigurationError, match="batch_size"):
        model.prefetch(asked, batch_size=0)


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

    # Decoded in batches: no per-request latency to report.
    assert set(metrics) == {"f1", "exact", "price_exact", "valid_json", "fallback_rate"}
    # A random tiny model writes no usable line: the rule parser answers every request.
    assert metrics["fallback_rate"] == 1.0
    assert 0.5 < metrics["f1"] <= 1.0


def test_the_transformers_backend_decodes_every_dev_request_in_batches(
    tiny_base: str, tiny_adapter: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cartagent.tuning.transformers_model import TransformersModel

    batches: list[int] = []
    alone: list[object] = []
    batch = TransformersModel._generate_batch
    lone = TransformersModel._generate

    def counted_batch(self: TransformersModel, conversations: list[list[Message]]) -> object:
        batches.append(len(conversations))
        return batch(self, conversations)

    def counted_lone(self: TransformersModel, messages: list[Message]) -> object:
        if self._prefetched.get(tuple((m.role, m.content or "") for m in messages)) is None:
            alone.append(messages)
        return lone(self, messages)

    monkeypatch.setattr(TransformersModel, "_generate_batch", counted_batch)
    monkeypatch.setattr(TransformersModel, "_generate", counted_lone)
    dev = load_split(write_split(tmp_path / "dev.jsonl", copies=1))
    cases = tuple(cases_from(dev.examples))
    DevEvaluator(cases, tiny_base, "line", backend="transformers", batch_size=4)(tiny_adapter)

    assert batches == [4, len(cases) - 4]  # every request asked, none of them alone
    assert alone == []


def test_backends_are_checked_before_any_trial_runs(tiny_base: str) -> None:
    with pytest.raises(ConfigurationError, match="batch_size must be at least 1"):
        DevEvaluator((), tiny_base, "line", backend="transformers", batch_size=0)
    with pytest.raises(ConfigurationError, match="unknown dev backend 'vllm'"):
        DevEvaluator((), tiny_base, "line", backend="vllm")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="answers in JSON"):
        DevEvaluator((), tiny_base, "short", backend="transformers")
    with pytest.raises(ConfigurationError, match="use the transformers backend"):
        DevEvaluator((), tiny_base, "line", backend="llama-cpp")
    assert default_backend(tiny_base) == "transformers"  # not a packaged base
