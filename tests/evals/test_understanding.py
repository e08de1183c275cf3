"""Scoring a query-understanding model on the labelled set and against WebShop shoppers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from cartagent.cli.main import cli
from cartagent.evals.understanding import load_cases, query_words, score_set, webshop_agreement
from cartagent.retrieval import SearchQuery, parse_rules


def test_the_rule_parser_scores_on_the_labelled_set() -> None:
    report = score_set(parse_rules, load_cases())
    assert report.cases == len(load_cases()) >= 60
    assert report.valid_json == report.cases
    assert report.f1 >= 0.90
    assert report.exact >= 60
    assert 0 < report.price_exact <= report.price_cases


def test_a_model_that_understands_nothing_scores_nothing() -> None:
    def blank(request: str, **_: Any) -> SearchQuery:
        return SearchQuery()

    cases = load_cases()
    report = score_set(blank, cases)
    assert report.tp == 0 and report.fp == 0 and report.fn > 0
    assert report.f1 == 0.0
    assert report.price_exact == 0
    empty = sum(
        1
        for case in cases
        if not SearchQuery.model_validate(case["expected"]).price
        and score_set(blank, [case]).fn == 0
    )
    assert report.exact == empty


def test_webshop_agreement_takes_the_closest_human_query(tmp_path: Path) -> None:
    path = tmp_path / "goals.json"
    path.write_text(
        json.dumps(
            {"i want a red mug": ["ceramic cup", "red mug"], "i need blue socks": ["wool socks"]}
        )
    )

    def echo(request: str, **_: Any) -> SearchQuery:
        return SearchQuery(text=request.removeprefix("i want a ").removeprefix("i need "))

    report = webshop_agreement(echo, path)
    # "red mug" matches exactly (F1 1.0); {"blue", "socks"} vs {"wool", "socks"}: F1 0.5.
    assert report.instructions == 2
    assert report.mean_f1 == 0.75
    assert query_words(SearchQuery(text="the red", options={"size": ["XL"]})) == {"red", "xl"}


def test_the_eval_command_prints_both_tables(tmp_path: Path) -> None:
    path = tmp_path / "goals.json"
    path.write_text(json.dumps({"cheap red t-shirt under 20 dollars": ["red t-shirt"]}))
    result = CliRunner().invoke(cli, ["eval", "understanding", "--webshop", str(path)])
    assert result.exit_code == 0, result.output
    cases = len(load_cases())
    assert "valid JSON" in result.output and f"{cases}/{cases}" in result.output
    assert "token F1" in result.output
