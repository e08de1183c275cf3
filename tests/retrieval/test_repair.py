"""``repair``: a SearchQuery out of a small model's imperfect JSON, with every fix reported."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cartagent.errors import CartagentError
from cartagent.retrieval.output_repair import UnrepairableOutput, repair
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery


def _repaired(text: str, request: str = "") -> tuple[dict[str, Any], list[str]]:
    query, notes = repair(text, request)
    data = query.model_dump(mode="json", exclude_defaults=True)
    if query.price is not None:  # with its currency, even the default one
        data["price"] = query.price.model_dump(mode="json", exclude_none=True)
    return data, notes


def test_json_in_code_fences_with_chatter_is_read() -> None:
    text = 'Sure! Here it is:\n```json\n{"category": "jeans", "options": {"size": ["30"]}}\n```'
    data, notes = _repaired(text)
    assert data == {"category": "jeans", "options": {"size": ["30"]}}
    assert notes == ["text around the JSON object ignored"]


def test_trailing_commas_are_tolerated() -> None:
    data, notes = _repaired('{"category": "mug", "options": {"color": ["red",],},}')
    assert data == {"category": "mug", "options": {"color": ["red"]}}
    assert notes == ["trailing comma removed"]


def test_braces_in_chatter_before_the_object_are_skipped() -> None:
    data, _ = _repaired('I think {this} is it: {"category": "lamp"}')
    assert data == {"category": "lamp"}


def test_output_cut_off_mid_object_keeps_only_whole_elements() -> None:
    text = '{"category": "jeans", "options": {"size": ["30"]}, "price": {"max": 5'
    data, notes = _repaired(text)
    assert data == {"category": "jeans", "options": {"size": ["30"]}}
    assert "closed JSON that was cut off" in notes


def test_python_literals_are_read() -> None:
    data, notes = _repaired("{'category': 'dress', 'available_only': True, 'brand': None}")
    assert data == {"category": "dress", "available_only": True}
    assert "read a Python literal instead of JSON" in notes


def test_unknown_keys_are_dropped_and_recorded() -> None:
    data, notes = _repaired('{"category": "mug", "mood": "happy"}')
    assert data == {"category": "mug"}
    assert "dropped unknown key 'mood'" in notes


def test_scalars_where_lists_belong_become_lists() -> None:
    data, notes = _repaired(
        '{"options": {"size": 30, "color": "red"}, "attributes": {"fit": "slim"}}'
    )
    assert data == {"options": {"size": ["30"], "color": ["red"]}, "attributes": {"fit": ["slim"]}}
    assert "options.size: a single value made a list" in notes


def test_colour_and_size_at_the_top_level_move_into_options() -> None:
    data, notes = _repaired('{"category": "shirt", "colour": "red", "sizes": ["M", "L"]}')
    assert data == {"category": "shirt", "options": {"color": ["red"], "size": ["M", "L"]}}
    assert "moved top-level 'colour' into options" in notes


def test_keys_in_the_wrong_table_are_moved_by_convention() -> None:
    data, _ = _repaired('{"attributes": {"color": ["red"]}, "options": {"material": ["wool"]}}')
    assert data == {"attributes": {"material": ["wool"]}, "options": {"color": ["red"]}}


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        ('{"max": "$50"}', {"max": 50, "currency": "USD"}),
        ('{"max": "50 dollars"}', {"max": 50, "currency": "USD"}),
        ('{"max": "€40"}', {"max": 40, "currency": "EUR"}),
        ('{"max": "1,200"}', {"max": 1200, "currency": "USD"}),
        ('{"max": "2k"}', {"max": 2000, "currency": "USD"}),
        ('{"max": 49.99, "currency": "gbp"}', {"max": 49.99, "currency": "GBP"}),
        ('{"low": 10, "high": 20}', {"min": 10, "max": 20, "currency": "USD"}),
        ('"$20-$40"', {"min": 20, "max": 40, "currency": "USD"}),
        ('"between 100 and 150 euros"', {"min": 100, "max": 150, "currency": "EUR"}),
        ("[20, 40]", {"min": 20, "max": 40, "currency": "USD"}),
        ('"$30"', {"max": 30, "currency": "USD"}),
        ('{"amount": 25}', {"max": 25, "currency": "USD"}),
    ],
)
def test_price_shapes_are_coerced(price: str, expected: dict[str, Any]) -> None:
    data, _ = _repaired(f'{{"category": "x", "price": {price}}}')
    assert data["price"] == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ('"max_price": 50', {"max": 50, "currency": "USD"}),
        ('"price_max": "$50", "price_min": 10', {"min": 10, "max": 50, "currency": "USD"}),
        ('"min_price": 20, "currency": "EUR"', {"min": 20, "currency": "EUR"}),
        ('"budget": "40 bucks"', {"max": 40, "currency": "USD"}),
    ],
)
def test_top_level_price_aliases_become_bounds(fields: str, expected: dict[str, Any]) -> None:
    data, notes = _repaired(f'{{"category": "x", {fields}}}')
    assert data["price"] == expected
    assert any(note.startswith("read '") and "'price." in note for note in notes)


def test_a_minimum_above_the_maximum_is_swapped_and_recorded() -> None:
    data, notes = _repaired('{"price": {"min": 20, "max": 10}}')
    assert data["price"] == {"min": 10, "max": 20, "currency": "USD"}
    assert "price min 20 was above max 10: swapped" in notes


def test_a_bare_price_is_a_maximum_unless_the_request_states_it_as_a_minimum() -> None:
    assert _repaired('{"price": 114}', "jeans under 114")[0]["price"] == {
        "max": 114,
        "currency": "USD",
    }
    data, notes = _repaired('{"price": 114}', "jeans priced above 114")
    assert data["price"] == {"min": 114, "currency": "USD"}
    assert "read a single price as the minimum the request states" in notes


def test_prices_without_a_usable_number_are_dropped() -> None:
    for price in ('"cheap"', "-5", '{"max": "a lot"}', "1e400", "true"):
        data, notes = _repaired(f'{{"category": "x", "price": {price}}}')
        assert "price" not in data, price
        assert any("price" in note for note in notes), price


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("cheapest", "price_asc"),
        ("price_low_to_high", "price_asc"),
        ("Price: Low to High", "price_asc"),
        ("lowest price", "price_asc"),
        ("most expensive", "price_desc"),
        ("price-high-to-low", "price_desc"),
        ("highest_price_first", "price_desc"),
        ("best rated", "rating"),
        ("top-rated", "rating"),
        ("customer reviews", "rating"),
        ("relevance", "relevance"),
        ("newest", "relevance"),
    ],
)
def test_sort_synonyms_are_mapped(sort: str, expected: str) -> None:
    query, _ = repair(json.dumps({"category": "x", "sort": sort}), "")
    assert query.sort == expected


@pytest.mark.parametrize(
    ("exclude", "expected"),
    [
        ('"leather"', [Exclusion(value="leather")]),
        ('["leather", "no hood"]', [Exclusion(value="leather"), Exclusion(value="hood")]),
        ('["color: red"]', [Exclusion(field="color", value="red")]),
        (
            '{"color": ["red", "pink"]}',
            [Exclusion(field="color", value=v) for v in ("red", "pink")],
        ),
        ('[{"field": "material", "value": "wool"}]', [Exclusion(field="material", value="wool")]),
        ('[{"key": "color", "values": ["red"]}]', [Exclusion(field="color", value="red")]),
        ('[{"field": "none", "value": "zip"}]', [Exclusion(value="zip")]),
    ],
)
def test_exclusion_shapes_are_coerced(exclude: str, expected: list[Exclusion]) -> None:
    query, _ = repair(f'{{"category": "x", "exclude": {exclude}}}', "")
    assert query.exclude == expected


def test_exclusions_given_as_plain_strings_are_recorded() -> None:
    _, notes = _repaired('{"exclude": ["leather"]}')
    assert "exclusion 'leather' given as str" in notes


@pytest.mark.parametrize(
    ("rating", "expected"), [('"4"', 4.0), ('"4.5 stars"', 4.5), ('"4+"', 4.0), ("3", 3.0)]
)
def test_ratings_given_as_text_are_read(rating: str, expected: float) -> None:
    query, _ = repair(f'{{"category": "x", "min_rating": {rating}}}', "")
    assert query.min_rating == expected


def test_ratings_outside_zero_to_five_are_dropped() -> None:
    for rating in ("9", '"8/10"', "-1", "true", "1e999"):
        query, notes = repair(f'{{"category": "x", "min_rating": {rating}}}', "")
        assert query.min_rating is None, rating
        assert any("min_rating" in note for note in notes), rating


def test_availability_words_become_a_flag() -> None:
    assert repair('{"category": "x", "in_stock": "yes"}', "")[0].available_only
    assert not repair('{"category": "x", "available_only": "no"}', "")[0].available_only


def test_nulls_and_lists_in_name_fields_are_tidied() -> None:
    data, notes = _repaired('{"category": ["boots", "shoes"], "brand": "null", "text": ["a", 1]}')
    assert data == {"category": "boots", "text": "a 1"}
    assert "kept the first of several category values" in notes


def test_a_clean_object_repairs_to_the_same_query_without_notes() -> None:
    query = SearchQuery(
        category="mug", price=PriceRange(max=Decimal(20)), exclude=[Exclusion(value="x")]
    )
    assert repair(query.model_dump_json(), "") == (query, [])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        "[1, 2, 3]",
        '{"category": "jeans"',  # cut off before any whole element
        "{" * 5000 + "}" * 5000,
        "{not: json at all!}",
    ],
)
def test_unusable_output_raises_unrepairable_output(text: str) -> None:
    with pytest.raises(UnrepairableOutput):
        repair(text, "jeans")


def test_unrepairable_output_is_a_value_error_and_a_cartagent_error() -> None:
    assert issubclass(UnrepairableOutput, ValueError)
    assert issubclass(UnrepairableOutput, CartagentError)
    with pytest.raises(UnrepairableOutput):
        repair(None, "x")  # type: ignore[arg-type]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    [
        *("category", "brand", "price", "options", "attributes", "exclude", "sort", "min_rating"),
        *("available_only", "text", "max_price", "color", "size", "in_stock", "price_min", "x"),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_repair_raises_nothing_but_unrepairable_output_on_arbitrary_text(text: str) -> None:
    try:
        query, notes = repair(text, text)
    except UnrepairableOutput:
        return
    assert isinstance(query, SearchQuery)
    assert all(isinstance(note, str) for note in notes)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=8), st.text(max_size=8), st.integers(0, 40))
def test_repair_raises_nothing_but_unrepairable_output_on_odd_json(
    data: dict[str, Any], noise: str, cut: int
) -> None:
    text = json.dumps(data) + noise
    for candidate in (text, text[: max(1, len(text) - cut)]):
        try:
            query, _ = repair(candidate, "red shoes under $50")
        except UnrepairableOutput:
            continue
        assert isinstance(query, SearchQuery)
        SearchQuery.model_validate_json(query.model_dump_json())  # and it round-trips
