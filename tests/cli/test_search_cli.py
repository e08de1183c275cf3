"""``cartagent search`` / ``cartagent understand`` through click's test runner."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from cartagent.cli.search import locate_catalog, search, understand
from cartagent.retrieval.embeddings import EMBEDDERS
from cartagent.testing import HashingEmbedder
from tests.conftest import TAU


def test_search_json_over_the_default_catalog() -> None:
    result = CliRunner().invoke(search, ["red t-shirt under 50", "--json", "--k", "3"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["query"]["category"] == "t-shirt"
    assert data["query"]["options"] == {"color": ["red"]}
    assert [h["title"] for h in data["hits"]] == ["T-Shirt"]
    hit = data["hits"][0]
    assert hit["variant"]["options"]["color"] == "red"
    assert float(hit["price"]) <= 50
    assert {"understand", "lexical", "filter", "total"} <= set(data["timings"])


def test_search_prints_a_readable_list() -> None:
    result = CliRunner().invoke(search, ["hiking boots size 10", "--catalog", str(TAU)])
    assert result.exit_code == 0, result.output
    assert "understood:" in result.output
    assert " 1. Hiking Boots" in result.output
    assert "size=10" in result.output


def test_search_with_no_match_says_so() -> None:
    result = CliRunner().invoke(search, ["red t-shirt under 5"])
    assert result.exit_code == 0, result.output
    assert "no products match" in result.output


def test_search_a_products_file_and_report_bad_rows(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "title": "Blue Mug", "variants": [{"id": "a1", "price": "9.50"}]},
        {"id": "b"},  # no title: reported, skipped
    ]
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(search, ["mug", "--catalog", str(catalog), "--json"])
    assert result.exit_code == 0, result.output
    assert any("skipped" in line and ":2:" in line for line in result.stderr.splitlines())
    data = json.loads(result.stdout)
    assert [h["id"] for h in data["hits"]] == ["a"]


def test_search_refuses_a_missing_catalog(tmp_path: Path) -> None:
    result = CliRunner().invoke(search, ["mug", "--catalog", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_locating_the_default_catalog() -> None:
    assert (locate_catalog(None) / "products.json").is_file()
    assert locate_catalog(str(TAU)) == TAU


def test_understand_one_request() -> None:
    result = CliRunner().invoke(understand, ["women's jeans size 30 above 114"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["category"] == "jeans"
    assert data["options"]["size"] == ["30"]
    assert float(data["price"]["min"]) == 114


def test_understand_reads_stdin_line_by_line() -> None:
    lines = ["red t-shirt under 20", "", "cheapest laptop", "ジーンズ \x00 <script>"]
    result = CliRunner().invoke(understand, [], input="\n".join(lines) + "\n")
    assert result.exit_code == 0, result.output
    out = [orjson.loads(line) for line in result.output.splitlines()]
    assert len(out) == len(lines)
    assert out[0]["options"] == {"color": ["red"]}
    assert out[1]["text"] == "" and out[1]["category"] is None
    assert out[2]["sort"] == "price_asc"


def test_understand_with_context_and_model_choice() -> None:
    result = CliRunner().invoke(
        understand, ["in blue instead", "--context", "red backpack", "--model", "rules"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["options"]["color"] == ["blue"]
    bad = CliRunner().invoke(understand, ["x", "--model", "gpt"])
    assert bad.exit_code == 2


def test_search_is_hybrid_by_default_and_lexical_on_request() -> None:
    hybrid = CliRunner().invoke(search, ["red t-shirt", "--json", "--k", "3"])
    lexical = CliRunner().invoke(search, ["red t-shirt", "--json", "--mode", "lexical"])
    assert hybrid.exit_code == 0 and lexical.exit_code == 0, hybrid.output + lexical.output
    assert {"embed", "dense", "fuse"} <= set(json.loads(hybrid.stdout)["timings"])
    assert "embed" not in json.loads(lexical.stdout)["timings"]
    bad = CliRunner().invoke(search, ["mug", "--mode", "semantic"])
    assert bad.exit_code == 2 and "semantic" in bad.output


def test_no_match_shows_the_nearest_and_what_each_breaks() -> None:
    request = "a blue t-shirt under $50, not polyester"
    shown = CliRunner().invoke(search, [request, "--mode", "lexical"])
    assert shown.exit_code == 0, shown.output
    assert "no products match. nearest:" in shown.output
    assert "T-Shirt" in shown.output and "0.88 USD over your limit of 50 USD" in shown.output
    as_json = CliRunner().invoke(search, [request, "--mode", "lexical", "--json"])
    data = json.loads(as_json.stdout)
    assert data["hits"] == []
    [near] = data["near_misses"]
    assert (near["title"], near["price"]) == ("T-Shirt", "50.88")
    assert near["breaks"] == ["0.88 USD over your limit of 50 USD"]


def test_near_misses_after_a_few_matches_are_numbered_on() -> None:
    shown = CliRunner().invoke(search, ["espresso machine", "--mode", "lexical"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[1].startswith(" 1. Espresso Machine")
    assert "close, but not a match:" in lines
    assert any(
        line.startswith(" 2. Coffee Maker") and "not an espresso machine" in line for line in lines
    )


def test_mode_does_not_go_with_a_built_index(tmp_path: Path) -> None:
    result = CliRunner().invoke(search, ["mug", "--index", str(tmp_path), "--mode", "dense"])
    assert result.exit_code == 2 and "drop --mode" in result.output
    chosen = CliRunner().invoke(search, ["mug", "--index", str(tmp_path), "--embedder", "minilm"])
    assert chosen.exit_code == 2 and "--embedder" in chosen.output


def test_the_embedder_comes_from_the_option_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []

    def hashing(options: object) -> HashingEmbedder:
        made.append("hashing")
        return HashingEmbedder(dim=48)

    monkeypatch.setitem(EMBEDDERS, "hashing", hashing)
    chosen = CliRunner().invoke(search, ["red t-shirt", "--json", "--embedder", "hashing"])
    assert chosen.exit_code == 0, chosen.output
    assert "embed" in json.loads(chosen.stdout)["timings"] and made == ["hashing"]
    from_env = CliRunner().invoke(
        search, ["red t-shirt", "--json"], env={"CARTAGENT_EMBEDDER": "hashing"}
    )
    assert from_env.exit_code == 0, from_env.output
    assert made == ["hashing", "hashing"]
    bad = CliRunner().invoke(search, ["red t-shirt", "--embedder", "word2vec"])
    assert bad.exit_code == 2 and "word2vec" in bad.output
