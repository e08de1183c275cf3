"""Field-level scoring of parsed queries."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.evals.scoring import f1, facts, field_scores, micro_f1, precision, recall
from cartagent.retrieval import Exclusion, PriceRange, SearchQuery

JEANS = SearchQuery(
    text="ignored words",
    category="jeans",
    attributes={"gender": ["women"], "material": ["denim"]},
    options={"size": ["30"]},
    price=PriceRange(min=Decimal(114)),
)


def test_facts_cover_every_scored_field() -> None:
    query = SearchQuery(
        text="free text is not scored",
        category="Jeans",
        brand="Levi's",
        attributes={"material": ["denim", "cotton"]},
        options={"size": ["30"]},
        price=PriceRange(min=Decimal("20.00"), max=Decimal(40), currency="eur"),
        sort="price_asc",
        min_rating=4,
        available_only=True,
        exclude=[Exclusion(field="color", value="Red"), Exclusion(value="hood")],
    )
    assert facts(query) == {
        ("category", "jeans"),
        ("brand", "levi's"),
        ("attribute", "material", "denim"),
        ("attribute", "material", "cotton"),
        ("option", "size", "30"),
        ("price_min", "20", "EUR"),
        ("price_max", "40", "EUR"),
        ("sort", "price_asc"),
        ("min_rating", "4"),
        ("available_only",),
        ("exclude", "color", "red"),
        ("exclude", "", "hood"),
    }


def test_defaults_are_no_facts() -> None:
    assert facts(SearchQuery(text="anything")) == set()


def test_identical_queries_score_perfectly() -> None:
    tp, fp, fn = field_scores(JEANS, JEANS)
    assert (tp, fp, fn) == (5, 0, 0)
    assert f1(tp, fp, fn) == 1.0


def test_text_is_ignored_and_case_spacing_and_number_form_are_normalised() -> None:
    got = SearchQuery(
        text="completely different",
        category=" JEANS ",
        attributes={"Gender": ["Women"], "material": ["DENIM"]},
        options={"size": ["30"]},
        price=PriceRange(min=Decimal("114.00")),
    )
    assert field_scores(JEANS, got) == (5, 0, 0)


def test_missing_and_extra_facts() -> None:
    got = SearchQuery(
        category="jeans",
        attributes={"material": ["denim"]},
        options={"size": ["32"]},
        price=PriceRange(max=Decimal(114)),
        sort="rating",
    )
    # right: category, material. wrong: size 32, price max, sort. missed: gender, size 30, min.
    assert field_scores(JEANS, got) == (2, 3, 3)
    assert f1(2, 3, 3) == pytest.approx(0.4)


def test_currency_and_exclusion_field_matter() -> None:
    usd = SearchQuery(price=PriceRange(max=Decimal(50)))
    eur = SearchQuery(price=PriceRange(max=Decimal(50), currency="EUR"))
    assert field_scores(usd, eur) == (0, 1, 1)
    typed = SearchQuery(exclude=[Exclusion(field="material", value="leather")])
    untyped = SearchQuery(exclude=[Exclusion(value="leather")])
    assert field_scores(typed, untyped) == (0, 1, 1)


def test_empty_against_empty_is_perfect() -> None:
    assert field_scores(SearchQuery(), SearchQuery(text="x")) == (0, 0, 0)
    assert f1(0, 0, 0) == 1.0
    assert field_scores(SearchQuery(), JEANS) == (0, 5, 0)
    assert f1(0, 5, 0) == 0.0


def test_precision_recall_and_micro_f1() -> None:
    assert precision(3, 1) == 0.75
    assert recall(3, 1, 3) == 0.5
    assert precision(0, 0) == 1.0 and recall(0, 0, 0) == 1.0
    assert f1(3, 1, 3) == pytest.approx(2 * 0.75 * 0.5 / 1.25)
    assert micro_f1([(1, 0, 0), (1, 1, 1)]) == pytest.approx(f1(2, 1, 1))
    assert micro_f1([]) == 1.0
