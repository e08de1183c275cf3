"""Training rows: the runtime's own prompt, malformed rows reported by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.retrieval.prompt import understanding_messages
from cartagent.tuning.training_data import chat, load_split

from .tiny_model import write_split


def test_rows_become_the_short_prompt_the_understanding_step_sends(tmp_path: Path) -> None:
    file = tmp_path / "train.jsonl"
    row = {"request": "in red", "context": ["running shoes"], "completion": '{"text": "shoes"}'}
    file.write_text(json.dumps(row) + "\n")

    [example] = load_split(file).examples
    pair = chat(example)

    runtime = understanding_messages("in red", ["running shoes"], style="short")
    assert pair["prompt"] == [{"role": m.role, "content": m.content} for m in runtime]
    assert pair["completion"] == [{"role": "assistant", "content": '{"text": "shoes"}'}]


def test_malformed_rows_are_skipped_and_reported_by_line(tmp_path: Path) -> None:
    file = write_split(tmp_path / "train.jsonl", copies=1)
    good = file.read_text()
    file.write_text(
        good
        + "not json\n"
        + json.dumps({"request": "", "completion": "{}"})
        + "\n"
        + json.dumps({"request": "shoes", "completion": '{"sort": "loudest"}'})
        + "\n"
        + json.dumps({"request": "shoes", "context": "x", "completion": "{}"})
        + "\n"
    )

    split = load_split(file)

    assert len(split.examples) == 6
    assert [s.split(": ", 2)[0].rsplit(":", 1)[1] for s in split.skipped] == ["7", "8", "9", "10"]
    assert "not a valid SearchQuery" in split.skipped[2]


def test_a_file_with_nothing_usable_or_no_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="tune data"):
        load_split(tmp_path / "train.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[]\n")
    with pytest.raises(ConfigurationError, match="no usable examples"):
        load_split(bad)


def test_the_split_hash_is_of_the_file_bytes(tmp_path: Path) -> None:
    first = load_split(write_split(tmp_path / "a.jsonl", copies=1))
    again = load_split(write_split(tmp_path / "b.jsonl", copies=1))
    more = load_split(write_split(tmp_path / "c.jsonl", copies=2))

    assert first.sha256 == again.sha256 != more.sha256


def test_a_line_model_is_trained_on_the_line_prompt_and_the_query_line(tmp_path: Path) -> None:
    file = tmp_path / "train.jsonl"
    gold = '{"category": "hoodie", "exclude": [{"field": "color", "value": "light blue"}]}'
    file.write_text(json.dumps({"request": "hoodie not light blue", "completion": gold}) + "\n")

    [example] = load_split(file).examples
    pair = chat(example, "line")

    runtime = understanding_messages("hoodie not light blue", style="line")
    assert pair["prompt"] == [{"role": m.role, "content": m.content} for m in runtime]
    answer = "hoodie | not color=light blue"
    assert pair["completion"] == [{"role": "assistant", "content": answer}]


def test_rules_first_keeps_only_the_requests_the_rule_parser_leaves_words_of(
    tmp_path: Path,
) -> None:
    from cartagent.retrieval.rules import parse
    from cartagent.tuning.training_data import asked, needs_model

    rows = [
        ("red running shoes under $50", {"category": "running shoes"}),
        ("cozy sneakrs for my grandpa", {"category": "sneakers"}),
        ("something warm for a coffee nerd", {"text": "coffee"}),
    ]
    path = tmp_path / "train.jsonl"
    path.write_text(
        "".join(
            json.dumps({"request": r, "context": [], "completion": json.dumps(g)}) + "\n"
            for r, g in rows
        ),
        encoding="utf-8",
    )
    split = load_split(path)
    assert asked(split, rules_first=False) == split
    kept = asked(split, rules_first=True)
    assert (
        [e.request for e in kept.examples]
        == [r for r, _ in rows if parse(r).text]
        == ["cozy sneakrs for my grandpa", "something warm for a coffee nerd"]
    )
    assert all(needs_model(e) for e in kept.examples)
    assert kept.sha256 == split.sha256  # the lineage still names the file it came from


def test_a_patch_model_is_trained_to_write_only_what_the_parsers_line_lacks(
    tmp_path: Path,
) -> None:
    from cartagent.retrieval.rules import parse

    request = "cozy sneakrs for my grandpa under $60"
    gold = {"category": "sneakers", "attributes": {"gender": ["men"]}, "price": {"max": 60}}
    file = tmp_path / "train.jsonl"
    file.write_text(json.dumps({"request": request, "completion": json.dumps(gold)}) + "\n")
    [example] = load_split(file).examples

    pair = chat(example, "patch")

    reading = parse(request)  # it read the category and the price: neither is in the patch
    assert (reading.category, reading.price is not None) == ("sneakers", True)
    runtime = understanding_messages(request, style="patch")
    assert pair["prompt"] == [{"role": m.role, "content": m.content} for m in runtime]
    assert pair["completion"] == [{"role": "assistant", "content": "* | gender=men"}]
