"""Questions about the results on screen, in the shopper's own words, read against the
catalog: "which one holds more water?", "how many cups does it make?", "what colour is the
first one?", "¿cuál sale más barato?", "lowest price out of those?".

What is asked is found in the shown products' own options: an option's name ("colour",
"material", "pieces") or the unit its values are written in ("cups" of ``capacity: 4 cups``,
"ml" of ``1000ml``), or a verb that asks for a size ("holds", "fits"); price words ask for the
price. "Which"/"most"/"least"-style words ask which card is at one end; otherwise the answer
is each card's value (or the one card meant: "it", "the first one"). Values are compared as
amounts in one unit ("1.5 liters" against "1000ml"). A question that names no option the
shown products have is not one of these (it is a new search, or another specialist's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from gettext import NullTranslations
from typing import TYPE_CHECKING, Literal

from ..retrieval import Words, amount, gloss, parse, same_option_value, shared_words, units
from .cards import ProductCard
from .references import LAST, find_reference

if TYPE_CHECKING:
    from ..catalog import Product
    from ..retrieval import Searcher

__all__ = [
    "STATED_BOUND",
    "ShownQuestion",
    "answer_shown_question",
    "answer_value_question",
    "products_shown",
    "question_about_shown",
    "read_shown_question",
]

Order = Literal["max", "min"]
PRICE = "price"
AVAILABLE = "available"

_QUESTION = re.compile(
    r"\?|^\s*(?:which|what|whats|how|is|are|does|do|can|cuál|cual|qué|que|cuánto|cuanto|welche[rsnm]?"
    r"|was|wie|wieviel|ist|hat|quel(?:le)?s?|lequel|laquelle|combien|est-ce)\b"
    r"|\bwhichever\b"  # "i'll take whichever is less money": which one, then take it
    # "le plus grand flacon possible", "el más barato": a pick at one end, asked as a request
    r"|^\s*(?:le|la|les|el|la|los|las|der|die|das)\s+(?:plus|moins|más|mas|menos|größte"
    r"|grösste|kleinste|billigste|günstigste|teuerste)\b",
    re.IGNORECASE,
)
_MAX = frozenset(
    {
        "more",
        "most",
        "bigger",
        "biggest",
        "larger",
        "largest",
        "longer",
        "longest",
        "higher",
        "highest",
        "greater",
        "greatest",
        "más",
        "mas",
        "mayor",
        "mehr",
        "meisten",
        "größte",
        "grösste",
        "größer",
        "grosser",
        "plus",
    }
)
_MIN = frozenset(
    {
        "less",
        "least",
        "fewer",
        "fewest",
        "smaller",
        "smallest",
        "shorter",
        "shortest",
        "lower",
        "lowest",
        "menos",
        "menor",
        "weniger",
        "wenigsten",
        "kleinste",
        "kleiner",
        "moins",
    }
)
STATED_BOUND = re.compile(r"\bthan\s+(?:[$€£]\s?)?\d")
""""cheaper than 210": a price bound said outright, not a comparison with the cards shown."""
# "Got anything cheaper than that?", "something less expensive?": other products, asked by
# comparison with those shown; a new search, not a question about which shown one is.
_ANYTHING_ELSE = re.compile(
    r"\b(?:anything|something|any|others?|else)\s+(?:\w+\s+)?(?:cheaper|less\s+expensive"
    r"|pricier|dearer|more\s+expensive|bigger|smaller|larger|lighter)\b"
)
_CHEAP = frozenset(
    {
        "cheap",
        "cheaper",
        "cheapest",
        "affordable",
        "barato",
        "barata",
        "baratos",
        "günstig",
        "günstiger",
        "günstigste",
        "billig",
        "billiger",
        "billigste",
        "günstigsten",
        "billigsten",
    }
)
_DEAR = frozenset(
    {
        "expensive",
        "pricier",
        "priciest",
        "dearer",
        "dearest",
        "caro",
        "cara",
        "teuer",
        "teurer",
        "teuerste",
        "teuersten",
    }
)
_PRICE_WORDS = frozenset(
    {
        "price",
        "prices",
        "cost",
        "costs",
        "spend",
        "pay",
        "money",
        "precio",
        "cuesta",
        "cuestan",
        "vale",
        "preis",
        "kostet",
        "kosten",
        "prix",
        "coûte",
        "coute",
    }
)
# Verbs that ask how much something takes in.
_HOLDS = frozenset(
    {
        "hold",
        "holds",
        "fit",
        "fits",
        "take",
        "takes",
        "carry",
        "carries",
        "store",
        "stores",
    }
)
_HOLDING_OPTIONS = ("capacity", "volume", "storage", "size")
# "Which one's gonna hurt my wallet less?" asks which is cheaper.
_WALLET = re.compile(
    r"\b(?:hurts?|easier\s+on|kinder\s+to|lighter\s+on|gentler\s+on)\s+(?:my|the|your|our)\s+"
    r"(?:wallet|pocket|budget|bank\s+account)"
)
# "What would that set me back?" asks the price.
_SETS_BACK = re.compile(r"\bset (?:me|us|you) back\b")
# "Do you carry dog food?" asks what the store sells, not what a product holds.
_STORE_CARRIES = re.compile(r"\b(?:you|u|y'all|ya)\s+(?:carry|carries|stock|store|have)\b")
# "¿La primera está disponible?": whether one card can be bought now.
_IN_STOCK = re.compile(
    r"\b(?:in stock|available|disponibles?|en stock|auf lager|lieferbar|verfügbar|vorrätig"
    r"|en existencias?)\b"
)
# "Are they in stock?" asks of them all (a filter), "is it?" of the one meant.
_PLURAL = re.compile(r"\b(?:they|them|are|those|these|están|estan|sind|sont|ils|elles)\b")
# Words of size that name no option: "le plus grand flacon" asks for the largest size held.
_BIG = frozenset({"big", "large", "grand", "grande", "grands", "grandes", "groß", "große",
                  "gross", "grosse", "gros"})  # fmt: skip
_SMALL = frozenset({"small", "little", "petit", "petite", "petits", "petites", "klein", "kleine",
                    "pequeño", "pequeña", "pequeno", "pequena"})  # fmt: skip
# "What is it made of?": the option a material is under.
_MADE = frozenset({"made", "material", "hecho", "hecha", "fait", "faite", "matière"})
_LETTERS = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class ShownQuestion:
    """``option`` (a catalog option name, or ``"price"``) asked about the cards shown: which
    is at the ``order`` end, or (``order`` ``None``) what it is, for card ``rank`` (``None``:
    every card)."""

    option: str
    order: Order | None
    rank: int | None


def _yes_or_no(products: Sequence[Product], option: str) -> bool:
    """Whether ``option``'s values say yes or no."""
    offered = {v.casefold() for p in products for v in p.option_values().get(option, ())}
    return bool(offered) and offered <= {"yes", "no"}


def _names_a_value(products: Sequence[Product], said: frozenset[str], words: Words) -> bool:
    """Whether the words ``said`` hold a whole option value of ``products`` (not a bare
    number: "4" of "4 cups" is no value said; "10" beside "size" of ``size: 10`` is)."""
    for product in products:
        for name, values in product.option_values().items():
            for value in values:
                stems = words(value)
                # A bare number is a value only beside its option's name: "size 10?".
                bare = all(s.isdigit() for s in stems) and not words(name) <= said
                if stems and stems <= said and not bare:
                    return True
    return False


def _option_words(products: Sequence[Product], words: Words) -> dict[str, frozenset[str]]:
    """Each option of ``products`` by the words that ask for it: its name's and its values'
    units'."""
    found: dict[str, set[str]] = {}
    for product in products:
        for name, values in product.option_values().items():
            bucket = found.setdefault(name, set())
            bucket |= words(name)
            for value in values:
                for unit in units(value):
                    bucket |= words(unit)
    return {name: frozenset(stems) for name, stems in found.items() if stems}


def _holding(options: Iterable[str]) -> list[str]:
    """The options that say how much a product holds: one named just so ("storage" of an
    e-reader, not its "screen size"), else those with such a word in their name."""
    names = list(options)
    for holding in _HOLDING_OPTIONS:
        exact = [n for n in names if n.casefold() == holding]
        if exact:
            return exact
    return [n for n in names if any(h in n.casefold() for h in _HOLDING_OPTIONS)]


def read_shown_question(
    text: str, shown: Sequence[ProductCard], products: Sequence[Product]
) -> ShownQuestion | None:
    """What ``text`` asks about the cards ``shown`` (of ``products``), or ``None``."""
    if not shown or not _QUESTION.search(text):
        return None
    folded = gloss(text.casefold())  # "Welche Farbe hat der?" asks for the color
    raw = set(_LETTERS.findall(folded))
    words = shared_words()
    said = words(folded)
    if _names_a_value(products, said, words) or _ANYTHING_ELSE.search(folded):
        return None  # "what about for medium skin then?": a refinement, not a question
    reference = find_reference(text)
    rank = None if reference is None else reference.rank
    if rank == LAST:
        rank = len(shown)
    if _IN_STOCK.search(folded):
        # Of one card ("is the first one available?"); of them all it filters the search.
        one = rank if rank is not None and rank > 0 else None
        exact = [card for card in shown if not card.breaks]
        if one is None and len(shown) == 1:
            one = shown[0].rank
        elif one is None and len(exact) == 1 and not _PLURAL.search(folded):
            one = exact[0].rank  # "¿está disponible?" of the one match among alternatives
        return None if one is None else ShownQuestion(AVAILABLE, None, one)
    order: Order | None = "max" if raw & _MAX else "min" if raw & _MIN else None
    option: str | None = None
    dear_fr = "cher" in raw or "chère" in raw  # "le moins cher", "le plus cher"
    if _WALLET.search(folded):
        return ShownQuestion(PRICE, "max" if raw & {"more", "most"} else "min", rank)
    if raw & (_CHEAP | _DEAR) or raw & _PRICE_WORDS or dear_fr or _SETS_BACK.search(folded):
        if (raw & (_CHEAP | _DEAR) or dear_fr) and STATED_BOUND.search(folded):
            return None  # "cheaper than 210?": a price bound for the search, not a question
        option = PRICE
        if raw & _CHEAP:
            order = "min"
        elif raw & _DEAR:
            order = "max"
    else:
        by_option = _option_words(products, words)
        overlap = {name: len(stems & said) for name, stems in by_option.items()}
        best = max(overlap.values(), default=0)
        named = [name for name, count in overlap.items() if count == best and best > 0]
        whole = [name for name in named if words(name) <= said]
        if len(named) > 1 and len(whole) == 1:
            named = whole  # "material", not "deck material"
        if not named and raw & _HOLDS and not _STORE_CARRIES.search(folded):
            named = _holding(by_option)
        if not named and raw & (_BIG | _SMALL) and order is not None:
            named = _holding(by_option)
            if raw & _SMALL:
                order = "min"  # "le plus petit": the most small
        if not named and raw & _MADE:
            named = [n for n in by_option if "material" in n.casefold()]
        if len(named) != 1:
            return None
        option = named[0]
    if order is None and option != PRICE and _yes_or_no(products, option):
        return None  # "which of those are waterproof?": a filter, the search's
    if order is None and rank is None and re.search(r"\b(it|that|this)\b", folded):
        rank = shown[0].rank if len(shown) == 1 else None
    return ShownQuestion(option, order, rank)


def products_shown(shown: Sequence[ProductCard], searcher: Searcher) -> list[Product]:
    """The products of the cards ``shown``, once each, as ``searcher`` has them."""
    found = (searcher.product(pid) for pid in dict.fromkeys(card.id for card in shown))
    return [product for product in found if product is not None]


def question_about_shown(
    text: str, shown: Sequence[ProductCard], searcher: Searcher
) -> ShownQuestion | None:
    """:func:`read_shown_question` against the shown cards' products as ``searcher`` has them."""
    return read_shown_question(text, shown, products_shown(shown, searcher))


def _value(card: ProductCard, option: str) -> str | None:
    if option == PRICE:
        return None if card.price is None else f"{card.price:f} {card.currency or ''}".strip()
    folded = option.casefold()
    return next((v for k, v in card.options.items() if k.casefold() == folded), None)


# Values that are a name and a rank ("i5", "i7", "i9"): comparable by the rank.
_RANKED = re.compile(r"^([A-Za-z]+)(\d+)$")


def _measure(card: ProductCard, option: str) -> tuple[str, float] | None:
    if option == PRICE:
        return None if card.price is None else ("price", float(card.price))
    value = _value(card, option)
    if value is None:
        return None
    ranked = _RANKED.match(value.strip())
    if ranked:
        return ranked.group(1).casefold(), float(ranked.group(2))
    return amount(value)


def answer_shown_question(
    question: ShownQuestion, shown: Sequence[ProductCard], tr: NullTranslations
) -> tuple[str, tuple[ProductCard, ...]]:
    """The answer, from the cards' own values, and the cards it is about (the winner
    first)."""
    name = tr.gettext("price") if question.option == PRICE else question.option
    if question.order is not None:
        measured = [(card, _measure(card, question.option)) for card in shown]
        known = [(card, m) for card, m in measured if m is not None]
        dimensions = {m[0] for _, m in known}
        if not known or len(dimensions) > 1:
            listed = "; ".join(f"#{c.rank} {_value(c, question.option) or '?'}" for c in shown)
            text = tr.gettext("I cannot rank them by %(option)s: %(values)s.")
            return text % {"option": name, "values": listed}, tuple(shown)
        pick = max if question.order == "max" else min
        card, _ = pick(known, key=lambda item: item[1][1])
        text = (
            tr.gettext("#%(rank)d, %(title)s, has the most %(option)s: %(value)s.")
            if question.order == "max"
            else tr.gettext("#%(rank)d, %(title)s, has the least %(option)s: %(value)s.")
        )
        if question.option == PRICE:
            text = (
                tr.gettext("#%(rank)d, %(title)s, is the dearest: %(value)s.")
                if question.order == "max"
                else tr.gettext("#%(rank)d, %(title)s, is the cheapest: %(value)s.")
            )
        value = _value(card, question.option) or ""
        answer = text % {"rank": card.rank, "title": card.title, "option": name, "value": value}
        return answer, (card, *(c for c in shown if c is not card))
    meant = [c for c in shown if question.rank is None or c.rank == question.rank]
    if not meant:
        text = tr.gettext("I showed %(count)d results: ask about one from 1 to %(count)d.")
        return text % {"count": len(shown)}, tuple(shown)
    if question.option == AVAILABLE:
        card = meant[0]
        text = (
            tr.gettext("#%(rank)d, %(title)s, is in stock.")
            if card.available
            else tr.gettext("#%(rank)d, %(title)s, is sold out.")
        )
        return text % {"rank": card.rank, "title": card.title}, (card,)
    distinct = {_value(card, question.option) for card in meant}
    if len(meant) == 1 or len(distinct) == 1:
        card = meant[0]
        text = tr.gettext("#%(rank)d, %(title)s, has %(option)s %(value)s.")
        value = _value(card, question.option) or tr.gettext("not given")
        answer = text % {"title": card.title, "rank": card.rank, "option": name, "value": value}
        return answer, tuple(meant)
    listed = "; ".join(
        f"#{c.rank} {_value(c, question.option) or tr.gettext('not given')}" for c in meant
    )
    text = tr.gettext("%(option)s of each one shown: %(values)s.")
    return text % {"option": name, "values": listed}, tuple(meant)


_ASKS = re.compile(
    r"\?|^\s*(?:is|are|does|do|has|ist|hat|es|est|tiene|a)\b|\b(?:or|oder|ou|o)\b", re.IGNORECASE
)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.]|(?<!\d)\.|\.(?!\d)", " ", text.casefold()).split())


def answer_value_question(
    text: str, card: ProductCard, product: Product, tr: NullTranslations
) -> str | None:
    """The answer to a question about one card's option values, named in the question ("is
    the first one 13 inch?", "nylon or polyester on the first one?", "Ist die erste silber
    oder schwarz?"): its own value, said outright; ``None`` when ``text`` asks no such thing."""
    if not _ASKS.search(text):
        return None
    said = f" {_plain(gloss(text.casefold()))} "
    read = parse(text)  # the parser's own words for values ("silber oder schwarz")
    read_values = [
        (name, value)
        for table in (read.options, read.attributes)
        for name, listed in table.items()
        for value in listed
    ]
    named: dict[str, list[str]] = {}
    for option, values in product.option_values().items():
        for value in sorted(values):
            if f" {_plain(value)} " in said or any(
                same_option_value(option, wanted, value) for _, wanted in read_values
            ):
                named.setdefault(option, []).append(value)
    asked = {option: values for option, values in named.items() if option in card.options}
    if not asked:
        return None
    option, found = next(iter(asked.items()))
    own = card.options[option]
    shown = {"rank": card.rank, "title": card.title, "option": option, "value": own}
    if len(found) > 1:  # "nylon or polyester?": which one it is
        return tr.gettext("#%(rank)d, %(title)s, has %(option)s %(value)s.") % shown
    if own == found[0]:
        return tr.gettext("Yes: #%(rank)d, %(title)s, has %(option)s %(value)s.") % shown
    return tr.gettext("No: #%(rank)d, %(title)s, has %(option)s %(value)s, not %(asked)s.") % {
        **shown,
        "asked": found[0],
    }
