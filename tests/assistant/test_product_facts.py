"""Stock, price and feature questions about the product being talked about."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant import ProductCard
from cartagent.assistant.product_facts import FactQuestion, answer_fact, find_fact_question
from cartagent.catalog import Product, Variant

BOOTS = Product(
    id="boots",
    title="Hiking Boots",
    description="Sturdy boots for long trails. The sole is Vibram rubber.",
    category=("Shoes", "Hiking Boots"),
    attributes={"features": ("breathable",)},
    variants=(
        Variant(id="b9", options={"size": "9", "waterproof": "yes"}, price=Decimal("120.00")),
        Variant(
            id="b10",
            options={"size": "10", "waterproof": "no"},
            price=Decimal("99.50"),
            available=False,
        ),
        Variant(id="b11", options={"size": "11", "waterproof": "no"}, price=Decimal("101.00")),
    ),
)


def _card(variant_id: str) -> ProductCard:
    variant = next(v for v in BOOTS.variants if v.id == variant_id)
    return ProductCard(
        "boots", "Hiking Boots", variant_id, variant.price, "USD", variant.available, 1,
        dict(variant.options),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("is it in stock?", FactQuestion("stock")),
        ("Is the second one still available", FactQuestion("stock")),
        ("do you have it in stock", FactQuestion("stock")),
        ("the ceramic one's sold out, isn't it", FactQuestion("stock", "sold out")),
        ("it's in stock, right?", FactQuestion("stock")),
        ("can i get it now?", FactQuestion("stock")),
        ("can I order that one today", FactQuestion("stock")),
        ("the ceramic one is sold out", None),  # said, not asked
        ("how much is it?", FactQuestion("price")),
        ("how much does the first one cost", FactQuestion("price")),
        ("what's the price?", FactQuestion("price")),
        ("hw much", FactQuestion("price")),
        ("hw much is it?", FactQuestion("price")),
        ("is it waterproof?", FactQuestion("has", "waterproof")),
        ("does it have a vibram sole?", FactQuestion("has", "vibram sole")),
        ("are they breathable", FactQuestion("has", "breathable")),
        ("is that one gas?", FactQuestion("has", "gas")),
        ("are those leather", FactQuestion("has", "leather")),
        ("is the second one the stainless steel one?", FactQuestion("has", "stainless steel")),
        ("does it come in black?", FactQuestion("comes_in", "black")),
        ("do you have the first one in a size 11", FactQuestion("comes_in", "size 11")),
        ("is it available in size 9?", FactQuestion("comes_in", "size 9")),
        ("can I get them in red?", FactQuestion("comes_in", "red")),
        ("is it any good?", FactQuestion("rating")),
        ("are they worth the money", FactQuestion("rating")),
        ("what do people say about it?", FactQuestion("rating")),
        ("which one is the best rated?", None),  # a re-sort of the list
        ("is it cheaper?", None),
        ("is it a good gift?", None),
        ("is it for women", None),
        ("waterproof hiking boots", None),
        ("what sizes does it come in?", None),
        ("how much is shipping?", None),
        ("is it covered by the warranty?", None),
    ],
)
def test_the_question_is_read(text: str, expected: FactQuestion | None) -> None:
    assert find_fact_question(text) == expected


def test_stock_is_read_from_the_catalog_with_what_else_is_in_stock() -> None:
    stock = FactQuestion("stock")
    assert answer_fact(stock, BOOTS, _card("b9")) == (
        "Yes: Hiking Boots (9, waterproof) is in stock, 120.00 USD."
    )
    assert answer_fact(stock, BOOTS, _card("b10")) == (
        "No: Hiking Boots (10, not waterproof) is sold out. In stock: 9, waterproof (120.00 USD); "
        "11, not waterproof (101.00 USD)."
    )


def test_asked_whether_it_is_sold_out_yes_means_sold_out() -> None:
    question = find_fact_question("the second one's sold out, isn't it?")
    assert question is not None
    assert answer_fact(question, BOOTS, _card("b10")).startswith(
        "Yes: Hiking Boots (10, not waterproof) is sold out."
    )
    assert answer_fact(question, BOOTS, _card("b9")) == (
        "No: Hiking Boots (9, waterproof) is in stock, 120.00 USD."
    )


def test_the_price_is_the_variants_with_the_products_range() -> None:
    assert answer_fact(FactQuestion("price"), BOOTS, _card("b11")) == (
        "Hiking Boots (11, not waterproof) costs 101.00 USD (Hiking Boots costs 99.50 to "
        "120.00 USD, depending on the options). Tax and shipping are added at checkout."
    )


@pytest.mark.parametrize(
    ("variant", "feature", "answer"),
    [
        ("b9", "waterproof", "Yes: Hiking Boots (9, waterproof) says waterproof: yes."),
        ("b11", "waterproof", "No: Hiking Boots (11, not waterproof) says waterproof: no."),
        ("b9", "breathable", "Yes: Hiking Boots (9, waterproof) has features breathable."),
        ("b9", "vibram", 'Hiking Boots\'s description says: "The sole is Vibram rubber."'),
        (
            "b9",
            "heated",
            "The catalog does not say that Hiking Boots (9, waterproof) is or has heated",
        ),
    ],
)
def test_a_feature_is_answered_from_the_options_attributes_or_description(
    variant: str, feature: str, answer: str
) -> None:
    assert answer_fact(FactQuestion("has", feature), BOOTS, _card(variant)).startswith(answer)


def test_option_values_asked_are_answered_with_the_versions_that_have_them() -> None:
    def asked(text: str) -> str:
        question = find_fact_question(text)
        assert question is not None
        return answer_fact(question, BOOTS, _card("b9"))

    # Size 11 comes, but not waterproof as the card shown (b9) is: said, not hidden.
    assert asked("does it come in size 11?") == (
        "Not like this one (waterproof): Hiking Boots in size 11 comes as: 11, not waterproof "
        "(101.00 USD). Say 'add size 11' to put it in your cart."
    )
    same = answer_fact(FactQuestion("comes_in", "size 9"), BOOTS, _card("b11"))
    assert same.startswith(
        "Not like this one (not waterproof): Hiking Boots in size 9 comes as: 9,"
    )
    kept = answer_fact(FactQuestion("comes_in", "size 11"), BOOTS, _card("b10"))
    assert kept.startswith("Yes: Hiking Boots comes in size 11: 11, not waterproof (101.00 USD).")
    assert asked("is it available in size 10?") == "Hiking Boots in size 10 is sold out."
    assert asked("does it come in black?").startswith(
        "No: Hiking Boots does not come in black. Hiking Boots: no choice of color"
    )
    # Not an option value: answered as a feature.
    assert asked("does it come in a gift box?").startswith("The catalog does not say")


def test_how_good_it_is_is_its_rating_or_that_the_catalog_has_none() -> None:
    question = FactQuestion("rating")
    rated = BOOTS.model_copy(update={"rating": 4.25, "rating_count": 12})
    assert (
        answer_fact(question, rated, _card("b9"))
        == "Hiking Boots is rated 4.2 of 5 from 12 ratings."
    )
    assert answer_fact(question, BOOTS, _card("b9")).startswith(
        "The catalog has no ratings or reviews of Hiking Boots, so I cannot say how good it is."
    )


def test_a_feature_one_version_has_is_not_claimed_for_another() -> None:
    """The product lists every version's cover; the soft-cover card has no hard cover."""
    notebook = Product(
        id="nb",
        title="Notebook",
        attributes={"cover type": ("hard cover", "soft cover")},
        variants=(
            Variant(id="hard", options={"cover type": "hard cover"}, price=Decimal("9")),
            Variant(id="soft", options={"cover type": "soft cover"}, price=Decimal("7")),
        ),
    )

    def card(variant: str) -> ProductCard:
        return ProductCard("nb", "Notebook", variant, Decimal("7"), "USD", True, 1)

    soft = answer_fact(FactQuestion("has", "hard cover"), notebook, card("soft"))
    assert not soft.startswith("Yes"), soft
    hard = answer_fact(FactQuestion("has", "hard cover"), notebook, card("hard"))
    assert hard.startswith("Yes"), hard


def test_a_feature_asked_in_another_form_of_the_options_name_is_answered() -> None:
    earbuds = Product(
        id="eb",
        title="Wireless Earbuds",
        variants=(Variant(id="e1", options={"water resistance": "no"}, price=Decimal("50")),),
    )
    card = ProductCard("eb", "Wireless Earbuds", "e1", Decimal("50"), "USD", True, 1)
    question = find_fact_question("is the first one water resistant at all")
    assert question == FactQuestion("has", "water resistant")
    assert answer_fact(question, earbuds, card).startswith("No:")


def test_another_versions_value_is_answered_with_this_ones() -> None:
    """ "Is that one gas?" of the electric grill: no, and what it is instead."""
    grill = Product(
        id="g",
        title="Grill",
        variants=(
            Variant(id="e", options={"type": "electric", "size": "portable"}, price=Decimal("9")),
            Variant(id="c", options={"type": "gas", "size": "large"}, price=Decimal("9")),
        ),
    )
    card = ProductCard("g", "Grill", "e", Decimal("9"), "USD", True, 1)
    question = find_fact_question("is that one gas?")
    assert question is not None
    assert answer_fact(question, grill, card) == (
        "No: Grill (electric, portable) has type electric; gas is another version of it."
    )
    # Asked by the option's name, a value that is no yes or no is stated as it is.
    asked = answer_fact(FactQuestion("has", "typed"), grill, card)
    assert asked == "Grill (electric, portable) has type: electric."


def test_what_it_does_is_answered_from_the_option_or_value_its_words_name() -> None:
    hepa_options = {"features": "HEPA filter", "backlight": "none"}
    pet_options = {"features": "pet hair removal", "backlight": "white"}
    vacuum = Product(
        id="v",
        title="Vacuum Cleaner",
        variants=(
            Variant(id="h", options=hepa_options, price=Decimal("9")),
            Variant(id="p", options=pet_options, price=Decimal("9")),
        ),
    )
    hepa = ProductCard("v", "Vacuum Cleaner", "h", Decimal("9"), "USD", True, 1)
    pets = ProductCard("v", "Vacuum Cleaner", "p", Decimal("9"), "USD", True, 2)
    question = find_fact_question("does the first one pick up pet hair?")
    assert question == FactQuestion("has", "pick up pet hair")
    assert answer_fact(question, vacuum, hepa) == (
        "No: Vacuum Cleaner (HEPA filter, none) has features HEPA filter; pet hair removal is "
        "another version of it."
    )
    assert answer_fact(question, vacuum, pets).startswith("Yes: Vacuum Cleaner")
    # A word of the option's name ("light" of "backlight") asks for that option's value.
    lights = find_fact_question("does it light up at all?")
    assert lights == FactQuestion("has", "light up")
    assert answer_fact(lights, vacuum, pets).endswith("has backlight: white.")
    # "does it come in navy?" and "does it cost much?" are other questions.
    assert find_fact_question("does it come in navy?") == FactQuestion("comes_in", "navy")
    assert find_fact_question("does it cost much?") is None
