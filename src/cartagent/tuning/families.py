"""Phrasing families: named ways shoppers ask, each a few templates that write examples.

A template takes a :class:`~cartagent.tuning.listing.Listing`, one of its offers and an rng, and
writes a :class:`~cartagent.tuning.wording.Draft` (request, earlier requests, gold query) or
``None`` when the product gives it nothing to say (no size to change, no colour to exclude).
The template is the unit the dataset splits by, so every family has at least three: one for
dev, one for test, the rest for training (see :mod:`cartagent.tuning.dataset`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..retrieval import BRANDS, COLORS, Sort
from .follow_ups import FOLLOW_UP_TEMPLATES
from .languages import LANGUAGE_TEMPLATES
from .lexicon import AVAILABILITY, OCCASIONS, RELATIONS, SLANG, SYNONYMS
from .listing import Facet, Listing, Offer, content_words, is_quantity
from .typos import misspell
from .wording import (
    Ask,
    Draft,
    TemplateFn,
    amount,
    ceil_to,
    ceiling_price,
    describe,
    floor_price,
    money,
    pick,
    price_step,
    subject,
)

__all__ = ["FAMILIES", "Family", "Template", "TemplateFn", "family_named"]

_BRAND_OF = {form: brand for brand, forms in BRANDS.items() for form in forms}


@dataclass(frozen=True)
class Template:
    """One wording of a family, e.g. ``price/between``."""

    name: str
    write: TemplateFn


@dataclass(frozen=True)
class Family:
    """A named way of asking, with its templates."""

    name: str
    description: str
    templates: tuple[Template, ...]
    weight: int = 1
    """How often the family is drawn, relative to the others."""
    about_product: bool = True
    """False when the requests do not describe the product they were drawn with."""


# ------------------------------------------------------------------------------- helpers


def _article(listing: Listing) -> str:
    """ "a" (made "an" where needed when the request is joined) or "some" for plural nouns."""
    return "some" if listing.noun.endswith("s") else "a"


def _exclusions(listing: Listing, offer: Offer) -> list[Facet]:
    """Values the shopper could rule out: other variants' values, other colours, other brands."""
    found = [
        f
        for f in listing.alternatives(offer)
        if f.kind in ("attribute", "text") or f.key == "color" or f.key.endswith(" color")
    ]
    if any(f.key == "color" for o in listing.offers for f in o.facets):
        have = {f.value for f in offer.facets if f.key == "color"}
        found.extend(Facet("option", "color", c, c) for c in list(COLORS)[:12] if c not in have)
    for rival in listing.rivals:
        found.append(Facet("brand", "brand", _BRAND_OF.get(rival.lower(), rival), rival))
    return found


def _frame(ask: Ask, *lead: str) -> Ask:
    """Put ``lead`` words in front of what ``ask`` has said so far."""
    ask.words[:0] = [w for w in lead if w]
    return ask


# ---------------------------------------------------------------------------------- plain


def _plain_bare(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    return subject(listing, offer, rng, 0, 3).draft()


def _plain_noun_first(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    facets = pick(offer, listing, rng, 1, 3)
    if not facets:
        return None
    ask = Ask().say(listing.noun)
    ask.category = listing.category
    for facet in facets:
        ask.say(",").ask_for(facet)
    return ask.draft()


def _plain_in(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    options = [f for f in offer.facets if f.key in ("color", "material")]
    if not options:
        return None
    rest = [f for f in pick(offer, listing, rng, 0, 1) if f not in options]
    ask = describe(Ask(), listing, rest, rng, plural=rng.random() < 0.4)
    chosen = rng.choice(options)
    return ask.say("in").ask_for(chosen).draft()


def _plain_for_whom(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    if listing.gender is None or listing.gender.value not in ("women", "men", "kids"):
        return None
    facets = [f for f in pick(offer, listing, rng, 0, 2) if f.key != "gender"]
    ask = describe(Ask(), listing, facets, rng, plural=rng.random() < 0.5)
    return ask.say("for").ask_for(listing.gender, listing.gender.value).draft()


# ----------------------------------------------------------------------------- paraphrase


def _looking_for(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = subject(listing, offer, rng)
    lead = rng.choice(("I'm looking for", "looking for", "I am searching for", "searching for"))
    return _frame(ask, lead, _article(listing)).draft()


def _question(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = describe(Ask(), listing, pick(offer, listing, rng, 0, 2), rng, plural=True)
    lead = rng.choice(("do you have any", "do you sell", "got any", "are there any"))
    return _frame(ask, lead).say("?").draft()


def _need(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = subject(listing, offer, rng)
    lead = rng.choice(("I need", "I want to buy", "can you find me", "help me find"))
    return _frame(ask, lead, _article(listing)).draft()


def _synonym(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    nouns = SYNONYMS.get(listing.category)
    if not nouns:
        return None
    facets = pick(offer, listing, rng, 0, 2)
    ask = describe(Ask(), listing, facets, rng, noun=rng.choice(nouns))
    return _frame(ask, rng.choice(("show me", "", "find", "any"))).draft()


def _occasion(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = subject(listing, offer, rng, 0, 1)
    occasion = rng.choice(OCCASIONS)
    ask.say("for", occasion)
    ask.want(Facet("text", "", content_words(occasion), occasion))
    return ask.draft()


# --------------------------------------------------------------------------------- casual


def _texting(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = describe(Ask(), listing, pick(offer, listing, rng, 0, 2), rng, plural=True)
    lead = rng.choice(("u got any", "any", "need", "got"))
    tail = rng.choice(("??", "asap pls", "pls", "thx", "?? thx", "plz"))
    _frame(ask, lead).say(tail)
    return Draft(ask.request().lower(), (), ask.query())


def _slang(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    nouns = SLANG.get(listing.category)
    if not nouns:
        return None
    facets = pick(offer, listing, rng, 0, 2)
    ask = describe(Ask(), listing, facets, rng, noun=rng.choice(nouns))
    lead = rng.choice(("yo lookin for some", "need new", "wanna cop some", "tryna find"))
    tail = rng.choice(("", "fr", "ngl", "lol", "if u have em"))
    return _frame(ask, lead).say(tail).draft()


def _terse(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = subject(listing, offer, rng, 1, 3)
    ceiling = ceiling_price(offer, rng)
    if ceiling is not None and rng.random() < 0.5:
        ask.say("under", amount(ceiling, rng, "bucks")).price(None, ceiling)
    ask.say(rng.choice(("tbh", "lol", "thx", "pls", "")))
    return Draft(ask.request().lower(), (), ask.query())


def _emoji(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    ask = subject(listing, offer, rng, 0, 2)
    lead = rng.choice(("", "🔥", "👀", "✨"))
    tail = rng.choice(("🔥🔥", "🙏", "😍", "!!", "🛒"))
    return _frame(ask, lead).say(tail).draft()


# ---------------------------------------------------------------------------------- typos


def _typo(noise: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        ask = subject(listing, offer, rng, 1, 3)
        if rng.random() < 0.3:
            ceiling = ceiling_price(offer, rng)
            if ceiling is not None:
                ask.say("under", money(ceiling, rng)).price(None, ceiling)
        noisy = misspell(ask.request(), noise, rng, words=rng.choice((1, 1, 2)))
        return None if noisy is None else Draft(noisy, (), ask.query())

    return write


# ---------------------------------------------------------------------------------- units


def _quantity(offer: Offer) -> Facet | None:
    found = [f for f in offer.facets if is_quantity(f)]
    return found[0] if found else None


# Canonical unit -> how shoppers write it, the short form first.
_UNIT_WORDS = {
    "oz": ("oz", "ounce"), "ml": ("ml", "milliliter"), "l": ("l", "liter", "litre"),
    "gb": ("gb",), "tb": ("tb",), "inch": ("in", "inch"), "mm": ("mm",), "cm": ("cm",),
    "ft": ("ft", "foot"), "mah": ("mah",), "lb": ("lb", "pound"), "kg": ("kg",),
    "pack": ("pack", "pk"), "pieces": ("piece",), "cup": ("cup",), "gal": ("gal", "gallon"),
}  # fmt: skip
_UNIT_PLURALS = {
    "ounce": "ounces", "milliliter": "milliliters", "liter": "liters", "litre": "litres",
    "inch": "inches", "foot": "feet", "pound": "pounds", "piece": "pieces", "cup": "cups",
    "gallon": "gallons", "lb": "lbs",
}  # fmt: skip


def _units(style: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        quantity = _quantity(offer)
        if quantity is None:
            return None
        number, unit = quantity.value.split(" ", 1)
        forms = _UNIT_WORDS.get(unit)
        if forms is None:
            return None
        suffix = " ram" if quantity.key == "ram" else ""
        others = [f for f in pick(offer, listing, rng, 0, 2) if f is not quantity]
        others = [f for f in others if not is_quantity(f)]
        ask = Ask()
        if style == "compact":
            ask.ask_for(quantity, f"{number}{forms[0]}{suffix}")
            describe(ask, listing, others, rng)
        elif style == "hyphen":
            long_form = forms[-1]
            ask.ask_for(quantity, f"{number}-{long_form}{suffix}")
            describe(ask, listing, others, rng)
        else:
            describe(ask, listing, others, rng)
            form = rng.choice(forms)
            if number != "1":
                form = _UNIT_PLURALS.get(form, form)
            words = f"{number} {form}{suffix}"
            ask.say(",").ask_for(quantity, words)
        return ask.draft()

    return write


# ---------------------------------------------------------------------------------- price


_Bounds = tuple[str, Decimal | None, Decimal | None]


def _price_words(kind: str, offer: Offer, rng: random.Random) -> _Bounds | None:
    """(words, min, max) of one price wording for the offer, or ``None``."""
    high, low = ceiling_price(offer, rng), floor_price(offer, rng)
    if high is None:
        return None
    if kind == "under":
        return f"{rng.choice(('under', 'below'))} {money(high, rng)}", None, high
    if kind == "less_than":
        cue = rng.choice(("less than", "no more than", "at most", "max"))
        return f"{cue} {money(high, rng)}", None, high
    if kind == "or_less":
        return f"{money(high, rng)} {rng.choice(('or less', 'or under'))}", None, high
    if kind == "budget":
        cue = rng.choice(("my budget is", "budget", "budget of"))
        return f"{cue} {money(high, rng)}", None, high
    if kind == "around":
        # The parser's convention for "around X": X less 20% to X plus 20%, in whole units.
        target = ceil_to(high, price_step(high))
        words = f"{rng.choice(('around', 'about', 'roughly'))} {money(target, rng)}"
        one = Decimal(1)
        low, high = (target * Decimal("0.8")).quantize(one), (target * Decimal("1.2")).quantize(one)
        return words, low, high
    if low is None:
        return None
    if kind == "over":
        cue = rng.choice(("over {}", "more than {}", "at least {}"))
        words = cue.format(money(low, rng)) if rng.random() < 0.75 else f"${int(low)} and up"
        return words, low, None
    if kind == "between":
        style = rng.choice(("$", "dollars", "bucks"))
        start = amount(low, rng, "$") if style == "$" else str(int(low))
        cue = rng.choice(("between {} and {}", "from {} to {}"))
        return cue.format(start, amount(high, rng, style)), low, high
    if rng.random() < 0.5:
        return f"${int(low)}-${int(high)}", low, high
    return f"{int(low)}-{int(high)} {rng.choice(('dollars', 'bucks'))}", low, high


def _priced(kind: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        found = _price_words(kind, offer, rng)
        if found is None:
            return None
        words, low, high = found
        ask = subject(listing, offer, rng, 0, 2).price(low, high)
        if rng.random() < 0.3:
            ask.words.insert(0, words)
        else:
            ask.say(rng.choice(("", ",")), words)
        return ask.draft()

    return write


# ------------------------------------------------------------------------------ exclusion


def _excluding(kind: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        pool = _exclusions(listing, offer)
        facets = pick(offer, listing, rng, 0, 2)
        if kind == "any_but":  # "grey boots, any color but green" would contradict itself
            facets = [f for f in facets if f.key not in ("color", "material")]
        ask = describe(Ask(), listing, facets, rng)
        if kind == "brand":
            pool = [f for f in pool if f.kind == "brand"]
        elif kind == "any_but":
            pool = [f for f in pool if f.key in ("color", "material")]
        elif kind == "without":
            pool = [f for f in pool if f.kind == "text" or f.key == "material"]
        else:
            pool = [f for f in pool if f.kind != "brand"]
        if ask.brand is not None:
            pool = [f for f in pool if f.kind != "brand"]
        if not pool:
            return None
        facet = rng.choice(pool)
        if kind == "not":
            ask.say(rng.choice((",", "but", ""))).say("not", facet.words)
        elif kind == "no":
            ask.say(rng.choice((",", "with", ""))).say("no", facet.words)
            same = [f for f in pool if f.key == facet.key and f.value != facet.value]
            if same and facet.kind != "brand" and rng.random() < 0.3:
                second = rng.choice(same)
                ask.say("or", second.words).avoid(facet)
                facet = second
        elif kind == "without":
            ask.say("without", facet.words)
        elif kind == "any_but":
            ask.say(",", f"any {facet.key}", rng.choice(("but", "except")), facet.words)
        else:
            ask.say(rng.choice(("not from", "not by", "but not", ", no")), facet.words)
        return ask.avoid(facet).draft()

    return write


# ------------------------------------------------------------------------- sort & rating

_SORTS: dict[str, tuple[Sort, tuple[tuple[str, str], ...]]] = {
    # name: (sort, (words before the noun phrase, words after it) choices)
    "price_asc": ("price_asc", (("cheapest", ""), ("", ", cheapest first"),
                                ("", "sorted by price low to high"), ("lowest price", ""))),
    "rating": ("rating", (("best rated", ""), ("top rated", ""), ("", ", highest rated first"),
                          ("", "with the best reviews"))),
    "price_desc": ("price_desc", (("most expensive", ""), ("", ", price high to low"),
                                  ("priciest", ""), ("", "most expensive first"))),
    "cheap": ("price_asc", (("cheap", ""), ("affordable", ""), ("inexpensive", ""),
                            ("budget", ""))),
}  # fmt: skip


def _sorted(kind: str) -> TemplateFn:
    sort, wordings = _SORTS[kind]

    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
        ask = subject(listing, offer, rng, 0, 2)
        before, after = rng.choice(wordings)
        ask.sort = sort
        return _frame(ask, before).say(after).draft()

    return write


def _rating_value(listing: Listing, rng: random.Random) -> float:
    choices = [3.0, 3.5, 4.0, 4.5]
    if listing.rating is not None:
        choices = [c for c in choices if c <= listing.rating] or [3.0]
    return rng.choice(choices)


def _rated(kind: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
        ask = subject(listing, offer, rng, 0, 2)
        value = _rating_value(listing, rng)
        stars = f"{value:g}"
        if kind == "stars_up":
            ask.say(rng.choice((f"{stars} stars and up", f", {stars}+ stars",
                                f"{stars} stars or more")))  # fmt: skip
        elif kind == "rated":
            ask.say(rng.choice((f"rated {stars} or higher", f"rated at least {stars}",
                                f"with a rating of {stars} or above")))  # fmt: skip
        else:
            ask.say(rng.choice((f"with at least {stars} stars", f"minimum {stars} stars",
                                f", at least {stars} stars")))  # fmt: skip
        ask.min_rating = value
        return ask.draft()

    return write


# ---------------------------------------------------------------------------------- multi


_EXTRA_SORTS: tuple[tuple[Sort, str], ...] = (
    ("price_asc", "cheapest first"),
    ("rating", "best rated"),
    ("price_desc", "most expensive first"),
)


def _extras(ask: Ask, listing: Listing, offer: Offer, rng: random.Random, count: int) -> None:
    """Add ``count`` of: a price bound, a sort, a minimum rating, in stock only, an exclusion."""
    kinds = ["price", "sort", "rating", "stock", "exclude"]
    for kind in rng.sample(kinds, count):
        ceiling = ceiling_price(offer, rng)
        if kind == "price" and ceiling is not None:
            ask.say(",", "under", money(ceiling, rng)).price(None, ceiling)
        elif kind == "sort":
            sort, words = rng.choice(_EXTRA_SORTS)
            ask.say(",", words)
            ask.sort = sort
        elif kind == "rating":
            value = _rating_value(listing, rng)
            ask.say(",", f"{value:g} stars and up")
            ask.min_rating = value
        elif kind == "stock":
            ask.say(",", rng.choice(AVAILABILITY))
            ask.available_only = True
        elif kind == "exclude":
            pool = [f for f in _exclusions(listing, offer) if f.kind != "brand"]
            if pool:
                facet = rng.choice(pool)
                ask.say(",", "no", facet.words).avoid(facet)


def _multi(kind: str) -> TemplateFn:
    def write(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
        if kind == "sentence":
            ask = subject(listing, offer, rng, 2, 4)
            _frame(ask, rng.choice(("I want", "I'd like", "please find")), _article(listing))
        elif kind == "commas":
            facets = pick(offer, listing, rng, 2, 4)
            ask = Ask().say(listing.noun)
            ask.category = listing.category
            for facet in facets:
                ask.say(",").ask_for(facet)
        else:
            ask = subject(listing, offer, rng, 2, 4)
        _extras(ask, listing, offer, rng, rng.randint(2, 3))
        if kind == "run_on":
            return Draft(ask.request().replace(",", ""), (), ask.query())
        return ask.draft()

    return write


# ---------------------------------------------------------------------------------- vague

_BROWSING = (
    "show me something nice",
    "what do you recommend?",
    "surprise me",
    "just browsing",
    "show me what you have",
    "what's popular?",
    "anything good today?",
    "I don't know what I want yet",
)


def _browse(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    return Ask().say(rng.choice(_BROWSING)).draft()


def _gift(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    relation = rng.choice(RELATIONS)
    lead, kind = rng.choice((("a gift for my", "gift"), ("need a present for my", "present"),
                             ("birthday gift for my", "birthday gift"),
                             ("something to give my", "")))  # fmt: skip
    ask = Ask().say(lead, relation)
    ask.want(Facet("text", "", content_words(f"{kind} {relation}"), relation))
    return ask.draft()


def _budget_only(listing: Listing, offer: Offer, rng: random.Random) -> Draft | None:
    ceiling = ceiling_price(offer, rng)
    if ceiling is None:
        return None
    lead = rng.choice(("anything under", "what can I get for less than", "show me stuff below",
                       "gifts under"))  # fmt: skip
    ask = Ask().say(lead, money(ceiling, rng)).price(None, ceiling)
    if lead.startswith("gifts"):
        ask.want(Facet("text", "", "gifts", "gifts"))
    return ask.draft()


def _occasion_only(listing: Listing, offer: Offer, rng: random.Random) -> Draft:
    occasion = rng.choice(OCCASIONS)
    lead = rng.choice(("something for", "ideas for", "what should I get for"))
    ask = Ask().say(lead, occasion)
    return ask.want(Facet("text", "", content_words(occasion), occasion)).draft()


# ------------------------------------------------------------------------------- registry


def _templates(family: str, writers: Sequence[tuple[str, TemplateFn]]) -> tuple[Template, ...]:
    return tuple(Template(f"{family}/{name}", write) for name, write in writers)


FAMILIES: tuple[Family, ...] = (
    Family("plain", "The product and a few of its facets, as a search box gets them.",
           _templates("plain", (("bare", _plain_bare), ("noun_first", _plain_noun_first),
                                ("in", _plain_in), ("for_whom", _plain_for_whom))), weight=3),
    Family("paraphrase", "Sentences and questions around the product, synonyms, occasions.",
           _templates("paraphrase", (("looking_for", _looking_for), ("question", _question),
                                     ("need", _need), ("synonym", _synonym),
                                     ("occasion", _occasion))), weight=2),
    Family("casual", "Texting style, slang nouns, lower case, emoji.",
           _templates("casual", (("texting", _texting), ("slang", _slang), ("terse", _terse),
                                 ("emoji", _emoji)))),
    Family("typo", "Character noise (swaps, drops, doubles, neighbour keys); the gold is clean.",
           _templates("typo", tuple((n, _typo(n)) for n in ("swap", "drop", "double",
                                                            "neighbour"))), weight=2),
    Family("units", "Quantities with units: 32oz, 1.5-liter, '256 gb'.",
           _templates("units", tuple((s, _units(s)) for s in ("compact", "hyphen", "spelled"))),
           weight=2),
    Family("price", "Price bounds and ranges in many wordings.",
           _templates("price", tuple((k, _priced(k)) for k in (
               "under", "less_than", "or_less", "over", "between", "dash", "around", "budget"
           ))), weight=2),
    Family("exclusion", "Negations: not polyester, no red, without a feature, not a brand.",
           _templates("exclusion", tuple((k, _excluding(k)) for k in (
               "not", "no", "without", "any_but", "brand"))), weight=2),
    Family("multi", "Several constraints at once: facets, price, sort, rating, stock, exclusion.",
           _templates("multi", tuple((k, _multi(k)) for k in ("stacked", "commas", "sentence",
                                                              "run_on"))), weight=2),
    Family("sort", "Result order: cheapest, best rated, most expensive.",
           _templates("sort", tuple((k, _sorted(k)) for k in ("price_asc", "rating",
                                                              "price_desc", "cheap")))),
    Family("rating", "A minimum star rating.",
           _templates("rating", tuple((k, _rated(k)) for k in ("stars_up", "rated",
                                                               "at_least")))),
    Family("follow_up", "A refinement of earlier requests (context): the gold combines them.",
           _templates("follow_up", FOLLOW_UP_TEMPLATES), weight=2),
    Family("vague", "Requests with no product constraint: browsing, gifts, a budget only.",
           _templates("vague", (("browse", _browse), ("gift", _gift),
                                ("budget_only", _budget_only), ("occasion", _occasion_only))),
           about_product=False),
    Family("language", "Spanish, German and French requests (prices in euros).",
           _templates("language", LANGUAGE_TEMPLATES)),
)  # fmt: skip
"""Every family, in a fixed order."""


def family_named(name: str) -> Family:
    """The family called ``name``; ``KeyError`` if there is none."""
    for family in FAMILIES:
        if family.name == name:
            return family
    raise KeyError(name)
