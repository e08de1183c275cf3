"""The query line: every SearchQuery round-trips, in far fewer characters than its JSON."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cartagent.retrieval.prompt import query_json
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery
from cartagent.retrieval.query_line import gaps_line, parse_gaps_line, parse_query_line, query_line


@pytest.mark.parametrize(
    ("query", "line"),
    [
        (SearchQuery(category="hoodie", exclude=[Exclusion(field="color", value="light blue")]),
         "hoodie | not color=light blue"),
        (SearchQuery(category="leggings", attributes={"material": ["nylon"]}, sort="price_asc"),
         "leggings | material=nylon | cheapest"),
        (SearchQuery(
            category="jeans", brand="Levi's", options={"size": ["30", "32"], "color": ["black"]},
            price=PriceRange(max=Decimal(60)), min_rating=4.5, available_only=True,
        ), "jeans | brand=Levi's | size:30 or 32 | color:black | price<=60 | rating>=4.5"
           " | in stock"),
        (SearchQuery(text="graphic print", price=PriceRange(min=Decimal("20.5"), max=Decimal(40),
                                                            currency="EUR")),
         "* | price 20.5-40 EUR | text=graphic print"),
        (SearchQuery(category="tent", exclude=[Exclusion(value="leather")], sort="rating"),
         "tent | best rated | not leather"),
        (SearchQuery(category="ring", price=PriceRange(min=Decimal(100)), sort="price_desc"),
         "ring | price>=100 | dearest"),
    ],
)  # fmt: skip
def test_queries_are_written_and_read_back(query: SearchQuery, line: str) -> None:
    assert query_line(query) == line
    assert parse_query_line(line) == query
    assert len(line) < len(query_json(query))


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
    lambda w: w != "or"
)
_VALUE = st.lists(_WORD, min_size=1, max_size=3).map(" ".join)
_NAME = st.sampled_from(["color", "size", "material", "fit", "lined hood", "pack"])
_VALUES = st.lists(_VALUE, min_size=1, max_size=2)
_EXCLUSION = st.builds(Exclusion, field=st.none() | _NAME, value=_VALUE)
_PRICE = st.decimals(min_value=1, max_value=5000, places=2, allow_nan=False)


@st.composite
def queries(draw: st.DrawFn) -> SearchQuery:
    low = draw(st.none() | _PRICE)
    high = draw(st.none() | _PRICE)
    if low is not None and high is not None and low > high:
        low, high = high, low
    price = None if low is None and high is None else PriceRange(min=low, max=high)
    return SearchQuery(
        category=draw(st.none() | _VALUE),
        brand=draw(st.none() | _VALUE),
        text=draw(st.just("") | _VALUE),
        attributes=draw(st.dictionaries(_NAME, _VALUES, max_size=2)),
        options=draw(st.dictionaries(_NAME, _VALUES, max_size=2)),
        price=price,
        sort=draw(st.sampled_from(["relevance", "price_asc", "price_desc", "rating"])),
        min_rating=draw(st.none() | st.sampled_from([3.0, 4.0, 4.5])),
        available_only=draw(st.booleans()),
        exclude=draw(st.lists(_EXCLUSION, max_size=2)),
    )  # fmt: skip


@given(queries())
def test_every_query_round_trips(query: SearchQuery) -> None:
    assert parse_query_line(query_line(query)) == query


@given(queries())
def test_every_query_round_trips_as_gaps_too(query: SearchQuery) -> None:
    assert parse_gaps_line(gaps_line(query)) == query


@pytest.mark.parametrize(
    ("query", "line"),
    [
        (SearchQuery(options={"color": ["blue"]}), "color:blue"),  # no "* | "
        (SearchQuery(category="tent", options={"color": ["red"]}), "tent | color:red"),
        (SearchQuery(), "*"),
        (SearchQuery(available_only=True, sort="price_asc"), "cheapest | in stock"),
        (SearchQuery(price=PriceRange(max=Decimal(60))), "price<=60"),
        (SearchQuery(category="lamp", text="warm"), "lamp | text=warm"),
    ],
)
def test_a_gaps_line_drops_only_the_missing_category(query: SearchQuery, line: str) -> None:
    assert gaps_line(query) == line
    assert parse_gaps_line(line) == query


def test_a_gaps_line_that_reads_as_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\('\?\?\?'\) is not query-line notation"):
        parse_gaps_line("color:blue | ???")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("", "1 to 1000 characters"),
        ("shoes\nboots", "one line"),
        ("shoes | ", "segment 2 is empty"),
        ("shoes | very cheap please", "segment 2 ('very cheap please') is not query-line notation"),
        ("shoes | rating>=9", "min_rating"),
        ("shoes | price 90-10", "price"),
        ("x" + " | a=b" * 40, "at most 40 segments"),
    ],
)
def test_lines_that_cannot_be_read_name_the_problem(line: str, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_query_line(line)
    assert problem in str(raised.value)


@pytest.mark.parametrize(
    "query",
    [
        SearchQuery(category="a | b"),
        SearchQuery(category="*"),
        SearchQuery(options={"color": ["red or blue"]}),
        SearchQuery(attributes={"a=b": ["c"]}),
        SearchQuery(exclude=[Exclusion(value="color=red")]),
    ],
)
def test_a_query_the_notation_cannot_hold_is_refused(query: SearchQuery) -> None:
    with pytest.raises(ValueError, match="cannot"):
        query_line(query)
