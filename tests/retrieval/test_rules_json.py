"""A request pasted as a search form's JSON is read by its keys."""

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
