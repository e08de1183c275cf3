"""The shared exact filter: one product, one query, which variant matches and why."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from cartagent.catalog import Product, Variant
from cartagent.retrieval.filters import (
    NO_RATING,
    Hit,
    Plan,
    Words,
    analyzer,
    check,
    matching_variants,
    order_value,
    ordered,
    prep,
    same_option_value,
    spellings,
)
from cartagent.retrieval.query import Exclusion, PriceRange, SearchQuery

WORDS = Words(analyzer())

TEE = Product(
    id="tee",
    title="Hooded Crew T-Shirt",
    category=("Clothing", "Tops"),
    attributes={"material": ("cotton", "polyester")},
    variants=(
        Variant(
            id="m-red",
            options={"size": "M", "color": "red", "material": "cotton"},
            price=Decimal("15"),
        ),
        Variant(
            id="xl-red",
            options={"size": "XL", "color": "red", "material": "polyester"},
            price=Decimal("18"),
        ),
        Variant(
            id="m-blue",
            options={"size": "M", "color": "light blue"},
            price=Decimal("12"),
            available=False,
        ),
    ),
    rating=4.0,
)


def run(query: SearchQuery, score: float = 1.0) -> tuple[str | None, list[str]] | None:
    hit = check(Plan.of(query, WORDS), TEE, score, WORDS)
    if hit is None:
        return None
    return (hit.variant.id if hit.variant else None), hit.matched


def test_options_must_hold_on_one_variant() -> None:
    assert run(SearchQuery(options={"size": ["XL"], "colour": ["red"]})) == (
        "xl-red",
        ["size=XL", "color=red"],
    )
    assert run(SearchQuery(options={"size": ["XL"], "color": ["blue"]})) is None
    found = run(SearchQuery(options={"color": ["blue"]}))  # "blue" is in "light blue"
    assert found is not None and found[0] == "m-blue"


def test_price_availability_and_rating() -> None:
    cheap = run(SearchQuery(price=PriceRange(max=Decimal("15")), available_only=True))
    assert cheap is not None and cheap[0] == "m-red"
    assert run(SearchQuery(price=PriceRange(min=Decimal("19")))) is None
    assert run(SearchQuery(min_rating=4.5)) is None


def test_exclusions_use_stems_and_fields() -> None:
    assert run(SearchQuery(exclude=[Exclusion(field=None, value="hood")])) is None
    kept = run(SearchQuery(exclude=[Exclusion(field="material", value="polyester")]))
    assert kept is not None and kept[0] in {"m-red", "m-blue"}


def test_category_and_text_matches_are_reported() -> None:
    found = run(SearchQuery(text="red shirt", category="tops"))
    assert found is not None
    assert found[1][0].startswith("text: ") and "category=tops" in found[1]
    assert run(SearchQuery(category="shoes")) is None


def test_ordered_by_price() -> None:
    query = SearchQuery(sort="price_desc")
    hit = check(Plan.of(query, WORDS), TEE, 0.0, WORDS)
    assert hit is not None and hit.variant is not None and hit.variant.id == "xl-red"
    cheap = SearchQuery(sort="price_asc")
    low = check(Plan.of(cheap, WORDS), TEE, 0.0, WORDS)
    assert low is not None
    pairs = [(h, order_value("price_asc", h, 0.0)) for h in (hit, low)]
    assert ordered("price_asc", pairs) == [low, hit]


def test_british_and_american_spellings_match_each_other() -> None:
    hoodie = Product(
        id="hoodie",
        title="Grey Hoodie",
        variants=(
            Variant(id="grey-m", options={"colour": "grey", "size": "M"}, price=Decimal("30")),
        ),
    )
    hit = check(Plan.of(SearchQuery(options={"color": ["gray"]}), WORDS), hoodie, 1.0, WORDS)
    assert hit is not None and hit.variant is not None and hit.variant.id == "grey-m"
    assert WORDS("aluminium jewellery") == WORDS("aluminum jewelry")


def sized(title: str, name: str, sizes: dict[str, str]) -> Product:
    """A product whose variants differ only in ``name``: variant id -> its value."""
    return Product(
        id=title.lower(),
        title=title,
        category=("Shop",),
        variants=tuple(
            Variant(id=vid, options={name: value}, price=Decimal("10"))
            for vid, value in sizes.items()
        ),
    )


KEYBOARD = sized("Mechanical Keyboard", "size", {"full": "full size", "tkl": "80%"})
SCREEN = sized("Laptop", "screen size", {"13": "13-inch", "15": "15-inch"})
BED = sized("Pet Bed", "size", {"small": "small", "large": "large"})
TEE_SIZES = sized("T-Shirt", "size", {"m": "M", "xl": "XL", "xxl": "XXL"})


def variant_for(product: Product, query: SearchQuery) -> str | None:
    hit = check(Plan.of(query, WORDS), product, 1.0, WORDS)
    return None if hit is None or hit.variant is None else hit.variant.id


def test_sizes_compare_without_the_word_size_and_with_one_spelling_of_units() -> None:
    assert variant_for(KEYBOARD, SearchQuery(options={"size": ["full"]})) == "full"
    assert variant_for(KEYBOARD, SearchQuery(options={"size": ["80 %"]})) == "tkl"
    assert variant_for(SCREEN, SearchQuery(options={"screen size": ["15 inch"]})) == "15"
    assert variant_for(SCREEN, SearchQuery(options={"screen size": ['13"']})) == "13"
    assert variant_for(SCREEN, SearchQuery(options={"screen size": ["14 inch"]})) is None
    assert variant_for(BED, SearchQuery(options={"size": ["L"]})) == "large"
    assert variant_for(BED, SearchQuery(options={"size": ["XL"]})) is None
    assert variant_for(TEE_SIZES, SearchQuery(options={"size": ["extra large"]})) == "xl"
    assert variant_for(TEE_SIZES, SearchQuery(options={"size": ["medium"]})) == "m"
    assert variant_for(TEE_SIZES, SearchQuery(options={"size": ["2XL"]})) == "xxl"
    assert variant_for(TEE_SIZES, SearchQuery(options={"size": ["3XL"]})) is None


PERFUME = Product(
    id="perfume",
    title="Perfume",
    description="Perfume. Available options: size: 30ml, 100ml.",
    category=("Beauty",),
    variants=(
        Variant(id="30", options={"size": "30ml", "gender": "men"}, price=Decimal("50")),
        Variant(id="100", options={"size": "100ml", "gender": "men"}, price=Decimal("90")),
    ),
)


def test_words_a_variant_option_holds_pick_that_variant_not_any_the_description_lists() -> None:
    # "capacity" is no name of the product's, so the words are looked for elsewhere: the
    # description lists both sizes, but only the 100ml variant is 100 ml.
    query = SearchQuery(options={"capacity": ["100 ml"]})
    assert variant_for(PERFUME, query) == "100"
    cheapest_first = SearchQuery(options={"capacity": ["100 ml"]}, sort="price_asc")
    assert variant_for(PERFUME, cheapest_first) == "100"
    assert variant_for(PERFUME, SearchQuery(options={"capacity": ["50 ml"]})) is None
    # Words no variant's options hold may still come from the description, or partly from it.
    assert variant_for(PERFUME, SearchQuery(options={"scent": ["perfume"]})) == "30"
    assert variant_for(PERFUME, SearchQuery(options={"scent": ["men perfume"]})) == "30"


SUNGLASSES = sized("Sunglasses", "lens type", {"plain": "non-polarized", "polarized": "polarized"})


def test_a_non_word_is_not_the_word_it_denies() -> None:
    # The parser files "polarized" under features, a name the product lacks: the words must
    # then be the variant's own, and "non-polarized" does not hold "polarized".
    assert variant_for(SUNGLASSES, SearchQuery(attributes={"features": ["polarized"]})) == (
        "polarized"
    )
    assert variant_for(SUNGLASSES, SearchQuery(options={"lens type": ["non-polarized"]})) == (
        "plain"
    )
    assert variant_for(SUNGLASSES, SearchQuery(text="polarized")) == "polarized"
    assert WORDS("Non-stick pan") == WORDS("nonstick pan")
    assert prep("non-polarized, 100ml") == "nonpolarized, 100 ml"


BOOTS = Product(
    id="boots",
    title="Hiking Boots",
    description="Rugged waterproof hiking boots.",
    category=("Shoes", "Boots"),
    variants=(
        Variant(id="dry-9", options={"size": "9", "waterproof": "no"}, price=Decimal("99")),
        Variant(id="wet-9", options={"size": "9", "waterproof": "yes"}, price=Decimal("120")),
        Variant(id="wet-10", options={"size": "10", "waterproof": "Yes"}, price=Decimal("125")),
    ),
)


def _boots(query: SearchQuery) -> list[str]:
    """The variants of the boots that each satisfy ``query`` alone."""
    plan = Plan.of(query, WORDS)
    return [
        v.id
        for v in BOOTS.variants
        if check(plan, BOOTS.model_copy(update={"variants": (v,)}), 1.0, WORDS) is not None
    ]


def test_a_word_naming_a_yes_no_option_asks_for_its_yes() -> None:
    # The description says "waterproof" of every variant; the option says which are.
    assert _boots(SearchQuery(text="waterproof boots", options={"size": ["9"]})) == ["wet-9"]
    assert _boots(SearchQuery(attributes={"features": ["waterproof"]})) == ["wet-9", "wet-10"]
    hit = check(Plan.of(SearchQuery(text="waterproof"), WORDS), BOOTS, 1.0, WORDS)
    assert hit is not None and hit.variant is not None and hit.variant.id == "wet-9"
    assert "waterproof=yes" in hit.matched
    # Without such an option the word is searched for as before.
    assert _boots(SearchQuery(text="rugged boots")) == ["dry-9", "wet-9", "wet-10"]


def _matching(query: SearchQuery, product: Product = BOOTS) -> list[str]:
    return [v.id for v in matching_variants(Plan.of(query, WORDS), product, WORDS)]


def test_matching_variants_are_every_variant_that_satisfies_the_query_alone() -> None:
    assert _matching(SearchQuery(options={"size": ["9"]})) == ["dry-9", "wet-9"]
    assert _matching(SearchQuery(options={"size": ["11"]})) == []
    # Only the word naming the yes/no option said: it asks for the yes all the same.
    assert _matching(SearchQuery(text="waterproof")) == ["wet-9", "wet-10"]
    assert _matching(SearchQuery(text="waterproof boots", options={"size": ["9"]})) == ["wet-9"]
    # No word naming it: a variant that says no matches too.
    assert _matching(SearchQuery(text="rugged boots")) == ["dry-9", "wet-9", "wet-10"]


def test_no_variant_matches_where_the_product_itself_does_not() -> None:
    # Every size-9 variant would do, but the boots have no rating, are no sandals, and
    # a product without variants has none to give.
    assert _matching(SearchQuery(options={"size": ["9"]}, min_rating=4.0)) == []
    assert _matching(SearchQuery(category="sandals", options={"size": ["9"]})) == []
    assert _matching(SearchQuery(text="boots"), BOOTS.model_copy(update={"variants": ()})) == []


def test_an_amount_is_the_same_value_however_its_unit_is_spaced() -> None:
    assert same_option_value("storage", "128 gb", "128GB")
    assert same_option_value("capacity", "1.5 l", "1.5L")
    assert not same_option_value("storage", "128 gb", "1TB")
    assert not same_option_value("storage", "64 gb", "128GB")
    assert same_option_value("color", "Grey", "gray") and not same_option_value(
        "color", "red", "blue"
    )


def test_an_amount_in_another_unit_is_the_same_value_and_a_range_is_not_an_amount() -> None:
    assert same_option_value("capacity", "1 l", "1000ml")
    assert same_option_value("storage", "1 tb", "1000GB")
    assert same_option_value("length", "2 ft", "24 inches")
    assert not same_option_value("capacity", "1 l", "500ml")
    assert not same_option_value("capacity", "32 oz", "1 l")  # another dimension
    assert not same_option_value("weight range", "5-25 lbs", "5-30 lbs")
    bottle = _product(_variant("small", capacity="500ml"), _variant("big", capacity="1000ml"))
    assert _matching(SearchQuery(options={"capacity": ["1 l"]}), bottle) == ["big"]


# The "matched" report tells the shopper why a result fits: it must name only what matched.

BLUE_MUG = Product(
    id="mug",
    title="Stoneware Mug",
    category=("Kitchen", "Mugs"),
    variants=(Variant(id="mug-blue", options={"color": "blue"}, price=Decimal("9")),),
)


def test_of_several_wanted_values_the_one_the_product_has_is_reported() -> None:
    for wanted in (["red", "blue"], ["blue", "red"]):
        hit = check(Plan.of(SearchQuery(options={"color": wanted}), WORDS), BLUE_MUG, 1.0, WORDS)
        assert hit is not None and hit.matched == ["color=blue"], wanted


def test_only_the_words_of_the_text_the_product_holds_are_reported() -> None:
    found = run(SearchQuery(text="red velvet shirt"))
    assert found is not None
    assert found[1] == ["text: red shirt"]
    none_found = run(SearchQuery(text="velvet banana"))
    assert none_found is not None
    assert not [label for label in none_found[1] if label.startswith("text")]


def test_in_stock_is_reported_when_asked_for_and_the_variant_is() -> None:
    found = run(SearchQuery(options={"color": ["red"]}, available_only=True))
    assert found is not None and found[1] == ["color=red", "in stock"]
    anywhere = run(SearchQuery(options={"color": ["red"]}))
    assert anywhere is not None and "in stock" not in anywhere[1]


# --- every constraint at its edges -----------------------------------------------------------


def _product(*variants: Variant, **fields: Any) -> Product:
    return Product(**{"id": "p", "title": "Thing", "variants": variants, **fields})


def _variant(vid: str, price: str = "10", **options: str) -> Variant:
    return Variant(id=vid, options=options, price=Decimal(price))


def _hit(product: Product, query: SearchQuery) -> tuple[str | None, list[str]] | None:
    hit = check(Plan.of(query, WORDS), product, 1.0, WORDS)
    return None if hit is None else ((hit.variant.id if hit.variant else None), hit.matched)


def test_price_bounds_are_inclusive_in_the_querys_currency_and_reported() -> None:
    assert run(SearchQuery(price=PriceRange(min=Decimal("15")))) == ("m-red", ["price>=15 USD"])
    assert run(SearchQuery(price=PriceRange(max=Decimal("14")))) == ("m-blue", ["price<=14 USD"])
    assert run(SearchQuery(price=PriceRange(min=Decimal("12"), max=Decimal("18")))) == (
        "m-red",
        ["price 12-18 USD"],
    )
    assert run(SearchQuery(price=PriceRange())) == ("m-red", ["priced in USD"])
    assert run(SearchQuery(price=PriceRange(max=Decimal("100"), currency="eur"))) is None
    no_variants = Product(id="bare", title="Bare")
    assert _hit(no_variants, SearchQuery(price=PriceRange(max=Decimal("100")))) is None
    assert _hit(no_variants, SearchQuery(available_only=True)) is None
    assert _hit(no_variants, SearchQuery()) == (None, [])


def test_only_what_is_in_stock_when_asked_for() -> None:
    gone = _product(Variant(id="gone", options={}, price=Decimal("1"), available=False))
    assert _hit(gone, SearchQuery(available_only=True)) is None
    assert _hit(gone, SearchQuery()) == ("gone", [])


def test_a_brand_and_a_rating_must_hold_and_are_reported() -> None:
    acme = _product(_variant("a"), brand="Acme Tools", rating=4.0)
    assert _hit(acme, SearchQuery(brand="acme")) == ("a", ["brand=Acme Tools"])
    assert _hit(acme, SearchQuery(brand="Acme Tools")) == ("a", ["brand=Acme Tools"])
    assert _hit(acme, SearchQuery(brand="other")) is None
    assert _hit(_product(_variant("a")), SearchQuery(brand="acme")) is None
    assert _hit(acme, SearchQuery(min_rating=4.0)) == ("a", ["rating>=4"])
    assert _hit(acme, SearchQuery(min_rating=4.0 + 1e-9)) == ("a", ["rating>=4"])
    assert _hit(acme, SearchQuery(min_rating=4.1)) is None
    assert _hit(_product(_variant("a")), SearchQuery(min_rating=1)) is None  # no rating


def test_a_category_is_the_whole_category_path_or_title_too() -> None:
    assert run(SearchQuery(category="clothing tops")) is not None
    assert run(SearchQuery(category="hooded crew t-shirt")) is not None


def test_exclusions_by_field_look_only_there_and_without_one_everywhere() -> None:
    assert run(SearchQuery(exclude=[Exclusion(field="material", value="cotton")])) == (
        "xl-red",
        ["not material=cotton"],
    )
    assert run(SearchQuery(exclude=[Exclusion(field="color", value="red")])) == (
        "m-blue",
        ["not color=red"],
    )
    assert run(SearchQuery(exclude=[Exclusion(value="polyester")])) == ("m-red", ["not polyester"])
    assert run(SearchQuery(exclude=[Exclusion(value="cotton")])) == ("xl-red", ["not cotton"])
    # A field the product lacks falls back to its title only.
    assert run(SearchQuery(exclude=[Exclusion(field="style", value="red")])) == (
        "m-red",
        ["not style=red"],
    )
    assert run(SearchQuery(exclude=[Exclusion(field="style", value="hooded")])) is None
    # A field exclusion the product has is decided by the field, whatever the title says.
    assert run(SearchQuery(exclude=[Exclusion(field="material", value="hooded")])) == (
        "m-red",
        ["not material=hooded"],
    )
    red_dragon = _product(_variant("blue", color="blue"), title="Red Dragon Tee")
    assert _hit(red_dragon, SearchQuery(exclude=[Exclusion(field="color", value="red")])) == (
        "blue",
        ["not color=red"],
    )
    striped = _product(
        _variant("red", color="red"), _variant("stripes", "20", color="blue", pattern="red stripes")
    )
    assert _hit(striped, SearchQuery(exclude=[Exclusion(field="color", value="red")])) == (
        "stripes",
        ["not color=red"],
    )


def test_a_compound_name_counts_as_the_name_it_ends_in() -> None:
    watch = _product(
        _variant("black", "10", **{"band color": "black"}),
        _variant("brown", "20", **{"band color": "brown"}),
        title="Black Dial Watch",
    )
    assert _hit(watch, SearchQuery(exclude=[Exclusion(field="color", value="black")])) == (
        "brown",
        ["not color=black"],
    )
    shoes = _product(
        _variant("ten", "20", **{"shoe size": "10"}),
        _variant("ten-half", "10", **{"shoe size": "10.5"}),
    )
    assert _hit(shoes, SearchQuery(options={"size": ["10"]})) == ("ten", ["size=10"])
    titled = _product(_variant("v", color="red"), title="Tee")
    assert _hit(titled, SearchQuery(exclude=[Exclusion(field="size", value="tee")])) is None


def test_a_value_of_no_words_is_compared_as_text() -> None:
    graded = _product(_variant("plus", "20", grade="+"), _variant("minus", "10", grade="-"))
    assert _hit(graded, SearchQuery(options={"grade": ["+"]})) == ("plus", ["grade=+"])


def test_words_no_single_variant_holds_are_no_match_even_if_the_description_has_them() -> None:
    finishes = _product(
        _variant("matte", finish="matte"),
        _variant("gloss", finish="gloss"),
        description="Matte and gloss finishes available.",
    )
    assert _hit(finishes, SearchQuery(attributes={"coating": ["matte gloss"]})) is None


def test_a_yes_no_option_said_no_falls_to_the_next_wanted_value() -> None:
    boots = _product(
        _variant("red-dry", "50", color="red", waterproof="no"),
        _variant("blue-wet", "90", color="blue", waterproof="yes"),
        _variant("bare", "10", color="green"),  # no waterproof option at all
    )
    assert _hit(boots, SearchQuery(attributes={"features": ["waterproof", "red"]})) == (
        "red-dry",
        ["features=red"],
    )
    assert _hit(boots, SearchQuery(text="waterproof")) == (
        "blue-wet",
        ["waterproof=yes"],
    )


def test_a_word_naming_an_option_that_is_not_yes_no_asks_for_nothing() -> None:
    assert run(SearchQuery(text="red color")) == ("m-red", ["text: red"])


def test_attributes_spelled_two_ways_are_one_attribute() -> None:
    both = _product(_variant("v"), attributes={"colour": ("red",), "color": ("blue",)})
    assert _hit(both, SearchQuery(attributes={"color": ["red"]})) == ("v", ["color=red"])


def test_the_best_variant_is_in_stock_then_in_the_sorts_price_order_then_the_texts() -> None:
    red_cotton = _variant("red-cotton", "20", color="red", material="cotton")
    blue_cotton = _variant("blue-cotton", "10", color="blue", material="cotton")
    shirt = _product(red_cotton, blue_cotton)
    assert _hit(shirt, SearchQuery(text="red cotton"))[0] == "red-cotton"  # type: ignore[index]
    cheap_gone = Variant(
        id="cheap-gone", options={"color": "red"}, price=Decimal("1"), available=False
    )
    stocked = _product(cheap_gone, _variant("dear", "50", color="blue"))
    for sort in ("price_asc", "relevance"):
        assert _hit(stocked, SearchQuery(sort=sort, text="red"))[0] == "dear"  # type: ignore[index]
    assert _hit(shirt, SearchQuery(sort="price_asc", text="red"))[0] == "blue-cotton"  # type: ignore[index]
    same_price = _product(_variant("plain", "10", color="blue"), _variant("red", "10", color="red"))
    for sort in ("price_asc", "price_desc"):
        assert _hit(same_price, SearchQuery(sort=sort, text="red"))[0] == "red"  # type: ignore[index]
    twins = _product(_variant("first", "10", color="red"), _variant("second", "10", color="red"))
    assert _hit(twins, SearchQuery())[0] == "first"  # type: ignore[index]


def _found(**fields: Any) -> Hit:
    product = Product(id=fields.pop("id"), title="T", **fields.pop("product", {}))
    return Hit(product=product, score=fields.pop("score", 1.0), variant=fields.pop("variant", None))


def test_results_order_by_the_sorts_value_then_by_score() -> None:
    priced = Variant(id="v", options={}, price=Decimal("7.5"))
    with_price = _found(id="a", variant=priced)
    bare = _found(id="b")
    assert order_value("price_asc", with_price, 0.3) == 7.5
    assert order_value("price_desc", with_price, 0.3) == 7.5
    assert (order_value("price_asc", bare, 0.3), order_value("price_desc", bare, 0.3)) == (
        math.inf,
        -math.inf,
    )
    rated = _found(id="r", product={"rating": 4.5})
    assert (order_value("rating", rated, 0.3), order_value("rating", bare, 0.3)) == (4.5, NO_RATING)
    assert order_value("relevance", rated, 0.3) == 0.3

    low, high = _found(id="low", score=0.1), _found(id="high", score=0.9)
    top = _found(id="top", score=0.5)
    assert ordered("price_asc", [(low, 5.0), (high, 5.0), (top, 1.0)]) == [top, high, low]
    assert ordered("price_desc", [(low, 5.0), (high, 5.0), (top, 1.0)]) == [high, low, top]
    many = _found(id="many", score=0.1, product={"rating_count": 90})
    assert ordered("rating", [(low, 4.0), (many, 4.0), (high, 4.0), (top, 5.0)]) == [
        top,
        many,
        high,
        low,
    ]
    assert ordered("relevance", [(low, 0.0), (high, 9.0)]) == [low, high]


def test_plans_keep_each_value_once_and_the_exclusions_field() -> None:
    plan = Plan.of(
        SearchQuery(
            attributes={"colour": ["red", " "]},
            options={"color": ["red", "blue"]},
            exclude=[Exclusion(field="Colour", value="green"), Exclusion(value="the")],
        ),
        WORDS,
    )
    assert [(c.key, c.values) for c in plan.constraints] == [("color", ("red", "blue"))]
    assert [(e.value, key, words) for e, key, words in plan.exclusions] == [
        ("green", "color", frozenset({"green"})),
        ("the", None, frozenset({"the"})),
    ]
    assert Plan.of(SearchQuery(text="a" * 3998 + " zebra"), WORDS).text_tokens == ["z"]


def test_words_are_stems_without_a_stray_s_nor_a_word_of_forty_letters() -> None:
    words = Words(analyzer())
    assert words("Women's Running Shoes") == {"women", "run", "shoe"}
    assert words("x" * 39) == {"x" * 39} and words("x" * 40) == frozenset()
    assert words("Women's Running Shoes") == {"women", "run", "shoe"}  # from the cache


def test_option_values_are_compared_as_sizes_spellings_or_amounts() -> None:
    assert same_option_value("Size", "L", "large")
    assert same_option_value("size", "queen", "Queen Sized")
    assert same_option_value("color", "gray", "grey")
    assert same_option_value("color", "space gray", "Space Grey")
    assert spellings("gray") == ("gray", "grey") and spellings("red") == ("red",)
