"""Each constraint of a search lined up with the words of the turn that say it."""

from __future__ import annotations

from decimal import Decimal

from cartagent.assistant.constraints import Constraint, constraints_of
from cartagent.retrieval import Exclusion, PriceRange, Searcher, SearchQuery


def _said(text: str, constraints: tuple[Constraint, ...]) -> dict[str, tuple[str, str]]:
    return {c.field: (text[c.span[0] : c.span[1]] if c.span else "", c.how) for c in constraints}


def test_each_constraint_has_the_words_that_say_it(tau_grounded_searcher: Searcher) -> None:
    text = "13 inch laptop w/ an i7 and 16 gigs of ram under 2500, in stock"
    query = tau_grounded_searcher.understand(text)
    said = _said(text, constraints_of(query, text, tau_grounded_searcher.vocabulary))
    assert said == {
        "category": ("laptop", "said"),
        "option:screen size": ("13 inch", "said"),
        "option:processor": ("i7", "said"),
        "option:ram": ("16 gigs", "said"),  # the catalog files "16 gigs" under 16GB
        "price:max": ("2500", "said"),
        "stock": ("stock", "said"),
    }


def test_a_value_read_from_another_language_or_a_use_is_glossed(
    tau_grounded_searcher: Searcher,
) -> None:
    text = "Ich suche wasserdichte Wanderschuhe, nicht schwarz"
    query = tau_grounded_searcher.understand(text)
    said = _said(text, constraints_of(query, text, tau_grounded_searcher.vocabulary))
    assert said["category"] == ("Wanderschuhe", "said")
    assert said["option:waterproof"] == ("wasserdichte", "glossed")
    assert said["exclude:color"] == ("schwarz", "glossed")
    snorkel = "want to film fish while snorkeling, what cam should i get"
    read = _said(snorkel, constraints_of(tau_grounded_searcher.understand(snorkel), snorkel))
    assert read["option:waterproof"] == ("snorkeling", "glossed")


def test_what_the_turn_does_not_say_was_carried_from_an_earlier_one() -> None:
    query = SearchQuery(
        category="backpack",
        options={"color": ["navy"]},
        exclude=[Exclusion(field="material", value="leather")],
        price=PriceRange(max=Decimal("200")),
    )
    found = constraints_of(query, "and in navy?")
    assert [(c.field, c.how) for c in found] == [
        ("category", "earlier"),
        ("option:color", "said"),
        ("exclude:material", "earlier"),
        ("price:max", "earlier"),
    ]
    assert found[1].record() == {
        "field": "option:color", "value": "navy", "span": [7, 11], "how": "said"
    }  # fmt: skip
