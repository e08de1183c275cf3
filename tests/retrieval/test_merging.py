"""``fill_gaps``: the rule parser's reading kept, what it left open taken from the model's."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.retrieval.merging import fill_gaps, patch
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery


def test_what_the_parser_read_wins_over_the_model() -> None:
    parser = SearchQuery(
        text="comfy",
        category="jeans",
        attributes={"gender": ["women"]},
        options={"color": ["blue"]},
        price=PriceRange(max=Decimal(50)),
        sort="price_asc",
        min_rating=4,
    )
    model = SearchQuery(
        category="shorts",
        attributes={"gender": ["men"]},
        options={"color": ["black"]},
        price=PriceRange(max=Decimal(80)),
        sort="rating",
        min_rating=3,
    )
    merged = fill_gaps(parser, model)
    assert merged.model_dump(exclude={"text"}) == parser.model_dump(exclude={"text"})


def test_the_model_fills_what_the_parser_left_open_with_the_leftover_words() -> None:
    parser = SearchQuery(text="tshirt Acme slimm M polyster cheap", options={"color": ["red"]})
    model = SearchQuery(
        category="t-shirt",
        brand="Acme",
        attributes={"fit": ["slim"]},
        options={"color": ["blue"], "size": ["M"]},
        sort="price_asc",
        min_rating=4,
        available_only=True,
        exclude=[Exclusion(field="material", value="polyester")],
    )
    merged = fill_gaps(parser, model)
    assert merged == SearchQuery(
        text="cheap",
        category="t-shirt",
        brand="Acme",
        attributes={"fit": ["slim"]},
        options={"color": ["red"], "size": ["M"]},
        sort="price_asc",
        min_rating=4,
        available_only=True,
        exclude=[Exclusion(field="material", value="polyester")],
    )


@pytest.mark.parametrize(
    ("leftover", "category", "kept"),
    [
        ("sneakrs", "sneakers", True),  # one typo
        ("yoga matt", "yoga mat", True),
        ("headphnoes", "headphones", True),  # a swap
        ("blutooth speakr", "bluetooth speaker", True),
        ("boil water tea", "tea bag", False),  # "bag" is not in the words
        ("gift coffee lover", "coffee beans", False),
        ("warm hat", "mat", False),  # a first letter is not a typo
        ("sneakers", "snickers", False),  # two typos in a short word
    ],
)
def test_a_value_is_taken_only_when_the_leftover_words_say_it(
    leftover: str, category: str, kept: bool
) -> None:
    merged = fill_gaps(SearchQuery(text=leftover), SearchQuery(category=category))
    assert (merged.category, merged.text) == ((category, "") if kept else (None, leftover))


def test_a_place_a_model_took_for_a_kind_stays_a_word_of_the_text() -> None:
    merged = fill_gaps(SearchQuery(text="air bedroom"), SearchQuery(category="bedroom"))
    assert (merged.category, merged.text) == (None, "air bedroom")


def test_a_gender_must_be_one_the_word_lists_know() -> None:
    model = SearchQuery(attributes={"gender": ["husband"], "material": ["synthetic"]})
    merged = fill_gaps(SearchQuery(text="husband synthetic"), model)
    assert (merged.attributes, merged.text) == ({"material": ["synthetic"]}, "husband")
    women = fill_gaps(SearchQuery(text="ladies"), SearchQuery(attributes={"gender": ["ladies"]}))
    assert women.attributes == {"gender": ["ladies"]}


def test_each_leftover_word_backs_one_value() -> None:
    model = SearchQuery(category="yoga mat", attributes={"material": ["matt"]})
    merged = fill_gaps(SearchQuery(text="yoga matt"), model)
    assert (merged.category, merged.attributes, merged.text) == ("yoga mat", {}, "")


def test_a_value_written_as_one_word_is_said() -> None:
    model = SearchQuery(options={"ram": ["16 gb"]}, category="t-shirt")
    merged = fill_gaps(SearchQuery(text="16gb tshirt"), model)
    assert merged.options == {"ram": ["16 gb"]} and merged.category == "t-shirt"
    assert merged.text == ""


def test_values_the_words_do_not_say_leave_the_text_whole() -> None:
    parser = SearchQuery(text="amoled display", category="smart watch")
    model = SearchQuery(category="smart watch", options={"color": ["amoluminescent"]})
    assert fill_gaps(parser, model) == parser


@pytest.mark.parametrize(
    ("leftover", "model"),
    [
        ("rgb", SearchQuery(options={"color": ["rgb"]})),
        ("insulated", SearchQuery(attributes={"material": ["insulated"]})),
        ("drop table", SearchQuery(options={"size": ["drop"]})),
        ("rated ipx7", SearchQuery(options={"size": ["IPX7"]})),
        ("rain", SearchQuery(exclude=[Exclusion(field="color", value="rain")])),
    ],
)
def test_a_word_filed_under_a_closed_name_it_is_no_value_of_stays_text(
    leftover: str, model: SearchQuery
) -> None:
    parser = SearchQuery(text=leftover, category="boots")
    assert fill_gaps(parser, model) == parser


def test_closed_names_take_the_values_the_word_lists_know() -> None:
    model = SearchQuery(
        options={"size": ["L"], "colour": ["grey"]},
        attributes={"material": ["polyester"]},
        exclude=[Exclusion(field="size", value="10.5")],
    )
    merged = fill_gaps(SearchQuery(text="gery L polyster not 10.5", category="hoodie"), model)
    assert merged.options == {"size": ["L"], "colour": ["grey"]}
    assert merged.attributes == {"material": ["polyester"]}
    assert merged.exclude == [Exclusion(field="size", value="10.5")]
    assert merged.text == "not"


def test_price_bounds_fill_one_by_one_and_never_cross() -> None:
    low = SearchQuery(text="max 50 or 10", price=PriceRange(min=Decimal(20)))
    assert fill_gaps(low, SearchQuery(price=PriceRange(max=Decimal(50)))).price == PriceRange(
        min=Decimal(20), max=Decimal(50)
    )
    crossing = SearchQuery(price=PriceRange(max=Decimal(10)))
    assert fill_gaps(low, crossing).price == low.price
    euros = SearchQuery(price=PriceRange(max=Decimal(50), currency="EUR"))
    assert fill_gaps(low, euros).price == low.price
    assert fill_gaps(SearchQuery(text="tope 50 euros"), euros).price == euros.price


def test_a_price_bound_is_taken_only_for_a_number_left_over() -> None:
    # "unter 200 Euro": the parser read the bound; the model must not make 200 a floor too.
    parser = SearchQuery(text="bequeme", price=PriceRange(max=Decimal(200), currency="EUR"))
    model = SearchQuery(price=PriceRange(min=Decimal(200), currency="EUR"))
    assert fill_gaps(parser, model).price == parser.price
    both = SearchQuery(price=PriceRange(min=Decimal(200), max=Decimal("1.5e3")))
    assert fill_gaps(SearchQuery(text="over 1,500"), both).price == PriceRange(max=Decimal(1500))
    assert fill_gaps(SearchQuery(text="about 2k"), both).price is None
    assert fill_gaps(SearchQuery(text="bump 1500"), both).price is None  # no price in the words
    assert fill_gaps(SearchQuery(text="1500 quid tops"), both).price == PriceRange(
        max=Decimal(1500)
    )
    assert fill_gaps(SearchQuery(text="maxx 1500"), both).price == PriceRange(max=Decimal(1500))


def test_an_exclusion_the_parser_found_is_not_repeated() -> None:
    parser = SearchQuery(text="hood", exclude=[Exclusion(field="color", value="Red")])
    model = SearchQuery(exclude=[Exclusion(value="red"), Exclusion(value="hood")])
    assert fill_gaps(parser, model).exclude == [
        Exclusion(field="color", value="Red"),
        Exclusion(value="hood"),
    ]


def test_a_patch_holds_only_what_fills_the_parsers_gaps() -> None:
    parser = SearchQuery(
        text="sneakrs comfy",
        options={"color": ["white"]},
        price=PriceRange(min=Decimal(20)),
        exclude=[Exclusion(value="leather")],
    )
    wanted = SearchQuery(
        text="comfy",
        category="sneakers",
        options={"color": ["white"], "size": ["9"]},
        price=PriceRange(min=Decimal(20), max=Decimal(80)),
        sort="rating",
        exclude=[Exclusion(value="leather"), Exclusion(field="color", value="red")],
    )
    assert patch(parser, wanted) == SearchQuery(
        category="sneakers",
        options={"size": ["9"]},
        price=PriceRange(max=Decimal(80)),
        sort="rating",
        exclude=[Exclusion(field="color", value="red")],
    )
    assert patch(wanted, wanted).is_empty()


@pytest.mark.parametrize(
    ("parser", "wanted"),
    [
        (
            SearchQuery(text="tshirt slimm"),
            SearchQuery(category="t-shirt", attributes={"fit": ["slim"]}),
        ),
        (
            SearchQuery(text="jeans", price=PriceRange(max=Decimal(50))),
            SearchQuery(category="jeans", price=PriceRange(min=Decimal(10), max=Decimal(40))),
        ),
        (
            SearchQuery(text="boots", price=PriceRange(max=Decimal(50), currency="EUR")),
            SearchQuery(category="boots", price=PriceRange(min=Decimal(10))),
        ),
        (
            SearchQuery(text="mug in stock", sort="price_asc", min_rating=4),
            SearchQuery(category="mug", sort="rating", min_rating=3, available_only=True),
        ),
    ],
)
def test_filling_with_the_patch_is_filling_with_the_whole_query(
    parser: SearchQuery, wanted: SearchQuery
) -> None:
    assert fill_gaps(parser, patch(parser, wanted)) == fill_gaps(parser, wanted)


@pytest.mark.parametrize(
    ("left", "model", "text"),
    [
        ("chromebook i3-8130u", {"processor": ["i3"]}, "chromebook 8130u"),
        ("ssd m.2 minis", {"size": ["m"]}, "ssd 2 minis"),
        ("16gb laptop", {"ram": ["16 gb"]}, "laptop"),  # the whole word said the value
    ],
)
def test_the_text_keeps_the_part_of_a_word_no_value_used(
    left: str, model: dict[str, list[str]], text: str
) -> None:
    filled = fill_gaps(SearchQuery(text=left), SearchQuery(options=model))
    assert filled.options == model
    assert filled.text == text
