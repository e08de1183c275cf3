"""Questions about a product's options: which option is asked, and the answer."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cartagent.assistant.product_questions import (
    ALL_OPTIONS,
    describe_options,
    find_option_question,
)
from cartagent.catalog import Product, Variant


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("what sizes does it come in?", "size"),
        ("which colours are there?", "color"),
        ("what colors do you have it in?", "color"),
        ("what other colors does it come in", "color"),
        ("what materials are they made of?", "material"),
        ("what sizes does the first one come in", "size"),
        ("in which sizes?", "size"),
        ("what are the options?", ALL_OPTIONS),
        ("what options does it have", ALL_OPTIONS),
        ("what size should I get", None),
        ("what is the price", None),
        ("which one is cheaper", None),
        ("which one is the best rated?", None),
        ("which ones are the cheapest?", None),
        ("red t-shirt", None),
        ("which of those can i actually buy right now", None),  # "those" is no option
        ("which of them come in red", None),
    ],
)
def test_the_option_asked_about_is_read(text: str, asked: str | None) -> None:
    assert find_option_question(text) == asked


def _boot(vid: str, size: str, material: str, available: bool = True) -> Variant:
    options = {"size": size, "material": material}
    return Variant(id=vid, options=options, price=Decimal("99"), available=available)


BOOTS = Product(
    id="boots",
    title="Hiking Boots",
    variants=(
        _boot("a", "12", "leather"),
        _boot("b", "9", "synthetic", available=False),
        _boot("c", "10.5", "leather"),
        _boot("d", "9", "leather"),
        _boot("e", "7", "suede", available=False),
    ),
)


def test_an_option_lists_its_values_in_order_and_what_is_sold_out() -> None:
    assert describe_options(BOOTS, "size") == "Hiking Boots: size 7, 9, 10.5, 12 (sold out: 7)."
    assert describe_options(BOOTS, ALL_OPTIONS).splitlines() == [
        "Hiking Boots, by option:",
        "- size 7, 9, 10.5, 12 (sold out: 7)",
        "- material leather, synthetic, suede (sold out: synthetic, suede)",
    ]
    assert describe_options(BOOTS, "color") == (
        "Hiking Boots: no choice of color; the options are size, material."
    )
    single = Product(id="p", title="Poster", variants=(Variant(id="v", price=Decimal("5")),))
    assert describe_options(single, "size") == "Poster: one version only, no options to choose."
