"""The labelled query-understanding set, and how the rule parser scores on it."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema

from cartagent.evals.scoring import f1, field_scores
from cartagent.retrieval import SearchQuery, parse_rules, search_query_json_schema

# Measured when the set was written: micro F1 0.968, 69 of 80 exactly right. The floors leave
# room for vocabulary changes, not for regressions in the rules themselves.
F1_FLOOR = 0.90
EXACT_FLOOR = 60


def load_cases() -> list[dict[str, Any]]:
    path = resources.files("cartagent.evals") / "data" / "understanding.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_set_is_well_formed() -> None:
    cases = load_cases()
    assert len(cases) >= 60
    schema = search_query_json_schema()
    kinds = {"follow-up": 0, "non-ascii": 0, "huge": 0, "negation": 0}
    for case in cases:
        assert set(case) == {"request", "context", "expected"}, case
        assert isinstance(case["request"], str)
        assert isinstance(case["context"], list)
        assert all(isinstance(turn, str) for turn in case["context"])
        SearchQuery.model_validate(case["expected"])
        jsonschema.validate(case["expected"], schema)
        kinds["follow-up"] += bool(case["context"])
        kinds["non-ascii"] += not case["request"].isascii()
        kinds["huge"] += len(case["request"]) > 2000
        kinds["negation"] += bool(case["expected"].get("exclude"))
    assert min(kinds.values()) >= 1, kinds
    assert kinds["follow-up"] >= 10 and kinds["negation"] >= 10


def test_rule_parser_field_f1_on_the_set() -> None:
    tp = fp = fn = exact = 0
    misses: list[str] = []
    cases = load_cases()
    for case in cases:
        expected = SearchQuery.model_validate(case["expected"])
        got = parse_rules(case["request"], context=case["context"])
        a, b, c = field_scores(expected, got)
        tp, fp, fn = tp + a, fp + b, fn + c
        if b == c == 0:
            exact += 1
        else:
            misses.append(case["request"][:60])
    score = f1(tp, fp, fn)
    print(
        f"rules on understanding.jsonl: micro F1 {score:.3f} (tp={tp} fp={fp} fn={fn}), "
        f"exact {exact}/{len(cases)}"
    )
    assert score >= F1_FLOOR, misses
    assert exact >= EXACT_FLOOR, misses
