"""DPO after SFT: pairs from the SFT model's own wrong answers, one adapter out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.retrieval.prompt import LINE_INSTRUCTION, query_json
from cartagent.retrieval.query_line import query_line
from cartagent.tuning.dpo import preference_pairs, train_dpo
from cartagent.tuning.sft import train_sft
from cartagent.tuning.training_data import Example, load_split

from .test_sft import config_for
from .tiny_model import write_split


def test_dpo_continues_the_sft_adapter_on_its_own_wrong_answers(
    tiny_base: str, tmp_path: Path
) -> None:
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))
    config = config_for(tiny_base, **{"dpo.max_steps": 2, "dpo.batch_size": 2})
    sft = train_sft(config, train, tmp_path / "sft", progress=False)

    result = train_dpo(config, sft.adapter, train.examples, tmp_path / "dpo", progress=False)

    # A random tiny model answers nothing right: every request is a pair.
    assert result.pairs == len(train.examples)
    assert result.steps == 2
    assert result.losses and result.losses[0][1] == pytest.approx(0.693, abs=0.01)
    record = json.loads((result.adapter / "training.json").read_text())
    assert record["method"] == "dpo" and record["sft_adapter"] == str(sft.adapter)
    assert record["data"]["train"]["sha256"] == train.sha256  # the lineage goes on
    assert (record["sft"]["steps"], record["sft"]["hardware"]) == (sft.steps, "cpu")
    saved = json.loads((result.adapter / "adapter_config.json").read_text())
    assert saved["r"] == 4


def test_a_folder_without_an_adapter_is_a_clear_error(tiny_base: str, tmp_path: Path) -> None:
    (tmp_path / "sft").mkdir()
    train = load_split(write_split(tmp_path / "train.jsonl", copies=1))

    with pytest.raises(ConfigurationError, match="not a LoRA adapter folder"):
        train_dpo(config_for(tiny_base), tmp_path / "sft", train.examples, tmp_path / "dpo")


def test_pairs_keep_only_the_wrong_answers_with_the_answer_as_rejected(tmp_path: Path) -> None:
    examples = load_split(write_split(tmp_path / "train.jsonl", copies=1)).examples
    right, wrong, garbled = examples[0], examples[1], examples[2]
    answers = {
        right.request: query_json(right.gold),
        wrong.request: '{"category": "socks"}',
        garbled.request: "",
    }

    def answerer(example: Example) -> str:
        return answers[example.request]

    pairs = preference_pairs(answerer, [right, wrong, garbled], progress=False)

    assert [p.example for p in pairs] == [wrong, garbled]
    assert [p.rejected for p in pairs] == ['{"category": "socks"}', "{}"]
    row = pairs[0].row()
    assert row["chosen"] == [{"role": "assistant", "content": wrong.completion}]
    assert row["rejected"][0]["content"] == '{"category": "socks"}'


def test_line_pairs_judge_and_prefer_query_lines(tmp_path: Path) -> None:
    examples = load_split(write_split(tmp_path / "train.jsonl", copies=1)).examples
    right, wrong, unreadable = examples[0], examples[1], examples[2]
    answers = {
        right.request: query_line(right.gold),
        wrong.request: "socks",
        unreadable.request: '{"category": "socks"}',
    }
    pairs = preference_pairs(
        lambda e: answers[e.request], [right, wrong, unreadable], style="line", progress=False
    )
    assert [p.example for p in pairs] == [wrong, unreadable]
    row = pairs[0].row()
    assert row["chosen"] == [{"role": "assistant", "content": query_line(wrong.gold)}]
    assert row["prompt"][0]["content"] == LINE_INSTRUCTION


def test_patch_pairs_judge_the_patch_not_the_whole_line(tmp_path: Path) -> None:
    examples = load_split(write_split(tmp_path / "train.jsonl", copies=1)).examples
    right, wrong = examples[0], examples[1]
    answers = {right.request: right.answer("patch"), wrong.request: "socks | color:mauve"}
    pairs = preference_pairs(
        lambda e: answers[e.request], [right, wrong], style="patch", progress=False
    )
    assert [p.example for p in pairs] == [wrong]
    assert pairs[0].row()["chosen"][0]["content"] == wrong.answer("patch")
