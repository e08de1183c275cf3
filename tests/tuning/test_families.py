"""Every family writes valid gold from structured data; wording and meaning stay in step."""

from __future__ import annotations

import random

import pytest

from cartagent.catalog import Product
from cartagent.evals.scoring import facts
from cartagent.retrieval import SearchQuery, parse_rules
from cartagent.retrieval.prompt import query_json
from cartagent.tuning import FAMILIES, Dataset, Family
from cartagent.tuning.families import family_named
from cartagent.tuning.listing import listing_for


def test_families_have_unique_template_names_and_at_least_three_each() -> None:
    names = [t.name for f in FAMILIES for t in f.templates]
    assert len(names) == len(set(names))
    for family in FAMILIES:
        assert len(family.templates) >= 3, family.name
        assert all(t.name.startswith(family.name + "/") for t in family.templates)


def test_the_brief_s_kinds_of_request_each_have_a_family() -> None:
    assert {f.name for f in FAMILIES} >= {
        "plain", "paraphrase", "casual", "typo", "units", "price", "exclusion", "multi",
        "sort", "rating", "follow_up", "vague", "language",
    }  # fmt: skip


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_template_writes_valid_gold_for_some_products(
    family: Family, products: tuple[Product, ...]
) -> None:
    listings = [found for found in map(listing_for, products) if found is not None]
    rng = random.Random(family.name)
    for template in family.templates:
        written = 0
        for _ in range(300):
            listing = rng.choice(listings)
            draft = template.write(listing, rng.choice(listing.offers), rng)
            if draft is None:
                continue
            written += 1
            assert draft.request.strip(), template.name
            assert isinstance(draft.gold, SearchQuery)
            # The completion round-trips: what the model learns is exactly the gold.
            assert SearchQuery.model_validate_json(query_json(draft.gold)) == draft.gold
            if family.name == "follow_up":
                assert draft.context, template.name
            if family.about_product and family.name != "follow_up":
                assert draft.gold.category, (template.name, draft.request)
        assert written >= 20, template.name


def test_follow_up_gold_combines_the_earlier_request_with_the_change(dataset: Dataset) -> None:
    examples = [e for s in dataset.splits.values() for e in s if e.family == "follow_up"]
    recolored = [e for e in examples if e.template == "follow_up/recolor"]
    assert recolored
    for example in recolored:
        # The request names only a colour; the category can only come from the context.
        assert example.gold.category is not None
        assert len(example.gold.options["color"]) == 1
        assert example.gold.category not in example.request
    for example in (e for e in examples if e.template == "follow_up/switch"):
        assert example.gold == SearchQuery(category=example.gold.category)


def test_vague_requests_constrain_no_product(dataset: Dataset) -> None:
    vague = [e for s in dataset.splits.values() for e in s if e.family == "vague"]
    assert vague
    for example in vague:
        assert example.product_id is None
        assert example.gold.category is None and not example.gold.options


def test_the_rule_parser_mostly_agrees_with_the_plain_family(dataset: Dataset) -> None:
    """The gold follows the project's conventions: the rule parser reads most plain requests the
    same way, and almost everything it does read is in the gold (misses are vocabulary gaps:
    brands and categories the parser does not know)."""
    plain = [e for s in dataset.splits.values() for e in s if e.family == "plain"]
    assert len(plain) >= 100
    agree = same = said = 0
    for example in plain:
        got = facts(parse_rules(example.request, context=example.context))
        want = facts(example.gold)
        agree += got == want
        same += len(got & want)
        said += len(got)
    share = agree / len(plain)
    precision = same / said
    assert share >= 0.6, f"rule parser agrees on {share:.0%} of plain requests"
    assert precision >= 0.9, f"rule parser's facts found in the gold: {precision:.0%}"


def test_family_named_finds_a_family_or_raises() -> None:
    assert family_named("price").name == "price"
    with pytest.raises(KeyError):
        family_named("nonsense")
