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
        ("a black laptop, not a fan of silver", "silver"),
    ],
)
def test_a_complaint_about_a_value_rules_it_out(text: str, excluded: str) -> None:
    assert excluded in {e.value for e in parse(text).exclude}
