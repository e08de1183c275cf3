"""A product through the query conventions: canonical values, keys and the words for them."""

from __future__ import annotations

from decimal import Decimal

from cartagent.catalog import Product, Variant
from cartagent.tuning.listing import Facet, content_words, facet_for, listing_for


def test_colours_materials_and_sizes_take_the_vocabulary_canonical_values() -> None:
    assert facet_for("color", "grey") == Facet("option", "color", "gray", "grey")
    assert facet_for("material", "natural rubber") == Facet(
        "attribute", "material", "rubber", "natural rubber"
    )
    assert facet_for("size", "large") == Facet("option", "size", "L", "size large")
    assert facet_for("size", "10.5") == Facet("option", "size", "10.5", "size 10.5")
    assert facet_for("rise", "high-waist") == Facet("attribute", "waist", "high", "high-waist")
    assert facet_for("fit", "regular") == Facet("attribute", "fit", "regular", "regular fit")


def test_quantities_are_number_and_unit_under_the_parsers_key() -> None:
    assert facet_for("capacity", "1000ml") == Facet("option", "capacity", "1000 ml", "1000ml")
    assert facet_for("storage", "256GB SSD") == Facet("option", "storage", "256 gb", "256gb")
    assert facet_for("pieces", "1000") == Facet("option", "pieces", "1000 pieces", "1000 pieces")
    ram = facet_for("ram", "16GB")
    assert ram == Facet("option", "ram", "16 gb", "16gb ram")


def test_ambiguous_or_empty_values_are_left_out() -> None:
    assert facet_for("network", "5G") is None  # not five grams
    assert facet_for("features", "none") is None
    assert facet_for("compartment", "laptop") is None  # a category word
    assert facet_for("thread count", "400") is None  # a number without a unit


def test_a_yes_option_asks_for_its_own_name_and_unknown_words_are_text() -> None:
    assert facet_for("waterproof", "yes") == Facet(
        "attribute", "features", "waterproof", "waterproof"
    )
    grinder = facet_for("features", "built-in grinder")
    assert grinder is not None
    assert (grinder.kind, grinder.value, grinder.feature) == ("text", "built-in grinder", True)
    assert facet_for("brightness", "high") == Facet(
        "text", "", "high brightness", "high brightness"
    )
    assert facet_for("material", "olefin") == Facet("attribute", "material", "olefin", "olefin")


def test_content_words_drop_stop_words() -> None:
    assert content_words("a gift for my dad") == "gift dad"


def _product(title: str, **options: str) -> Product:
    variant = Variant(id="v1", options=options, price=Decimal("19.99"))
    return Product(id="p1", title=title, category="Pets > Beds", variants=(variant,))


def test_the_category_is_canonical_and_the_noun_is_what_the_title_says() -> None:
    listing = listing_for(_product("Furhaven Men's Orthopedic Dog Bed", color="charcoal"))
    assert listing is not None
    assert (listing.category, listing.noun, listing.plural) == ("pet bed", "dog bed", "dog beds")
    assert listing.gender == Facet("attribute", "gender", "men", "men's")
    assert listing.offers[0].facets == (Facet("option", "color", "gray", "charcoal"),)


def test_a_facet_already_in_the_noun_is_not_repeated() -> None:
    listing = listing_for(_product("Patagonia Fleece Jacket", material="fleece", size="M"))
    assert listing is not None
    assert listing.category == "fleece jacket"
    assert [f.key for f in listing.offers[0].facets] == ["size"]


def test_a_product_without_a_category_noun_has_no_listing() -> None:
    product = Product(id="x", title="Zorblax 3000", variants=())
    assert listing_for(product) is None
