"""Questions about one product shown: "is it in stock?", "how much is it?", "is it
waterproof?", "does the second one have noise cancelling?", "does it come in black?", "is it
any good?".

:func:`find_fact_question` reads what is asked; :func:`answer_fact` answers it from the catalog's
product and the variant shown, and says so when the catalog does not tell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..catalog import Product, Variant
from ..retrieval import NO, YES, canonical_key, shared_words
from .cards import ProductCard, option_words
from .option_pick import describe_values, has_values, values_named
from .product_questions import describe_options

__all__ = ["STORE_MATTERS", "FactQuestion", "answer_fact", "find_fact_question"]

MAX_WORDS = 10
SOLD_OUT = "sold out"
MAX_LISTED = 3

# Longer forms first: "is that one gas?" is about "that one", not the feature "one gas".
_THE_ONE = (
    r"(?:this\s+one|that\s+one|the\s+\w+(?:\s+one)?|it|they|this|that|#\d{1,2}|number\s+\d{1,2})"
)
_STOCK = re.compile(
    rf"\b(?:is|are)\s+{_THE_ONE}\s+(?:still\s+)?(?:in\s+stock|available|sold\s+out|out\s+of\s+stock)"
    rf"|\b(?:do|does)\s+(?:you|the\s+store)\s+(?:still\s+)?have\s+{_THE_ONE}\s+in\s+stock"
    r"|^(?:still\s+)?(?:in\s+stock|available)\s*\?+\s*$|\bcan\s+i\s+(?:still\s+)?buy\s+(?:it|them)\b"
    # "can i get it now?": whether it can be had, not in what
    r"|\bcan\s+i\s+(?:still\s+)?(?:get|order|have)\s+(?:it|them|that\s+one|this\s+one)"
    r"\s+(?:now|today|right\s+now|right\s+away|yet)\s*\?*\s*$"
    # "the ceramic one's sold out, isn't it": said, then asked with a tag.
    rf"|^{_THE_ONE}(?:'s|\s+is|\s+are)\s+(?:still\s+)?(?:in\s+stock|available|sold\s+out"
    r"|out\s+of\s+stock)\b.*(?:\?|\b(?:isn't|is|aren't|are)\s+(?:it|they)\b|\bright\b)"
)
_PRICE = re.compile(
    rf"\b(?:how|hw)\s+much\s+(?:is|are|does|do|for|would)\b(?:\s+{_THE_ONE})?"
    rf"|\bwhat(?:'s|\s+is|\s+does)\s+(?:{_THE_ONE}\s+)?(?:the\s+|its\s+)?(?:price|cost)"
    rf"|\bwhat\s+does\s+{_THE_ONE}\s+cost\b|^(?:how|hw)\s+much\s*\?*\s*$|^(?:the\s+)?price\s*\?+\s*$"
)
_OBJECT = rf"(?:{_THE_ONE}|them|these|those)"
_COMES_IN = re.compile(
    rf"^(?:and\s+)?(?:(?:does|do)\s+{_THE_ONE}\s+come\s+in|(?:is|are)\s+{_THE_ONE}\s+available\s+in"
    rf"|do\s+you\s+have\s+{_OBJECT}\s+in|(?:can|could)\s+i\s+get\s+{_OBJECT}\s+in)\s+"
    r"(?:a\s+|an\s+)?(?P<value>[\w\s.-]{1,30}?)\s*\?*\s*$"
)
_RATING = re.compile(
    rf"^(?:and\s+)?(?:is|are)\s+{_THE_ONE}\s+(?:any\s+)?good\s*\?*\s*$"
    rf"|^(?:is|are)\s+{_THE_ONE}\s+worth\s+(?:it|the\s+money)"
    rf"|^how\s+(?:is|are)\s+{_THE_ONE}\s+rated|^how\s+(?:good\s+)?(?:is|are)\s+the\s+reviews"
    rf"|^what\s+do\s+(?:people|customers|others)\s+(?:say|think)\s+(?:about|of)\s+{_OBJECT}"
    rf"|^(?:any|what\s+are\s+the)\s+reviews(?:\s+(?:of|for)\s+{_OBJECT})?\s*\?*\s*$"
)
_HAS = re.compile(
    rf"^(?:and\s+)?(?:is|are)\s+(?:{_THE_ONE}|these|those)\s+(?P<is>[a-z][\w\s-]{{1,30}}?)\s*\?*\s*$"
    rf"|^(?:and\s+)?(?:does|do)\s+{_THE_ONE}\s+(?:have|come\s+with|include|support)\s+"
    r"(?:a\s+|an\s+|any\s+)?(?P<has>[a-z][\w\s-]{1,30}?)\s*\?*\s*$"
    # "does the first one light up at all?", "does it pick up pet hair?": what it does.
    rf"|^(?:and\s+)?(?:does|do)\s+{_THE_ONE}\s+(?P<does>(?!come\b|cost\b|have\b)[a-z][\w\s-]"
    r"{1,30}?)\s*\?+\s*$"
)
# Words after "is it" that are not a feature: a comparison, a judgement, a question about
# something else ("is it a good gift").
# What a question may end with that asks for nothing: "water resistant at all", "... tho".
_TRAILING = re.compile(r"\s+(?:at all|though|tho|then|anyway|really|btw)$")
# "is the second one the stainless steel one?": the feature is "stainless steel".
_THE_FEATURE = re.compile(r"^the\s+(?P<feature>.+?)\s+one$")


def _stems(text: str) -> frozenset[str]:
    """``text``'s stemmed words: "water resistant" and "water resistance" are alike."""
    return shared_words()(text)


_NOT_FEATURES = re.compile(
    r"\b(?:cheaper|dearer|more|less|better|worse|good|bad|worth|any|the\s+same|a\s+\w+|an\s+\w+"
    r"|for\s+\w+|in\s+stock|available|sold\s+out|out\s+of\s+stock|on\s+sale)\b"
)


# The store's terms, not the product's: "how much is shipping?" is a policy question.
STORE_MATTERS = re.compile(
    r"\b(?:shipping|delivery|postage|tax|taxes|returns?|refunds?|warranty|discount)\b"
)


@dataclass(frozen=True)
class FactQuestion:
    """What is asked about the product: its stock, its price, whether it ``has`` a feature,
    whether it ``comes_in`` option values (``feature`` holds the words asked), or how it is
    rated."""

    kind: Literal["stock", "price", "has", "comes_in", "rating"]
    feature: str = ""


def find_fact_question(text: str) -> FactQuestion | None:
    """The fact ``text`` asks about the product being talked about, or ``None``."""
    said = " ".join(text.casefold().split())
    if len(said.split()) > MAX_WORDS or STORE_MATTERS.search(said):
        return None
    if _RATING.search(said):
        return FactQuestion("rating")
    comes = _COMES_IN.search(said)
    if comes is not None and comes["value"] != "stock":  # "do you have it in stock" is below
        return FactQuestion("comes_in", comes["value"])
    stock = _STOCK.search(said)
    if stock is not None:
        gone = re.search(r"\b(?:sold\s+out|out\s+of\s+stock)\b", stock[0])
        return FactQuestion("stock", SOLD_OUT if gone else "")
    if _PRICE.search(said):
        return FactQuestion("price")
    found = _HAS.search(said)
    if found is None:
        return None
    feature = _TRAILING.sub("", (found["is"] or found["has"] or found["does"] or "").strip())
    named = _THE_FEATURE.match(feature)
    if named is not None:
        feature = named["feature"]
    if not feature or _NOT_FEATURES.search(feature):
        return None
    return FactQuestion("has", feature)


def _variant(product: Product, card: ProductCard) -> Variant | None:
    return next((v for v in product.variants if v.id == card.variant_id), None)


def _named(product: Product, variant: Variant | None) -> str:
    options = option_words(variant.options) if variant is not None else ""
    return f"{product.title} ({options})" if options else product.title


def _price(variant: Variant) -> str:
    return f"{variant.price} {variant.currency}"


def _stock(product: Product, variant: Variant | None, *, asked_sold_out: bool = False) -> str:
    """Whether the version is in stock; ``asked_sold_out``: the question was whether it is
    sold out ("it's sold out, isn't it?"), so "yes" means sold out."""
    yes, no = ("No", "Yes") if asked_sold_out else ("Yes", "No")
    if variant is None:
        return f"{product.title} has no version that can be bought right now."
    if variant.available:
        return f"{yes}: {_named(product, variant)} is in stock, {_price(variant)}."
    others = [v for v in product.variants if v.available]
    text = f"{no}: {_named(product, variant)} is sold out."
    if not others:
        return text + f" No other version of {product.title} is in stock either."
    listed = "; ".join(
        f"{option_words(v.options) or 'another version'} ({_price(v)})" for v in others[:MAX_LISTED]
    )
    more = f" and {len(others) - MAX_LISTED} more" if len(others) > MAX_LISTED else ""
    return f"{text} In stock: {listed}{more}."


def _cost(product: Product, variant: Variant | None) -> str:
    if variant is None:
        return f"{product.title} has no price: there is no version to buy."
    text = f"{_named(product, variant)} costs {_price(variant)}"
    prices = sorted({v.price for v in product.variants if v.currency == variant.currency})
    if len(prices) > 1:
        low, high = prices[0], prices[-1]
        text += (
            f" ({product.title} costs {low} to {high} {variant.currency}, depending on the options)"
        )
    if not variant.available:
        text += "; it is sold out"
    return text + ". Tax and shipping are added at checkout."


def _has(product: Product, variant: Variant | None, feature: str) -> str:
    named = _named(product, variant)
    key = canonical_key(feature)
    options = dict(variant.options) if variant is not None else {}
    facts: list[tuple[str, str]] = [*options.items()]
    # The variant's own value, not the product's list of every variant's ("soft cover" is no
    # "hard cover" because another version has one).
    own = {canonical_key(name) for name in options}
    facts += [
        (name, value)
        for name, values in product.attributes.items()
        if canonical_key(name) not in own
        for value in values
    ]
    said = _stems(feature)
    for name, value in facts:
        same = canonical_key(name) == key or (bool(said) and _stems(name) == said)
        if same and value.casefold() in YES | NO:
            answer = "Yes" if value.casefold() in YES else "No"
            return f"{answer}: {named} says {name}: {value}."
        if same:  # "is it water resistant?" of "water resistance: IPX4"
            return f"{named} has {name}: {value}."
    for name, value in facts:
        if _is_value(key, value):
            return f"Yes: {named} has {name} {value}."
    # Another version's value ("is that one gas?" of the electric grill): no, it is its own.
    for option, value in options.items():
        if any(_is_value(key, v.options.get(option, "")) for v in product.variants):
            return f"No: {named} has {option} {value}; {feature} is another version of it."
    said_value = _value_said(product, said)
    if said_value is not None:  # "does it pick up pet hair?" of "features: pet hair removal"
        option, value = said_value
        its = options.get(option)
        if its is None or canonical_key(its) == canonical_key(value):
            return f"Yes: {named} has {option} {value}."
        return f"No: {named} has {option} {its}; {value} is another version of it."
    for name, value in facts:  # "does it light up?" of "backlight: white"
        if any(w.endswith(s) for w in _stems(name) for s in said if len(s) >= 4):
            return f"{named} has {name}: {value}."
    words = re.compile(rf"\b{re.escape(feature)}\b", re.IGNORECASE)
    for sentence in re.split(r"(?<=[.!?])\s+", product.description):
        if words.search(sentence):
            return f'{product.title}\'s description says: "{sentence.strip()[:300]}"'
    if words.search(product.title):
        return f"Yes: it is {product.title}."
    return (
        f"The catalog does not say that {named} is or has {feature}: "
        "I would not count on it. Ask me what options it comes in to see what it offers."
    )


def _value_said(product: Product, said: frozenset[str]) -> tuple[str, str] | None:
    """The option and value of ``product``'s versions that the words ``said`` name at least
    half of ("pick up pet hair" names "pet hair removal"), when one does."""
    found = []
    for option, values in product.option_values().items():
        for value in values:
            stems = _stems(value)
            if stems and len(stems & said) * 2 >= len(stems):
                found.append((len(stems & said), option, value))
    if not found:
        return None
    best = max(count for count, _, _ in found)
    top = [(option, value) for count, option, value in found if count == best]
    return top[0] if len(top) == 1 else None


def _is_value(key: str, value: str) -> bool:
    """Whether the feature asked (its canonical key) is ``value`` or one of its words."""
    folded = value.casefold()
    return bool(folded) and (key in (folded, canonical_key(value)) or key in folded.split())


def answer_fact(question: FactQuestion, product: Product, card: ProductCard) -> str:
    """The answer to ``question`` about ``card``'s variant of ``product``, from the catalog."""
    variant = _variant(product, card)
    if question.kind == "stock":
        return _stock(product, variant, asked_sold_out=question.feature == SOLD_OUT)
    if question.kind == "price":
        return _cost(product, variant)
    if question.kind == "comes_in":
        return _comes_in(product, variant, question.feature)
    if question.kind == "rating":
        return _rating(product)
    return _has(product, variant, question.feature)


def _rating(product: Product) -> str:
    if product.rating is None or not product.rating_count:
        return (
            f"The catalog has no ratings or reviews of {product.title}, so I cannot say how good "
            "it is. Ask me what it comes in, or about our returns and warranty."
        )
    count = f"{product.rating_count} rating{'s' if product.rating_count != 1 else ''}"
    return f"{product.title} is rated {product.rating:.1f} of 5 from {count}."


def _comes_in(product: Product, variant: Variant | None, asked: str) -> str:
    values = values_named(asked)
    if not values:  # "does it come in a gift box?": a feature, not an option
        return _has(product, variant, asked)
    described = describe_values(values)
    fitting = [v for v in product.variants if has_values(dict(v.options), values)]
    if not fitting:
        option = values[0][0] or values[0][1]
        offered = describe_options(product, option)
        return f"No: {product.title} does not come in {described}. {offered}"
    kept = _kept(variant, values)
    # "Does it come in navy?" of the L full-zip jacket: in navy AND as it is otherwise.
    same = [v for v in fitting if has_values(dict(v.options), tuple(kept.items()))]
    lead = f"Yes: {product.title} comes in {described}"
    if not same:
        lead = f"Not like this one ({option_words(kept)}): {product.title} in {described} comes as"
        same = fitting
    in_stock = [v for v in same if v.available]
    if not in_stock:
        return f"{product.title} in {described} is sold out."
    listed = "; ".join(f"{option_words(v.options)} ({_price(v)})" for v in in_stock[:MAX_LISTED])
    more = f" and {len(in_stock) - MAX_LISTED} more" if len(in_stock) > MAX_LISTED else ""
    return f"{lead}: {listed}{more}. Say 'add {described}' to put it in your cart."


def _kept(variant: Variant | None, values: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``variant``'s options other than those ``values`` change (none when a value's option
    is not known: then nothing else can be kept for sure)."""
    asked = {canonical_key(name) for name, _ in values}
    if variant is None or "" in asked:
        return {}
    return {k: v for k, v in variant.options.items() if canonical_key(k) not in asked}
