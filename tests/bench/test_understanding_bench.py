from __future__ import annotations

import orjson
import pytest

from cartagent.bench.understanding import measure_model, measure_models, render_models
from cartagent.llm import Message
from cartagent.retrieval.rules import parse
from cartagent.retrieval.understanding import ModelUnderstander
from cartagent.testing import FunctionModel, HashingEmbedder

REQUESTS = ["red running shoes under $80", "black hoodie size M", "garbage please"]


def answer(messages: list[Message], _tools: object) -> Message:
    request = messages[-1].content or ""
    if "garbage" in request:
        return Message("assistant", "I cannot help with that")
    return Message("assistant", orjson.dumps(parse(request).model_dump(mode="json")).decode())


def test_rules_are_measured_request_by_request() -> None:
    result = measure_model("rules", parse, REQUESTS)
    assert result.requests == 3
    assert result.sources == {"rules": 3}
    assert 0 < result.p50_ms <= result.p95_ms
    assert result.cpu_s_per_1000 >= 0


def test_a_model_reports_which_path_answered_each_request() -> None:
    with ModelUnderstander(FunctionModel(answer)) as understander:
        result = measure_model("scripted", understander, REQUESTS)
    assert result.sources == {"model": 2, "rules": 1}


def test_a_cache_pass_answers_every_repeat_from_the_cache() -> None:
    calls: list[int] = []

    def counted(messages: list[Message], tools: object) -> Message:
        calls.append(1)
        return answer(messages, tools)

    results = measure_models(
        {"rules": lambda: parse, "scripted": lambda: ModelUnderstander(FunctionModel(counted))},
        REQUESTS,
        cache_embedder=HashingEmbedder(),
    )
    assert [r.model for r in results] == ["rules", "scripted", "scripted (cache hit)"]
    hits = results[2]
    # the unusable reply falls back to the rules and is not cached; the two good ones are
    assert hits.sources == {"cache": 2, "rules": 1}
    table = render_models(results)
    assert "scripted (cache hit)" in table
    assert "cache 2, rules 1" in table


def test_no_requests_is_an_error() -> None:
    with pytest.raises(ValueError, match="no requests"):
        measure_model("rules", parse, [])
