"""``Ask`` keeps a request's words and its meaning in step."""

from __future__ import annotations

from decimal import Decimal

from cartagent.retrieval import Exclusion, PriceRange, SearchQuery
from cartagent.tuning.listing import Facet
from cartagent.tuning.wording import Ask, ceil_to, floor_to, price_step

RED = Facet("option", "color", "red", "red")
BLUE = Facet("option", "color", "blue", "blue")
LEATHER = Facet("attribute", "material", "leather", "leather")


def test_words_and_meaning_are_recorded_together() -> None:
    ask = Ask().say("I want").ask_for(RED).ask_for(LEATHER).say("a", "ankle", "boots", ",")
    ask.category = "boots"
    ask.price(None, Decimal(80))
    assert ask.request() == "I want red leather an ankle boots,"
    assert ask.query() == SearchQuery(
        category="boots",
        attributes={"material": ["leather"]},
        options={"color": ["red"]},
        price=PriceRange(max=Decimal(80)),
    )


def test_a_follow_up_replaces_a_value_and_an_exclusion_drops_it() -> None:
    earlier = Ask().ask_for(RED).ask_for(LEATHER)
    later = earlier.restart().say("in blue").replace(BLUE).avoid(LEATHER)
    assert earlier.query().options == {"color": ["red"]}  # the earlier turn is untouched
    assert later.request() == "in blue"
    assert later.query() == SearchQuery(
        options={"color": ["blue"]}, exclude=[Exclusion(field="material", value="leather")]
    )


def test_text_facets_become_free_text_and_brands_exclude_by_field() -> None:
    ask = Ask().ask_for(Facet("text", "", "side burner", "side burner"))
    ask.avoid(Facet("brand", "brand", "Weber", "Weber"))
    assert ask.query() == SearchQuery(
        text="side burner", exclude=[Exclusion(field="brand", value="Weber")]
    )


def test_prices_round_to_the_steps_shoppers_use() -> None:
    assert price_step(Decimal("46.66")) == 5
    assert price_step(Decimal("226.11")) == 10
    assert price_step(Decimal("2291.87")) == 50
    assert ceil_to(Decimal("46.66"), Decimal(5)) == 50
    assert floor_to(Decimal("46.66"), Decimal(5)) == 45
