"""Follow-up templates: earlier requests as ``context``, a short refinement as the request.

The gold is the earlier meaning changed by exactly what the follow-up says, as the prompt's
instruction puts it ("a follow-up changes only what it mentions and keeps the rest"): a new
colour or size replaces the old one, a new price bound replaces the old bounds, an exclusion
drops the excluded value, and asking for another kind of product starts afresh (the labelled
set's "what about headphones" after "wireless earbuds" keeps nothing else).
"""

from __future__ import annotations

import random

from ..retrieval import CATEGORIES, COLORS
from .lexicon import AVAILABILITY
from .listing import Facet, Listing, Offer, is_quantity
from .wording import Ask, Draft, TemplateFn, ceiling_price, floor_price, money, subject

__all__ = ["FOLLOW_UP_TEMPLATES"]


_IN_STOCK = ("in stock", "available now", "ready to ship")


def _earlier(listing: Listing, offer: Offer, rng: random.Random) -> Ask:
    ask = subject(listing, offer, rng, 1, 2)
    ceiling = ceiling_price(offer, rng)
    if ceiling is not None and rng.random() < 0.3:
        ask.say("under", money(ceiling, rng)).price(None, ceiling)
    return ask


def _recolor(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    base = _earlier(listing, offer, rng)
    said = set(base.options.get("color", []))
    colors = [f for f in listing.alternatives(offer) if f.key == "color"]
    colors += [Facet("option", "color", c, c) for c in list(COLORS)[:14] if c not in said]
    new = rng.choice([c for c in colors if c.value not in said])
    wording = rng.choice(
        ("in {}", "{} instead", "what about in {}?", "do you have it in {}?", "same but {}")
    )
    after = base.restart().say(wording.format(new.words)).replace(new)
    return after.draft((base.request(),))


def _reprice(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    base = _earlier(listing, offer, rng)
    bound = floor_price(offer, rng)
    if bound is None:
        return None
    after = base.restart().price(None, bound)
    cheaper = rng.random() < 0.4
    if cheaper:
        after.say("cheaper,", "under", money(bound, rng))
        after.sort = "price_asc"
    else:
        wording = rng.choice(("under {} instead", "anything below {}?", "make it less than {}"))
        after.say(wording.format(money(bound, rng)))
    return after.draft((base.request(),))


def _resize(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    sizes = [
        f
        for f in listing.alternatives(offer)
        if f.kind == "option" and (f.key == "size" or is_quantity(f))
    ]
    if not sizes:
        return None
    new = rng.choice(sizes)
    base = _earlier(listing, offer, rng)
    wording = rng.choice(("{} instead", "what about {}?", "do you have {}?", "and in {}"))
    after = base.restart().say(wording.format(new.words)).replace(new)
    return after.draft((base.request(),))


def _refine(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    base = _earlier(listing, offer, rng)
    after = base.restart()
    wanted = {(k, v) for table in (base.attributes, base.options) for k, vs in table.items()
              for v in vs}  # fmt: skip
    said = [f for f in offer.facets if f.kind != "brand" and (f.key, f.value) in wanted]
    said = [f for f in said if f.key in ("color", "material") or f.kind == "attribute"]
    kind = rng.choice(("stock", "rating", "cheapest", "exclude" if said else "stock"))
    if kind == "stock":
        after.say(rng.choice(("only", "just the ones")), rng.choice(_IN_STOCK))
        after.available_only = True
    elif kind == "rating":
        after.say(rng.choice(("best rated ones", "sort by best rated", "top rated only")))
        after.sort = "rating"
    elif kind == "cheapest":
        after.say(rng.choice(("show me the cheapest", "cheapest first", "lowest price first")))
        after.sort = "price_asc"
    else:
        facet = rng.choice(said)
        after.say(rng.choice(("actually, not", "no", "but not")), facet.words).avoid(facet)
    return after.draft((base.request(),))


_ELSEWHERE = tuple(CATEGORIES)


def _switch(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    other = rng.choice([c for c in _ELSEWHERE if c != listing.category])
    earlier = Ask().say(other)
    ceiling = ceiling_price(offer, rng)
    if ceiling is not None and rng.random() < 0.5:
        earlier.say("under", money(ceiling, rng))
    after = Ask()
    after.category = listing.category
    wording = rng.choice(("what about {}?", "do you have {}?", "show me {} instead",
                          "actually I need {}"))  # fmt: skip
    after.say(wording.format(listing.plural))
    return after.draft((earlier.request(),))


def _two_turns(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    first = subject(listing, offer, rng, 1, 2)
    ceiling = ceiling_price(offer, rng)
    if ceiling is None:
        return None
    second = first.restart().say(rng.choice(("under", "less than")), money(ceiling, rng))
    second.price(None, ceiling)
    after = second.restart()
    if rng.random() < 0.5:
        after.say(rng.choice(AVAILABILITY), "only")
        after.available_only = True
    else:
        after.say(rng.choice(("best rated first", "top rated please")))
        after.sort = "rating"
    return after.draft((first.request(), second.request()))


FOLLOW_UP_TEMPLATES: tuple[tuple[str, TemplateFn], ...] = (
    ("recolor", _recolor),
    ("reprice", _reprice),
    ("resize", _resize),
    ("refine", _refine),
    ("switch", _switch),
    ("two_turns", _two_turns),
)
"""The follow-up templates by name."""
