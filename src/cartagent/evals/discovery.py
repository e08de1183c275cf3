"""The discovery set: hand-written shopper conversations, played against the assistant and judged.

``data/discovery/README.md`` specifies the set. :func:`load_conversations` reads and validates
it, :func:`check_against_catalog` checks its names against the catalog, :func:`play_all` plays
each conversation in a fresh session of an :class:`~cartagent.assistant.Assistant` and judges
every reply, and :class:`Figures` sums the judgements up (per split with :func:`figures_by_split`).

The judges:

* ``search``: every card shown as a match (no ``breaks``) is in the gold set (the variants of the
  named products that satisfy every constraint); when the gold set is not empty, one is shown.
* ``fact``: the reply states the asked value of a card of the latest list shown.
* ``best``: the reply's first card is the one with the most (least) of something among the
  latest list, or the reply names that card's value.
* ``smalltalk``: a short reply, no cards, no refusal. ``clarify``: a question, no match claimed.
* Every reply: ``says_any``/``not_says``, and the language, told by counting function words.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..catalog import Product, Variant
from ..errors import ConfigurationError
from ..percentiles import percentile

if TYPE_CHECKING:
    from ..assistant import Assistant
    from ..assistant.cards import ProductCard
    from ..assistant.reply import Reply

__all__ = [
    "LANGUAGES",
    "PATTERNS",
    "SPLITS",
    "Catalog",
    "Conversation",
    "Figures",
    "Quantity",
    "SearchOutcome",
    "Turn",
    "TurnResult",
    "answer_text",
    "best_cards",
    "check_against_catalog",
    "describe_failure",
    "figures_by_split",
    "gold_set",
    "judge_best",
    "judge_clarify",
    "judge_fact",
    "judge_phrases",
    "judge_search",
    "judge_smalltalk",
    "judge_turn",
    "load_conversations",
    "magnitudes",
    "packaged_set",
    "parse_conversations",
    "play_all",
    "play_conversation",
    "quantities",
    "quantity",
    "reply_language",
    "same_value",
    "select",
    "states_value",
]

Split = Literal["dev", "test"]
Language = Literal["en", "es", "de", "fr"]
Pattern = Literal[
    "plain",
    "attribute",
    "negation",
    "price",
    "vocabulary",
    "typo",
    "vague",
    "long",
    "follow-up",
    "language",
    "rude",
    "greeting",
    "not-sold",
    "contradictory",
    "bad-input",
    "honest-none",
]
SPLITS: tuple[str, ...] = get_args(Split)
LANGUAGES: tuple[str, ...] = get_args(Language)
PATTERNS: tuple[str, ...] = get_args(Pattern)

SET_FILE = "conversations.jsonl"
TEXT_SHOWN = 200
REPLY_SHOWN = 300
SMALLTALK_MAX = 300
REFUSALS = ("can't help", "can\u2019t help", "cannot help", "sorry")

# ---------------------------------------------------------------------------------------------
# The set's models (README: "A conversation", "A turn", "Expectations")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PriceRange(_Strict):
    min: Decimal | None = None
    max: Decimal | None = None  # below min: a contradictory request, nothing fits


class Spec(_Strict):
    """Which variants are gold: the named products' variants that satisfy every constraint."""

    products: list[str]
    options: dict[str, list[str]] = Field(default_factory=dict)
    exclude: dict[str, list[str]] = Field(default_factory=dict)
    price: PriceRange | None = None
    available: bool = False


class _Phrases(_Strict):
    says_any: list[str] | None = None
    not_says: list[str] = Field(default_factory=list)


class SearchExpect(_Phrases):
    """A search's expectation: one spec (its fields inline) or ``any_of`` several."""

    kind: Literal["search"]
    products: list[str] | None = None
    options: dict[str, list[str]] = Field(default_factory=dict)
    exclude: dict[str, list[str]] = Field(default_factory=dict)
    price: PriceRange | None = None
    available: bool = False
    any_of: list[Spec] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_form(self) -> SearchExpect:
        inline = self.options or self.exclude or self.price is not None or self.available
        if self.any_of is not None and (self.products is not None or inline):
            raise ValueError("give either any_of or products (with its constraints), not both")
        if self.any_of is None and self.products is None:
            raise ValueError("a search needs products (or any_of)")
        return self

    def specs(self) -> list[Spec]:
        if self.any_of is not None:
            return list(self.any_of)
        return [
            Spec(
                products=self.products or [],
                options=self.options,
                exclude=self.exclude,
                price=self.price,
                available=self.available,
            )
        ]


class FactExpect(_Phrases):
    kind: Literal["fact"]
    rank: int = Field(ge=1)
    option: str = Field(min_length=1)


class BestExpect(_Phrases):
    kind: Literal["best"]
    option: str = Field(min_length=1)
    order: Literal["max", "min"]
    among: list[int] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _distinct_ranks(self) -> BestExpect:
        if self.among is not None and (
            len(set(self.among)) != len(self.among) or min(self.among) < 1
        ):
            raise ValueError("among: distinct ranks from 1")
        return self


class SmalltalkExpect(_Phrases):
    kind: Literal["smalltalk"]


class ClarifyExpect(_Phrases):
    kind: Literal["clarify"]


Expectation = Annotated[
    SearchExpect | FactExpect | BestExpect | SmalltalkExpect | ClarifyExpect,
    Field(discriminator="kind"),
]


class Turn(_Strict):
    text: str  # may be empty or blank: bad input is a pattern
    lang: Language
    patterns: list[Pattern]
    follow_up: bool
    expect: Expectation


class Conversation(_Strict):
    id: str = Field(min_length=1)
    split: Split
    note: str = ""
    turns: list[Turn] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered_turns(self) -> Conversation:
        first = self.turns[0]
        if first.follow_up:
            raise ValueError("turn 1: follow_up is true, but nothing came before it")
        if isinstance(first.expect, FactExpect | BestExpect):
            raise ValueError(f"turn 1: a {first.expect.kind} needs cards shown before it")
        return self


# ---------------------------------------------------------------------------------------------
# Loading


def packaged_set() -> Path:
    """The conversations cartagent ships (``evals/data/discovery/conversations.jsonl``)."""
    found = resources.files(__package__).joinpath("data", "discovery", SET_FILE)
    if not isinstance(found, Path) or not found.is_file():
        raise ConfigurationError(f"cartagent's packaged discovery set is missing (found {found})")
    return found


def _where(loc: Sequence[int | str]) -> str:
    """``turn 3: expect.search.price.max`` for pydantic's ``('turns', 2, 'expect', ...)``."""
    parts = [str(p) for p in loc]
    if len(loc) >= 2 and loc[0] == "turns" and isinstance(loc[1], int):
        rest = ".".join(parts[2:])
        return f"turn {loc[1] + 1}" + (f": {rest}" if rest else "")
    return ".".join(parts) or "conversation"


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{_where(item['loc'])}: {str(item['msg']).removeprefix('Value error, ')}"
        for item in error.errors(include_url=False)
    )


def _conversation(line: str, label: str) -> Conversation:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigurationError(f"{label}: not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"{label}: a conversation is a JSON object")
    if isinstance(data.get("id"), str):
        label = f"{label} ({data['id']})"
    try:
        return Conversation.model_validate(data)
    except ValidationError as error:
        raise ConfigurationError(f"{label}: {_problems(error)}") from None


def parse_conversations(text: str, source: str = SET_FILE) -> list[Conversation]:
    """The conversations of a JSONL text; a bad one is an error naming its line, id and turn."""
    conversations: list[Conversation] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        conversation = _conversation(line, f"{source}:{number}")
        if conversation.id in seen:
            raise ConfigurationError(
                f"{source}:{number}: id {conversation.id!r} already used at line "
                f"{seen[conversation.id]}"
            )
        seen[conversation.id] = number
        conversations.append(conversation)
    return conversations


def load_conversations(path: Path | None = None) -> list[Conversation]:
    """The conversations in ``path`` (default: the packaged set)."""
    path = packaged_set() if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"{path}: {error.strerror or error}") from None
    return parse_conversations(text, path.name)


def select(
    conversations: Iterable[Conversation], split: str = "all", limit: int | None = None
) -> list[Conversation]:
    """The conversations of ``split`` (``all``: every one), the first ``limit`` of them."""
    chosen = [c for c in conversations if split == "all" or c.split == split]
    return chosen if limit is None else chosen[:limit]


# ---------------------------------------------------------------------------------------------
# The catalog and gold sets

VariantKey = tuple[str, str]
"""(product id, variant id): variant ids are unique only within their product."""


@dataclass(frozen=True)
class Catalog:
    """The products, by name (``title``) and each variant by its key."""

    products: tuple[Product, ...]
    by_name: Mapping[str, tuple[Product, ...]]
    variants: Mapping[VariantKey, tuple[Product, Variant]]

    @classmethod
    def of(cls, products: Iterable[Product]) -> Catalog:
        listed = tuple(products)
        by_name: dict[str, list[Product]] = {}
        for product in listed:
            by_name.setdefault(product.title, []).append(product)
        return cls(
            listed,
            {name: tuple(found) for name, found in by_name.items()},
            {(p.id, v.id): (p, v) for p in listed for v in p.variants},
        )

    def option_values(self, names: Iterable[str]) -> dict[str, set[str]]:
        """Each option name of the named products, with the values their variants take."""
        values: dict[str, set[str]] = {}
        for name in names:
            for product in self.by_name.get(name, ()):
                for variant in product.variants:
                    for key, value in variant.options.items():
                        values.setdefault(key, set()).add(value)
        return values


def _admits(spec: Spec, variant: Variant) -> bool:
    for key, wanted in spec.options.items():
        if variant.options.get(key) not in wanted:
            return False
    for key, unwanted in spec.exclude.items():
        if variant.options.get(key) in unwanted:
            return False
    if spec.price is not None:
        if spec.price.min is not None and variant.price < spec.price.min:
            return False
        if spec.price.max is not None and variant.price > spec.price.max:
            return False
    return variant.available or not spec.available


def gold_set(expect: SearchExpect | Spec, catalog: Catalog) -> frozenset[VariantKey]:
    """The variants a search may claim: for ``any_of``, the union over its specs."""
    specs = expect.specs() if isinstance(expect, SearchExpect) else [expect]
    return frozenset(
        (product.id, variant.id)
        for spec in specs
        for name in spec.products
        for product in catalog.by_name.get(name, ())
        for variant in product.variants
        if _admits(spec, variant)
    )


def _all_options(catalog: Catalog) -> set[str]:
    return {key for p in catalog.products for v in p.variants for key in v.options}


def _spec_warnings(spec: Spec, catalog: Catalog) -> list[str]:
    values = catalog.option_values(spec.products)
    warnings = []
    for kind, constraints in (("options", spec.options), ("exclude", spec.exclude)):
        for key, listed in constraints.items():
            if key not in values:
                warnings.append(f"{kind}: no product named has an option {key!r}")
                continue
            unknown = [v for v in listed if v not in values[key]]
            if unknown:
                warnings.append(f"{kind}: {key!r} is never {', '.join(map(repr, unknown))}")
    return warnings


def _turn_problems(turn: Turn, catalog: Catalog, options: set[str]) -> tuple[list[str], list[str]]:
    expect = turn.expect
    if isinstance(expect, FactExpect | BestExpect):
        known = expect.option in options or expect.option in ("price", "available")
        return ([] if known else [f"no product has an option {expect.option!r}"]), []
    if not isinstance(expect, SearchExpect):
        return [], []
    errors: list[str] = []
    warnings: list[str] = []
    for spec in expect.specs():
        errors += [
            f"no product is named {name!r}" for name in spec.products if name not in catalog.by_name
        ]
        warnings += _spec_warnings(spec, catalog)
    return errors, warnings


def check_against_catalog(conversations: Iterable[Conversation], catalog: Catalog) -> list[str]:
    """Raise on a product or fact/best option the catalog lacks (a typo, surely); return
    warnings for search constraints on option names or values the named products never take
    (legitimate for an honest "no match", but maybe a typo)."""
    options = _all_options(catalog)
    errors: list[str] = []
    warnings: list[str] = []
    for conversation in conversations:
        for number, turn in enumerate(conversation.turns, 1):
            where = f"{conversation.id} turn {number}"
            wrong, doubtful = _turn_problems(turn, catalog, options)
            errors += [f"{where}: {problem}" for problem in wrong]
            warnings += [f"{where}: {problem}" for problem in doubtful]
    if errors:
        raise ConfigurationError("the set does not fit the catalog: " + "; ".join(errors))
    return warnings


# ---------------------------------------------------------------------------------------------
# Numbers with units: "1000ml", "1.5 liters", "2L", "10 hours", "128GB", "13-inch"

# Each unit: its dimension and its size in that dimension's base unit.
_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(
        ("ml", "milliliter", "milliliters", "millilitre", "millilitres"), ("volume", 1)
    ),
    "cl": ("volume", 10),
    **dict.fromkeys(
        ("l", "lt", "liter", "liters", "litre", "litres", "litro", "litros"), ("volume", 1000)
    ),
    "kb": ("data", 1e-6),
    "mb": ("data", 1e-3),
    "gb": ("data", 1),
    "tb": ("data", 1000),
    **dict.fromkeys(
        ("h", "hr", "hrs", "hour", "hours", "hora", "horas", "stunde", "stunden", "std"),
        ("time", 1),
    ),
    **dict.fromkeys(("heure", "heures"), ("time", 1)),
    **dict.fromkeys(
        ("min", "mins", "minute", "minutes", "minuto", "minutos", "minuten"), ("time", 1 / 60)
    ),
    "mm": ("length", 1),
    "cm": ("length", 10),
    **dict.fromkeys(
        ("m", "meter", "meters", "metre", "metres", "metro", "metros"), ("length", 1000)
    ),
    **dict.fromkeys(
        ("in", "inch", "inches", '"', "zoll", "pulgada", "pulgadas", "pouce", "pouces"),
        ("length", 25.4),
    ),
    **dict.fromkeys(("ft", "feet", "foot", "pies", "pieds", "fuß"), ("length", 304.8)),
    "g": ("mass", 1),
    "kg": ("mass", 1000),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), ("mass", 453.59237)),
    "oz": ("mass", 28.349523125),
    "mah": ("charge", 1),
    **dict.fromkeys(("mp", "megapixel", "megapixels"), ("pixels", 1)),
    "bar": ("pressure", 1),
    **dict.fromkeys(("degree", "degrees", "°", "grados", "grad", "degrés"), ("angle", 1)),
    **dict.fromkeys(("w", "watt", "watts"), ("power", 1)),
    **dict.fromkeys(("cup", "cups", "taza", "tazas", "tasse", "tassen"), ("cups", 1)),
    "x": ("zoom", 1),
    "%": ("percent", 1),
    "p": ("lines", 1),
    "k": ("lines", 540),
    **dict.fromkeys(("piece", "pieces", "pc", "pcs"), ("pieces", 1)),
}
# Marketing "K" resolutions are not value x 1000: 2K is 1440 lines, 4K 2160, 5K 2880.
_K_LINES = {2.0: 1440.0, 4.0: 2160.0, 5.0: 2880.0, 8.0: 4320.0}
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?P<low>{_NUMBER})(?:\s*(?:-|\u2013|to)\s*(?P<high>{_NUMBER}))?"
    rf"\s*-?\s*(?P<unit>{'|'.join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))})"
    r"(?![^\W\d_])",
    re.IGNORECASE,
)
_PLAIN_NUMBER = re.compile(rf"\s*({_NUMBER})\s*")
# Values with an order but no number ("low" < "medium" < "high"), for ``best``.
_SCALES: dict[str, tuple[str, ...]] = {
    "level": ("low", "medium", "high"),
    "bulk": ("small", "medium", "large"),
    "letter size": ("xxs", "xs", "s", "m", "l", "xl", "xxl", "xxxl"),
    "skill": ("beginner", "intermediate", "expert"),
    "kit": ("basic", "professional"),
}


@dataclass(frozen=True)
class Quantity:
    """A number in its dimension's base unit (ml, GB, hours, mm...); a range keeps both ends."""

    dimension: str
    low: float
    high: float

    @property
    def magnitude(self) -> float:
        """What ``best`` compares: a range ("30-50 lbs") by its middle."""
        return (self.low + self.high) / 2

    def same(self, other: Quantity) -> bool:
        return (
            self.dimension == other.dimension
            and math.isclose(self.low, other.low, rel_tol=1e-6)
            and math.isclose(self.high, other.high, rel_tol=1e-6)
        )


def _number(text: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        return float(text.replace(",", ""))
    return float(text.replace(",", "."))


def _in_base(number: float, unit: str) -> tuple[str, float]:
    dimension, size = _UNITS[unit.casefold()]
    if unit.casefold() == "k":
        return dimension, _K_LINES.get(number, number * size)
    return dimension, number * size


def quantities(text: str) -> list[Quantity]:
    """Every number with a unit in ``text``, in its dimension's base unit."""
    found = []
    for match in _QUANTITY.finditer(text):
        unit = match["unit"]
        dimension, low = _in_base(_number(match["low"]), unit)
        high = low if match["high"] is None else _in_base(_number(match["high"]), unit)[1]
        found.append(Quantity(dimension, low, high))
    return found


def quantity(value: str) -> Quantity | None:
    """The quantity an option value holds: "1.5 liters" is 1500 ml; a bare number ("1000"
    pieces) has no dimension; a value with no number or several has none."""
    found = quantities(value)
    if len(found) == 1:
        return found[0]
    plain = _PLAIN_NUMBER.fullmatch(value)
    if plain:
        number = _number(plain[1])
        return Quantity("", number, number)
    return None


def _on_a_scale(values: Sequence[str]) -> list[Quantity] | None:
    """Each value's place on the first scale that has them all ("medium" is on two)."""
    said = [v.strip().casefold() for v in values]
    for scale, steps in _SCALES.items():
        if all(s in steps for s in said):
            return [Quantity(scale, steps.index(s), steps.index(s)) for s in said]
    return None


def magnitudes(values: Sequence[str | Decimal | bool | None]) -> list[Quantity | None]:
    """What ``best`` compares for each value: a price, an amount (see :func:`quantity`), else
    the place of every worded value on a scale they share ("low" < "medium" < "high")."""
    amounts: list[Quantity | None] = [
        Quantity("price", float(v), float(v))
        if isinstance(v, Decimal)
        else quantity(v)
        if isinstance(v, str)
        else None
        for v in values
    ]
    worded = [i for i, v in enumerate(values) if isinstance(v, str) and amounts[i] is None]
    placed = _on_a_scale([str(values[i]) for i in worded]) if worded else None
    for i, amount in zip(worded, placed or (), strict=False):
        amounts[i] = amount
    return amounts


def same_value(a: str, b: str) -> bool:
    """Whether two option values say the same amount ("1000ml" and "1 L"), or the same words."""
    first, second = quantity(a), quantity(b)
    if first is not None and second is not None:
        return first.same(second)
    return _norm(a) == _norm(b)


# ---------------------------------------------------------------------------------------------
# What a reply states

_AFFIRM = re.compile(r"^\W*(?:yes|yeah|yep|s[ií]|ja|oui)\b", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:no|not|none|without|isn't|aren't|doesn't|don't|nein|nicht|kein\w*|ohne|non|pas|sans|"
    r"sin|ning[uú]n\w*)\b|n't\b",
    re.IGNORECASE,
)
_STARTS_NEGATIVE = re.compile(r"^\W*(?:no|nope|nein|non)\b", re.IGNORECASE)
_OUT_OF_STOCK = re.compile(
    r"out of stock|not in stock|not available|unavailable|sold out|isn't available|"
    r"agotad[oa]|sin stock|no (?:est[aá] )?disponible|nicht (?:verfügbar|vorrätig|auf lager)|"
    r"ausverkauft|indisponible|rupture de stock|pas disponible|épuisé",
    re.IGNORECASE,
)
_IN_STOCK = re.compile(
    r"in stock|available|disponible|verfügbar|auf lager|vorrätig|lieferbar|en stock",
    re.IGNORECASE,
)
_TEXT_NUMBER = re.compile(rf"(?<![\w.,])(?:{_NUMBER})(?![\d])")


def _norm(text: str) -> str:
    return " ".join(text.replace("-", " ").split()).casefold()


def _contains(text: str, phrase: str) -> bool:
    """``phrase`` in ``text`` as whole words, hyphens and spacing aside, any case."""
    wanted = _norm(phrase)
    return (
        bool(wanted)
        and re.search(rf"(?<![^\W_]){re.escape(wanted)}(?![^\W_])", _norm(text)) is not None
    )


def _states_price(text: str, price: Decimal) -> bool:
    return any(Decimal(str(_number(m[0]))) == price for m in _TEXT_NUMBER.finditer(text))


def _states_stock(text: str, available: bool) -> bool:
    if _OUT_OF_STOCK.search(text):
        return not available
    return available and _IN_STOCK.search(text) is not None


def _names_option(text: str, option: str) -> bool:
    """Whether ``text`` names ``option`` or one of its longer words ("water" of "water
    resistance": a reply may say "waterproof")."""
    said = _norm(text)
    return _contains(text, option) or any(
        len(word) >= 4 and word in said for word in _norm(option).split()
    )


def _states_yes_no(text: str, option: str, yes: bool) -> bool:
    # An affirmative or negative opening answers alone; otherwise the reply must name the
    # option, so that "I don't know" is not taken for "no".
    if _AFFIRM.search(text):
        return yes
    if _STARTS_NEGATIVE.search(text):
        return not yes
    if not _names_option(text, option):
        return False
    return (_NEGATION.search(text) is None) == yes


def states_value(text: str, option: str, value: str | Decimal | bool) -> bool:
    """Whether ``text`` states ``value`` for ``option``: a price (any number equal to it), the
    stock, yes/no (an affirmative or a negation), an amount in any unit of its dimension, or
    the value's words."""
    if isinstance(value, bool):
        return _states_stock(text, value)
    if isinstance(value, Decimal):
        return _states_price(text, value)
    said = value.strip().casefold()
    if said in ("yes", "no"):
        return _states_yes_no(text, option, said == "yes")
    if _contains(text, value):
        return True
    wanted = quantities(value)
    return len(wanted) == 1 and any(wanted[0].same(q) for q in quantities(text))


# ---------------------------------------------------------------------------------------------
# The reply's language: function words counted, product words left out


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "the and is are you your for with this that it of to have has we our there what which "
        "would could can any some from but be these those they them if i my do does not found "
        "only one nothing sorry than their been will"
    ),
    "es": _words(
        "el los las del al una unos unas con para por pero muy más este esta estos estas esto "
        "hay tiene tienes tenemos puedo puede quieres qué cuál aquí sí también sin como cuando "
        "nada ningún ninguna ninguno hola gracias está están su sus lo"
    ),
    "de": _words(
        "der die das und ist sind ein eine einen einem einer nicht mit für auf ich sie wir ihr "
        "den dem zu von im auch noch nur kein keine keinen habe haben hat gibt kann können "
        "diese dieser dieses welche oder aber wie wenn bei leider zum zur ja nein danke"
    ),
    "fr": _words(
        "le des une est sont et avec pour pas ne je vous votre vos nous il elle ils ce cette "
        "ces qui dans sur aussi mais ou où très voici aucun aucune bonjour merci oui peux "
        "pouvez avez êtes au aux ai ça"
    ),
}
"""Common function words of each reply language; no word is in two lists (words like "de",
"la", "en", "no" and "es" are left out: two of the languages share them)."""
_WORD = re.compile(r"[^\W\d_]+")


def _without(text: str, phrases: Iterable[str]) -> str:
    for phrase in sorted(set(phrases), key=len, reverse=True):
        text = re.sub(rf"(?<![^\W_]){re.escape(phrase)}(?![^\W_])", " ", text, flags=re.I)
    return text


def reply_language(text: str, cards: Iterable[ProductCard] = (), asked: str = "") -> str:
    """The language with the most function words in ``text`` once the cards' titles and
    option values, and the words of the shopper's message ``asked`` (a reply may echo them),
    are taken out; English when none is found (and on a tie with English). When the echo was
    all there was ("2 résultats exacts pour men woody perfume" after "... pour homme, boisé"),
    the echoed words count: the reply's frame is in that language."""
    shown = list(cards)
    names = [c.title for c in shown] + [v for c in shown for v in c.options.values()]
    own = _without(text, names)
    hits = _function_words(_without(own, _WORD.findall(asked)))
    if not any(hits.values()):
        hits = _function_words(own)
    best = max(hits.values())
    return "en" if best == 0 else next(lang for lang in LANGUAGES if hits[lang] == best)


def _function_words(text: str) -> dict[str, int]:
    words = Counter(_WORD.findall(text.casefold()))
    return {lang: sum(words[w] for w in STOPWORDS[lang]) for lang in LANGUAGES}


# ---------------------------------------------------------------------------------------------
# The judges: each returns why the reply is wrong (nothing when it is right)


@dataclass(frozen=True)
class SearchOutcome:
    """A search turn's judgement and the counts precision and honesty are summed from."""

    why: tuple[str, ...]
    claimed: int
    claimed_in_gold: int
    gold: int


def _key(card: ProductCard) -> VariantKey | None:
    return None if card.variant_id is None else (card.id, card.variant_id)


def _card_words(card: ProductCard) -> str:
    options = ", ".join(f"{k}={v}" for k, v in card.options.items())
    return f"#{card.rank} {card.title} [{card.variant_id}] ({options})"


def judge_search(expect: SearchExpect, reply: Reply, catalog: Catalog) -> SearchOutcome:
    gold = gold_set(expect, catalog)
    claims = [c for c in reply.cards if not c.breaks]
    wrong = [c for c in claims if _key(c) not in gold]
    why = [f"claims {_card_words(c)}, not in the gold set" for c in wrong]
    if gold and not claims:
        why.append(f"claims no match, but {len(gold)} variants fit")
    if not gold and claims:
        why.insert(0, f"nothing fits, but it claims {len(claims)} matches")
    return SearchOutcome(tuple(why), len(claims), len(claims) - len(wrong), len(gold))


def _card_value(card: ProductCard, option: str, catalog: Catalog) -> str | Decimal | bool | None:
    """``option`` of the card's variant, read from the catalog (the card's own as a fallback)."""
    found = None if _key(card) is None else catalog.variants.get((card.id, card.variant_id or ""))
    if option == "price":
        return found[1].price if found else card.price
    if option == "available":
        return found[1].available if found else card.available
    options = found[1].options if found else card.options
    return options.get(option)


def _at(shown: Sequence[ProductCard], rank: int) -> ProductCard | None:
    # The card numbered ``rank`` as shown ("#2"), as the shopper refers to it; a list of one
    # card is "it", whatever its number (README).
    numbered = [card for card in shown if card.rank == rank]
    if numbered:
        return numbered[0]
    return shown[0] if len(shown) == 1 and rank == 1 else None


_QUOTED = re.compile(r"(?<!\w)['\"\u2018\u201c][^'\"\u2019\u201d]*['\"\u2019\u201d](?!\w)")
_PARENTHESES = re.compile(r"\(([^()]*)\)")


def answer_text(text: str, cards: Iterable[ProductCard]) -> str:
    """``text`` without what states nothing about a card: quoted examples ("ask 'is the
    second one in stock?'") and a card's options listed in parentheses only to name it
    ("Notebook (A5, soft cover) has a hard cover" states no cover type)."""
    naming = {
        _norm(form)
        for card in cards
        for name, value in card.options.items()
        for form in (value, name, f"not {name}")  # yes/no values are shown by their name
    }

    def drop(match: re.Match[str]) -> str:
        items = [_norm(item) for item in match[1].split(",") if item.strip()]
        return " " if items and all(item in naming for item in items) else match[0]

    return _PARENTHESES.sub(drop, _QUOTED.sub(" ", text))


def judge_fact(
    expect: FactExpect, reply: Reply, shown: Sequence[ProductCard], catalog: Catalog
) -> list[str]:
    if not shown:
        return ["no earlier reply showed cards"]
    card = _at(shown, expect.rank)
    if card is None:
        return [f"the latest list has {len(shown)} cards: no #{expect.rank}"]
    value = _card_value(card, expect.option, catalog)
    if value is None:
        return [f"{_card_words(card)} has no {expect.option!r}"]
    if states_value(answer_text(reply.text, [*shown, *reply.cards]), expect.option, value):
        return []
    return [f"does not state {expect.option} = {_shown_value(value)} of {_card_words(card)}"]


def _shown_value(value: str | Decimal | bool) -> str:
    if isinstance(value, bool):
        return "in stock" if value else "out of stock"
    return str(value)


def best_cards(
    expect: BestExpect, shown: Sequence[ProductCard], catalog: Catalog
) -> tuple[list[ProductCard], list[str]]:
    """The cards with the most (``max``) or least of the option among those compared, and
    why none can be chosen (a rank not shown, values that cannot be compared)."""
    if not shown:
        return [], ["no earlier reply showed cards"]
    if not expect.among:
        cards: list[ProductCard | None] = list(shown)
        ranks = [c.rank for c in shown]
    else:
        ranks = list(expect.among)
        cards = [_at(shown, r) for r in ranks]
    missing = [f"#{r}" for r, card in zip(ranks, cards, strict=True) if card is None]
    if missing:
        return [], [f"the latest list has {len(shown)} cards: no {', '.join(missing)}"]
    compared = [c for c in cards if c is not None]
    amounts = magnitudes([_card_value(c, expect.option, catalog) for c in compared])
    measured = [(c, a) for c, a in zip(compared, amounts, strict=True) if a is not None]
    if not measured:
        return [], [f"the cards' {expect.option} values cannot be compared"]
    # A list mixing products ("4 cups" makers, a "1L" machine) compares the kind of amount
    # most of its cards have (the first card's on a tie: most_common keeps the first).
    common = Counter(a.dimension for _, a in measured).most_common(1)[0][0]
    measured = [(c, a) for c, a in measured if a.dimension == common]
    pick = max if expect.order == "max" else min
    best = pick(a.magnitude for _, a in measured)
    return [c for c, a in measured if math.isclose(a.magnitude, best)], []


def judge_best(
    expect: BestExpect, reply: Reply, shown: Sequence[ProductCard], catalog: Catalog
) -> list[str]:
    winners, why = best_cards(expect, shown, catalog)
    if why:
        return why
    if reply.cards and _key(reply.cards[0]) in {_key(c) for c in winners}:
        return []
    text = answer_text(reply.text, [*shown, *reply.cards])
    for card in winners:
        value = _card_value(card, expect.option, catalog)
        if value is not None and states_value(text, expect.option, value):
            return []
    named = ", ".join(
        f"{_card_words(c)}: {_card_value(c, expect.option, catalog)}" for c in winners
    )
    return [f"neither shows first nor names the {expect.order} {expect.option}: {named}"]


def judge_smalltalk(reply: Reply) -> list[str]:
    why = []
    if len(reply.text) > SMALLTALK_MAX:
        why.append(f"{len(reply.text)} characters, over {SMALLTALK_MAX}")
    if reply.cards:
        why.append(f"shows {len(reply.cards)} cards")
    refused = [r for r in REFUSALS if r in reply.text.casefold()]
    if refused:
        why.append(f"refuses ({refused[0]})")
    return why


def judge_clarify(reply: Reply) -> list[str]:
    why = []
    if "?" not in reply.text:
        why.append("asks no question")
    claims = [c for c in reply.cards if not c.breaks]
    if claims:
        why.append(f"claims {len(claims)} matches instead of asking")
    return why


def judge_phrases(expect: _Phrases, text: str) -> list[str]:
    said = text.casefold()
    why = []
    if expect.says_any is not None and not any(p.casefold() in said for p in expect.says_any):
        why.append(f"says none of {expect.says_any}")
    why += [f"says {p!r}" for p in expect.not_says if p.casefold() in said]
    return why


# ---------------------------------------------------------------------------------------------
# Playing and judging turns


@dataclass(frozen=True)
class TurnResult:
    """One turn as played and judged; ``why`` is empty when the reply was right."""

    conversation: str
    split: str
    number: int
    turn: Turn
    reply_text: str
    cards: tuple[ProductCard, ...]
    ms: float
    language: str
    why: tuple[str, ...]
    search: SearchOutcome | None = None

    @property
    def right(self) -> bool:
        return not self.why

    @property
    def language_right(self) -> bool:
        return self.language == self.turn.lang

    def to_json(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "split": self.split,
            "turn": self.number,
            "text": self.turn.text,
            "lang": self.turn.lang,
            "patterns": list(self.turn.patterns),
            "follow_up": self.turn.follow_up,
            "expect": self.turn.expect.model_dump(mode="json", exclude_defaults=True),
            "reply": self.reply_text,
            "reply_lang": self.language,
            "cards": [c.to_json() for c in self.cards],
            "ms": round(self.ms, 3),
            "right": self.right,
            "why": list(self.why),
        } | (
            {}
            if self.search is None
            else {
                "gold": self.search.gold,
                "claimed": self.search.claimed,
                "claimed_in_gold": self.search.claimed_in_gold,
            }
        )


def judge_turn(
    turn: Turn, reply: Reply, shown: Sequence[ProductCard], catalog: Catalog
) -> tuple[list[str], SearchOutcome | None, str]:
    """Why the reply is wrong (its expectation, its phrases, its language), the search counts
    (for a search) and the reply's language."""
    expect = turn.expect
    outcome = None
    if isinstance(expect, SearchExpect):
        outcome = judge_search(expect, reply, catalog)
        why = list(outcome.why)
    elif isinstance(expect, FactExpect):
        why = judge_fact(expect, reply, shown, catalog)
    elif isinstance(expect, BestExpect):
        why = judge_best(expect, reply, shown, catalog)
    elif isinstance(expect, SmalltalkExpect):
        why = judge_smalltalk(reply)
    else:
        why = judge_clarify(reply)
    why += judge_phrases(expect, reply.text)
    language = reply_language(reply.text, reply.cards, turn.text)
    if language != turn.lang:
        why.append(f"answers in {language}, not {turn.lang}")
    return why, outcome, language


async def play_conversation(
    assistant: Assistant,
    conversation: Conversation,
    catalog: Catalog,
    on_turn: Callable[[], object] | None = None,
) -> list[TurnResult]:
    """Play ``conversation`` in a fresh session, judging each reply as it comes."""
    session = assistant.open_session()
    shown: tuple[ProductCard, ...] = ()
    results = []
    for number, turn in enumerate(conversation.turns, 1):
        start = time.perf_counter()
        reply = await assistant.turn(session, turn.text)
        ms = (time.perf_counter() - start) * 1000
        why, outcome, language = judge_turn(turn, reply, shown, catalog)
        results.append(
            TurnResult(
                conversation.id,
                conversation.split,
                number,
                turn,
                reply.text,
                reply.cards,
                ms,
                language,
                tuple(why),
                outcome,
            )
        )
        if reply.cards:
            shown = reply.cards
        if on_turn is not None:
            on_turn()
    return results


async def play_all(
    assistant: Assistant,
    conversations: Iterable[Conversation],
    catalog: Catalog,
    on_turn: Callable[[], object] | None = None,
) -> list[TurnResult]:
    """Every conversation, one after the other, each in its own session."""
    results: list[TurnResult] = []
    for conversation in conversations:
        results += await play_conversation(assistant, conversation, catalog, on_turn)
    return results


# ---------------------------------------------------------------------------------------------
# Figures


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class Figures:
    """The sums over some judged turns (a split, or all)."""

    turns: int
    turns_right: int
    conversations: int
    conversations_right: int
    follow_ups: int
    follow_ups_right: int
    language_right: int
    search_turns: int
    claimed: int
    claimed_in_gold: int
    none_turns: int
    honest_none: int
    patterns: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    search_ms: tuple[float, ...] = ()
    max_ms: float = float("nan")

    @classmethod
    def of(cls, results: Sequence[TurnResult]) -> Figures:
        searches = [r.search for r in results if r.search is not None]
        nones = [s for s in searches if s.gold == 0]
        by_conversation: dict[str, bool] = {}
        for r in results:
            by_conversation[r.conversation] = by_conversation.get(r.conversation, True) and r.right
        patterns: dict[str, tuple[int, int]] = {}
        for r in results:
            for pattern in r.turn.patterns:
                right, total = patterns.get(pattern, (0, 0))
                patterns[pattern] = (right + r.right, total + 1)
        follow_ups = [r for r in results if r.turn.follow_up]
        return cls(
            turns=len(results),
            turns_right=sum(r.right for r in results),
            conversations=len(by_conversation),
            conversations_right=sum(by_conversation.values()),
            follow_ups=len(follow_ups),
            follow_ups_right=sum(r.right for r in follow_ups),
            language_right=sum(r.language_right for r in results),
            search_turns=len(searches),
            claimed=sum(s.claimed for s in searches),
            claimed_in_gold=sum(s.claimed_in_gold for s in searches),
            none_turns=len(nones),
            honest_none=sum(s.claimed == 0 for s in nones),
            patterns={p: patterns[p] for p in PATTERNS if p in patterns},
            search_ms=tuple(r.ms for r in results if r.search is not None),
            max_ms=max((r.ms for r in results), default=float("nan")),
        )

    @property
    def precision(self) -> float | None:
        """Micro claimed-match precision: claimed cards in the gold set over claimed cards."""
        return _share(self.claimed_in_gold, self.claimed)

    @property
    def honesty(self) -> float | None:
        """Search turns where nothing fits that claim nothing, over such turns."""
        return _share(self.honest_none, self.none_turns)

    @property
    def search_p50(self) -> float:
        return percentile(self.search_ms, 50)

    @property
    def search_p95(self) -> float:
        return percentile(self.search_ms, 95)

    def to_json(self) -> dict[str, Any]:
        def ms(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 3)

        def share(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "turns": self.turns,
            "turns_right": self.turns_right,
            "turn_success": share(_share(self.turns_right, self.turns)),
            "conversations": self.conversations,
            "conversations_right": self.conversations_right,
            "follow_ups": self.follow_ups,
            "follow_ups_right": self.follow_ups_right,
            "follow_up_success": share(_share(self.follow_ups_right, self.follow_ups)),
            "language_right": self.language_right,
            "search_turns": self.search_turns,
            "claimed": self.claimed,
            "claimed_in_gold": self.claimed_in_gold,
            "precision": share(self.precision),
            "none_turns": self.none_turns,
            "honest_none": self.honest_none,
            "honest_when_none": share(self.honesty),
            "patterns": {p: {"right": r, "turns": t} for p, (r, t) in self.patterns.items()},
            "search_ms_p50": ms(self.search_p50),
            "search_ms_p95": ms(self.search_p95),
            "max_turn_ms": ms(self.max_ms),
        }


def figures_by_split(results: Sequence[TurnResult]) -> dict[str, Figures]:
    """The figures of each split present, then of all the turns (``all``)."""
    present = [s for s in SPLITS if any(r.split == s for r in results)]
    figures = {s: Figures.of([r for r in results if r.split == s]) for s in present}
    figures["all"] = Figures.of(results)
    return figures


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def describe_failure(result: TurnResult) -> str:
    """A failed turn, for a terminal: where, what was asked and expected, the reply, its cards
    (variant, options, what each breaks) and why it was judged wrong."""
    expect = result.turn.expect.model_dump(mode="json", exclude_defaults=True)
    lines = [
        f"{result.conversation} turn {result.number} ({result.split}, "
        f"{', '.join(result.turn.patterns) or 'no pattern'}): {_cut(result.turn.text, TEXT_SHOWN)}",
        f"  expected: {json.dumps(expect, ensure_ascii=False)} (lang {result.turn.lang})",
        f"  replied:  {_cut(result.reply_text, REPLY_SHOWN)}",
    ]
    for card in result.cards:
        state = "breaks: " + "; ".join(card.breaks) if card.breaks else "match"
        lines.append(f"    {_card_words(card)} {state}")
    lines += [f"  wrong: {why}" for why in result.why]
    return "\n".join(lines)
