"""Requests said otherwise than in words of wanting: a search form's JSON, a complaint."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.retrieval.rules import parse


def test_a_flat_json_request_is_read_by_its_keys() -> None:
    query = parse('{"query": "kettle", "max_price": 100}')
    assert query.category == "kettle"
    assert query.price is not None and query.price.max == Decimal("100")
    shirt = parse('{"q": "red shirt", "min_price": 20}')
    assert shirt.price is not None and shirt.price.min == Decimal("20")


@pytest.mark.parametrize(
    "text",
    ['{"query": "kettle"', '{"a": [1, 2]}', '{"max_price": true}', "{}", '{"n": null}'],
)
def test_other_json_or_broken_json_is_no_constraint(text: str) -> None:
    assert parse(text).price is None


@pytest.mark.parametrize(
    ("text", "excluded"),
    [
        ("natural rubber yoga mats please. PVC ones give me a headache", "pvc"),
        ("wool makes me itch, a cotton sweater", "wool"),
        ("i hate polyester, a cotton t-shirt", "polyester"),
    ],
)
def test_a_complaint_about_a_value_rules_it_out(text: str, excluded: str) -> None:
    assert excluded in {e.value for e in parse(text).exclude}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mancuernas de 55 a 75 libras", {"weight": ["55-75 lb"]}),
        ("Hanteln 5 bis 25 kg", {"weight": ["5-25 kg"]}),
    ],
)
def test_a_range_in_another_language_is_one_value(
    text: str, expected: dict[str, list[str]]
) -> None:
    assert parse(text).options == expected


def test_a_count_of_something_else_is_no_price() -> None:
    laptop = parse("15 inch laptop, at least a 512 ssd")
    assert laptop.price is None and "512" in laptop.text
    assert parse("a puzzle, up to 500 pieces").price is None
    assert parse("a puzzle, up to 50").price is not None


def test_a_bike_helmet_in_spanish_is_a_helmet_not_a_bike() -> None:
    assert parse("casco de bici talla L").category == "cycling helmet"


def test_no_cue_drops_a_word_that_names_products() -> None:
    assert parse("a ceiling fan").text == "ceiling fan"
