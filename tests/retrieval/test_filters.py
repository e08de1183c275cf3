"""The shared exact filter: one product, one query, which variant matches and why."""

from __future__ import annotations

from decimal import Decimal

from cartagent.catalog import Product, Variant
from cartagent.retrieval.filters import (
    Plan,
    Words,
    analyzer,
    check,
    order_value,
    ordered,
    prep,
    same_option_value,
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


def test_an_amount_is_the_same_value_however_its_unit_is_spaced() -> None:
    assert same_option_value("storage", "128 gb", "128GB")
    assert same_option_value("capacity", "1.5 l", "1.5L")
    assert not same_option_value("storage", "128 gb", "1TB")
    assert not same_option_value("storage", "64 gb", "128GB")
    assert same_option_value("color", "Grey", "gray") and not same_option_value(
        "color", "red", "blue"
    )


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
