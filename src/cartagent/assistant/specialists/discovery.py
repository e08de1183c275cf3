"""Discovery: search the catalog, refine the results, pick one of them.

* A search runs the configured understander with the session's earlier search requests as
  ``context`` (so "in red", "under $40", "not polyester" refine the last search), then the
  retriever. Each product found is shown as up to ``per_product`` cards, one per variant that
  satisfies the request, so a store with one product per category still offers a choice.
  When that leaves room, up to ``max_near`` near misses follow (none match: they are all
  that is shown), each card saying what it breaks ("0.88 USD over your limit of 50 USD").
* "cheaper" / "more expensive" are relative to what was shown: every new card costs less than
  the cheapest card shown (more than the dearest one).
* "the second one", "show me #2", "add the first to my cart" resolve against the stored last
  result list, "add it" to the product being talked about; adding puts the card's variant in
  the session's cart. "Compare the first two" sets shown cards side by side; "what sizes does
  it come in?" lists what the product offers; "is it in stock?", "how much is it?", "is it
  waterproof?" are answered from the catalog (:mod:`..product_facts`).
* "Show me more", "any others?" show the next matches of the last search; "what do you
  sell?" lists the store's departments (:mod:`..catalog_overview`), which also tell a search
  for a kind of product the store has none of.

Answers are rendered from results, never generated prose.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from decimal import Decimal
from functools import partial
from gettext import NullTranslations
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Any

from ...commerce.terms import DEMO_STORE, StoreTerms
from ...money import CURRENCY_DECIMALS
from ...retrieval import (
    YES,
    Exclusion,
    Plan,
    PriceRange,
    SearchQuery,
    Words,
    analyzer,
    asks_nothing,
    canonical_key,
    gloss,
    is_common,
    language_words,
    matching_variants,
    price_clash,
    says_nothing,
    shared_words,
    what_it_breaks,
)
from ..cards import ProductCard, card_from_hit
from ..cart import ADD_LEAD, ADDED, TO_CART, add_card
from ..catalog_overview import CatalogOverview
from ..comparison import compare_cards
from ..conversation import Conversation
from ..domains import Domain
from ..language import DEFAULT
from ..option_pick import find_shown_by_option, has_values, shown_one_named, values_named
from ..product_facts import FactQuestion, answer_fact
from ..product_questions import describe_options, offers_option
from ..references import LAST, Reference, find_reference, focus, pointed_card
from ..reply import Reply
from ..shown_questions import (
    STATED_BOUND,
    answer_shown_question,
    answer_value_question,
    products_shown,
)
from ..shown_superlatives import answer_superlative
from ..specialist import TurnContext

if TYPE_CHECKING:
    from ...catalog import Product
    from ...retrieval import CatalogVocabulary, Hit, Searcher

__all__ = ["DiscoverySpecialist"]

_ENGLISH = NullTranslations()
_WHICH_KIND = "which kind of product?"
_LONG = 300  # characters: a message this long is read for its need first
_CHEAPER = re.compile(r"\b(cheaper|less expensive|more affordable|lower[- ]priced|lower price)\b")
_DEARER = re.compile(r"\b(pricier|more expensive|higher[- ]end|fancier)\b")


MAX_UNCHECKED_SHOWN = 8
"""At most this many of a turn's words that nothing could check are listed in the reply."""
_WORD = re.compile(r"[\w][\w.'-]*")
# What the product is to come with: "with a number pad", "works with siri", "mit Laptopfach".
_WITH = re.compile(r"(?:\bwith|\bw/|\bcon|\bmit|\bavec)\s+([^,.;:!?\n]+)")
# "with my kids", "what's with all this": company or chat, not a part of the product.
_NOT_PARTS = frozenset(
    re.findall(
        r"\w+",
        "my your his her our their all this that these those it me you him them us mi mis tu su "
        "sus mein meine meinem meiner dem den mon ma mes",
    )
)


def _said_back(
    query: SearchQuery, unknown: Sequence[str], vocabulary: CatalogVocabulary | None = None
) -> SearchQuery:
    """``query`` as said back to the shopper: without the words nothing checked, nor those a
    value it holds already says ("adjustible" beside "adjustable", "4g" beside "Wi-Fi +
    Cellular")."""
    stems = shared_words()
    held = [v for table in (query.options, query.attributes) for vs in table.values() for v in vs]
    values = stems(" ".join(held))
    kept = [
        w
        for w in _WORD.findall(query.text)
        if w.casefold() not in unknown
        and not says_nothing(w)
        and not (stems(w) and stems(w) <= values)
        and not (vocabulary is not None and vocabulary.held(w, query))
    ]
    return query.model_copy(update={"text": " ".join(kept)})


def _asked_of(question: FactQuestion, cards: Sequence[ProductCard]) -> tuple[ProductCard, ...]:
    """``cards``, each that is not the version a "comes in" ``question`` asks about saying
    so: "does it come in navy?" of a black jacket shows it as no match for navy."""
    values = values_named(question.feature) if question.kind == "comes_in" else ()
    if not values:
        return tuple(cards)
    lacks = f"not {question.feature}"
    return tuple(
        card if has_values(card.options, values) else replace(card, breaks=(*card.breaks, lacks))
        for card in cards
    )


def _asked_with(said: str, unknown: Sequence[str]) -> list[str]:
    """The words of ``said``'s "with ..." parts of which nothing was understood ("with a
    number pad"); a part with a word that was ("with arms that adjust") is checked by it."""
    asked: list[str] = []
    for part in _WITH.findall(said.casefold()):
        words = _WORD.findall(part)
        content = [w for w in words if not asks_nothing(w)]
        if words and words[0] not in _NOT_PARTS and content and set(content) <= set(unknown):
            asked += content
    return asked


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _step(currency: str) -> Decimal:
    return Decimal(1).scaleb(-CURRENCY_DECIMALS.get(currency, 2))


def _money(amount: Decimal, currency: str | None) -> str:
    return f"{amount:f} {currency}" if currency else f"{amount:f}"


def _relative_price(
    query: SearchQuery, text: str, shown: list[ProductCard], tr: NullTranslations = _ENGLISH
) -> tuple[SearchQuery, str | None, str | None]:
    """``query`` bounded by the prices shown when ``text`` asks for cheaper or dearer.

    Also returns the bound for the shopper ("cheaper than 50.88 USD") and for understanding
    later follow-ups ("up to 50.87 USD", which every understander reads as inclusive).
    """
    cheaper, dearer = _CHEAPER.search(text.casefold()), _DEARER.search(text.casefold())
    priced = [c for c in shown if c.price is not None and c.currency is not None]
    if not (cheaper or dearer) or not priced or STATED_BOUND.search(text.casefold()):
        return query, None, None  # "cheaper than 210": the amount said is the bound
    currency = str(priced[0].currency)
    prices = [c.price for c in priced if c.price is not None and c.currency == currency]
    old = query.price or PriceRange(currency=currency)
    if cheaper:
        cap = min(prices) - _step(currency)
        high = cap if old.max is None else min(old.max, cap)
        bound = PriceRange(min=old.min if old.min is None or old.min <= high else None, max=high)
        phrase = tr.gettext("cheaper than %(price)s") % {"price": _money(min(prices), currency)}
        remembered = f"up to {_money(high, currency)}"  # for the understander: English
    else:
        floor = max(prices) + _step(currency)
        low = floor if old.min is None else max(old.min, floor)
        bound = PriceRange(min=low, max=old.max if old.max is None or old.max >= low else None)
        phrase = tr.gettext("dearer than %(price)s") % {"price": _money(max(prices), currency)}
        remembered = f"from {_money(low, currency)}"
    bound = bound.model_copy(update={"currency": currency})
    return query.model_copy(update={"price": bound}), phrase, remembered


def _about_shown(query: SearchQuery, conversation: Conversation, searcher: Searcher) -> SearchQuery:
    """``query`` kept to the kind of product on screen when it names no kind of its own and
    only one kind shown has what it names ("hepa filter only" after air purifiers and fans,
    "4k at least" after cameras): a follow-up about them, not a search of the whole store."""
    vocabulary = searcher.vocabulary
    shown = [card for card in conversation.results if not card.breaks] or conversation.results
    if query.category or vocabulary is None or not shown:
        return query
    bare = query.model_copy(update={"text": "", "sort": "relevance"})
    if bare.is_empty():
        return query
    kinds = [kind for kind in dict.fromkeys(card.title for card in shown)]
    fitting = [kind for kind in kinds if vocabulary.fits(query, kind)]
    return query.model_copy(update={"category": fitting[0]}) if len(fitting) == 1 else query


def _said(name: str, values: list[str], tr: NullTranslations) -> str:
    """One constraint in words: "IPX7 or IPX4", "water resistance" (for yes)."""
    if [v.casefold() for v in values] == ["yes"]:
        return name
    return tr.gettext(" or ").join(values)


def _ruled_out(exclusion: Exclusion) -> str:
    """What an exclusion rules out, in words: "waterproof" for ``waterproof: yes``."""
    if exclusion.field and exclusion.value.casefold() in YES:
        return exclusion.field
    return exclusion.value


def describe(query: SearchQuery, tr: NullTranslations = _ENGLISH) -> str:
    """The query in words: "blue t-shirt, up to 60 USD, not polyester" (the catalog's words
    as they are, the rest in ``tr``'s language)."""
    words = [
        _said(name, values, tr)
        for name, values in (*query.attributes.items(), *query.options.items())
    ]
    if query.brand:
        words.append(query.brand)
    # Words of the text already said as a constraint ("i7" is processor: i7) are not repeated,
    # nor chat that asks for nothing ("then", "sorry", "bitte").
    placed = {
        w.casefold()
        for name, values in (*query.attributes.items(), *query.options.items())
        for said in (name, *values)
        for w in _WORD.findall(said)
    }
    placed |= {w.casefold() for w in _WORD.findall(query.category or "")}  # the kind, said once
    # "non-waterproof" is said as the exclusion it became ("not waterproof").
    placed |= {f"non-{_ruled_out(e).casefold()}" for e in query.exclude}
    text = " ".join(
        w for w in _WORD.findall(query.text) if w.casefold() not in placed and not asks_nothing(w)
    )
    words.extend(w for w in (query.category, text) if w)
    parts = [" ".join(words) or tr.gettext("anything")]
    price = query.price
    if price is not None and price.min is not None and price.max is not None:
        high = _money(price.max, price.currency)
        parts.append(tr.gettext("%(low)s to %(high)s") % {"low": f"{price.min:f}", "high": high})
    elif price is not None and price.max is not None:
        parts.append(tr.gettext("up to %(price)s") % {"price": _money(price.max, price.currency)})
    elif price is not None and price.min is not None:
        parts.append(tr.gettext("from %(price)s") % {"price": _money(price.min, price.currency)})
    parts.extend(tr.gettext("not %(value)s") % {"value": _ruled_out(e)} for e in query.exclude)
    if query.available_only:
        parts.append(tr.gettext("in stock"))
    return ", ".join(parts)


def _heading(matches: int, near: int, wanted: str, tr: NullTranslations = _ENGLISH) -> str:
    """The reply's line above its cards, e.g. "1 exact match for red t-shirt, then 2 close
    alternatives (not exact):"."""
    if not matches:
        return tr.ngettext(
            "No exact match for %(wanted)s; the closest one, and how it differs:",
            "No exact match for %(wanted)s; the closest %(near)d, and how each differs:",
            near,
        ) % {"wanted": wanted, "near": near}
    found = tr.ngettext(
        "%(matches)d exact match for %(wanted)s",
        "%(matches)d exact matches for %(wanted)s",
        matches,
    ) % {"matches": matches, "wanted": wanted}
    if not near:
        return f"{found}:"
    return tr.ngettext(
        "%(found)s, then %(near)d close alternative (not exact):",
        "%(found)s, then %(near)d close alternatives (not exact):",
        near,
    ) % {"found": found, "near": near}


# Words that offer alternatives ("nylon or leather", "A5/A4"), in the four languages.
_EITHER = re.compile(r"(?<![\w-])(?:or|either|nor|o|u|ni|oder|ou|entweder)(?![\w-])|/")


def _says(text: str, value: str) -> bool:
    """Whether casefolded ``text`` says ``value`` as words of its own ("polarized" is not said
    by "non-polarized")."""
    return re.search(rf"(?<![\w-]){re.escape(value.casefold())}(?![\w-])", text) is not None


def _search_record(request: str, query: SearchQuery) -> dict[str, Any]:
    """What a reply stores of the search it ran (or asked about): what later turns refine."""
    return {"request": request, "query": query.model_dump(mode="json", exclude_defaults=True)}


def both_at_once(query: SearchQuery, text: str) -> tuple[str, str, str] | None:
    """An option ``text`` asks for two opposite values of at once, not as alternatives:
    ("lens type", "polarized", "non-polarized") for "polarized sunglasses with non-polarized
    lenses", "hard cover notebook, the bendy soft cover kind". Opposite: one value is the other
    with a prefix ("non-polarized"), or both end in the same word ("hard cover", "soft cover").
    ``None`` when there is no such pair, or the turn offers alternatives ("or", "/")."""
    said = text.casefold()
    if _EITHER.search(said):
        return None
    for option, values in query.options.items():
        named = [v for v in values if _says(said, v)]
        for first, second in combinations(named, 2):
            a, b = first.casefold(), second.casefold()
            heads = a.split()[-1] == b.split()[-1] and len(a.split()) > 1 and len(b.split()) > 1
            if a.endswith(b) or b.endswith(a) or heads:
                return option, first, second
        # "a robot vacuum, but an upright one": one value, then "but" another.
        said_at = sorted((at, v) for v in values if (at := _mention(said, v)) is not None)
        for (start, first), (end, second) in pairwise(said_at):
            if _BUT.search(said, start, end):
                return option, first, second
    return None


def _excluded(query: SearchQuery, option: str) -> list[str]:
    """The values ``query``'s exclusions rule out under ``option``, in their order."""
    key = canonical_key(option)
    return [e.value for e in query.exclude if e.field and canonical_key(e.field) == key]


def _without_ruled_out(query: SearchQuery) -> SearchQuery:
    """``query`` without the option values its exclusions rule out."""
    options: dict[str, list[str]] = {}
    for option, values in query.options.items():
        out = {v.casefold() for v in _excluded(query, option)}
        kept = [v for v in values if v.casefold() not in out]
        if kept:
            options[option] = kept
    return query if options == query.options else query.model_copy(update={"options": options})


def ruled_out_too(query: SearchQuery) -> tuple[str, str] | None:
    """A value ``query`` asks for that one of its exclusions rules out, with the value that
    exclusion was said as: ("navy", "blue") for "a navy backpack, but nothing blue"; ``None``
    when none is."""
    for option, values in query.options.items():
        excluded = _excluded(query, option)
        folded = {v.casefold() for v in excluded}
        for value in values:
            if value.casefold() in folded:
                return value, excluded[0]
    return None


_BUT = re.compile(r"(?<![\w-])(?:but|aber|pero|mais)(?![\w-])")


def _mention(said: str, value: str) -> int | None:
    """Where casefolded ``said`` names ``value`` by its first word's start ("robot" of
    "robotic"), or ``None``."""
    head = value.casefold().split()[0][:5] if value.strip() else ""
    found = re.search(rf"(?<![\w-]){re.escape(head)}", said) if len(head) >= 3 else None
    return None if found is None else found.start()


class DiscoverySpecialist:
    """Finds products with the searcher and keeps the shown list for references."""

    name = "discovery"
    domain = Domain.DISCOVERY
    tools: tuple[str, ...] = ("search_products",)
    prompt: str | None = "discovery.md"

    def __init__(
        self,
        *,
        max_cards: int = 6,
        per_product: int = 3,
        max_near: int = 3,
        terms: StoreTerms = DEMO_STORE,
        overview: CatalogOverview | None = None,
    ) -> None:
        """``overview`` answers "what do you sell?" (made from the catalog searched)."""
        if max_cards < 1 or per_product < 1:
            raise ValueError("max_cards and per_product must be at least 1")
        if max_near < 0:
            raise ValueError("max_near must not be negative")
        self.terms = terms
        self.max_cards = max_cards
        self.per_product = per_product
        self.max_near = max_near
        self.overview = overview or CatalogOverview()
        self._words: Words | None = None

    async def handle(self, turn: TurnContext) -> Reply:
        reading = turn.reading  # the router's, when it read the turn: nothing is read twice
        if reading.catalog_question:
            return Reply(self.overview.describe(), self.domain)
        if turn.conversation.results and reading.other_than:
            # "does it come in another colour than red?": the search on screen without red.
            return await self._search(turn)
        asked = reading.option_question
        if asked is not None and turn.conversation.results and await self._offer(turn, asked):
            return await self._options(turn, asked)
        fact = reading.fact
        if fact is not None and turn.conversation.results:
            return await self._fact(turn, fact)
        if reading.more:
            return await self._more(turn)
        rest = reading.similar
        if rest is not None:
            similar = await self._similar(turn, rest)
            if similar is not None:
                return similar
            if rest:  # "something similar to a hoodie": a search for a hoodie
                return await self._search(replace(turn, text=rest))
        compared = reading.comparison
        if compared is not None:
            return self._compare(turn.conversation, compared)
        # A question about a card ("Was kostet der zweite?") before the card itself.
        answered = await self._shown_question(turn)
        if answered is not None:
            return answered
        reference = reading.reference
        if reference is not None:
            valued = await self._value_question(turn, reference)
            return valued or self._pick(turn.conversation, reference)
        which = await self._which_value(turn)
        if which is not None:
            return which
        pointed = find_shown_by_option(turn.text, turn.conversation)
        if pointed is not None and pointed.cards:  # "the over-ear one"; none shown: a refinement
            if len(pointed.cards) == 1:
                card = pointed.cards[0]
                return Reply(f"#{card.rank}: {card.describe()}.", self.domain, pointed.cards)
            text = f"Which one? {len(pointed.cards)} of those shown are {pointed.described}:"
            return Reply(text, self.domain, pointed.cards)
        superlative = reading.superlative
        if superlative is not None and turn.conversation.results:
            text, cards = answer_superlative(superlative, turn.conversation.results)
            return Reply(text, self.domain, cards)
        return await self._search(turn)

    async def _shown_question(self, turn: TurnContext) -> Reply | None:
        """The answer to a question about the results on screen in the shopper's own words
        ("which one holds more water?"), or ``None`` when it is not one."""
        shown = turn.conversation.results
        reading = turn.reading
        question = await asyncio.to_thread(lambda: reading.about_shown)
        if question is None:
            return None
        text, cards = answer_shown_question(question, shown, turn.messages)
        return Reply(text, self.domain, cards)

    async def _value_question(self, turn: TurnContext, reference: Reference) -> Reply | None:
        """The answer to a question about the option values of the card pointed at ("is the
        first one 13 inch?"), or ``None`` when it asks none."""
        card = pointed_card(turn.conversation, reference)
        if reference.action != "show" or isinstance(card, str) or turn.searcher is None:
            return None
        product = await asyncio.to_thread(turn.searcher.product, card.id)
        if product is None:
            return None
        answer = answer_value_question(turn.text, card, product, turn.messages)
        return None if answer is None else Reply(answer, self.domain, (card,))

    async def _which_value(self, turn: TurnContext) -> Reply | None:
        """With one card on screen, "full zip or half zip?" asks which of the two it is: its
        own value, said outright; ``None`` for any other turn."""
        shown = turn.conversation.results
        text = turn.text.strip()
        if len(shown) != 1 or not text.endswith("?") or not _EITHER.search(text.casefold()):
            return None
        if turn.searcher is None:
            return None
        card = shown[0]
        product = await asyncio.to_thread(turn.searcher.product, card.id)
        if product is None:
            return None
        answer = answer_value_question(text, card, product, turn.messages)
        return None if answer is None else Reply(answer, self.domain, (card,))

    # ------------------------------------------------------------------ references

    def _pick(self, conversation: Conversation, reference: Reference) -> Reply:
        card = pointed_card(conversation, reference)
        if isinstance(card, str):
            return Reply(card, self.domain, tuple(conversation.results))
        if reference.action == "show":
            return Reply(f"#{card.rank}: {card.describe()}.", self.domain, (card,))
        added = add_card(conversation, card, reference.quantity, self.terms)
        return Reply(added, self.domain, (card,), data=ADDED)

    async def _meant(
        self, turn: TurnContext, example: str, *, of_product: bool
    ) -> tuple[Product, ProductCard, tuple[ProductCard, ...]] | Reply:
        """The product a question is about ("it", "the second one", else the one shown), its
        card and the cards to show with the answer; or the reply asking which one.

        ``of_product``: the question is about the product, not one variant of it, so the list
        showing one product's variants (near misses aside) settles it."""
        conversation = turn.conversation
        shown = conversation.results
        reference = turn.reading.reference
        card: ProductCard | str | None
        if reference is not None:
            card = pointed_card(conversation, reference)
        else:
            card = shown_one_named(turn.text, conversation) or focus(conversation)
        # The list still stands (no card singled out) when it shows one product.
        cards = (card,) if isinstance(card, ProductCard) else tuple(shown)
        matches = [c for c in shown if not c.breaks] or shown
        one = len({c.id for c in matches}) == 1 if of_product else len(matches) == 1
        if card is None and one:
            card = matches[0]
        if card is None:
            card = f"Which one? Ask, for example, '{example}'"
        if isinstance(card, str):
            return Reply(card, self.domain, tuple(shown))
        searcher = turn.searcher
        product = None if searcher is None else await asyncio.to_thread(searcher.product, card.id)
        if product is None:
            return Reply(f"I cannot find {card.title} in the catalog any more.", self.domain)
        return product, card, cards

    @staticmethod
    async def _offer(turn: TurnContext, asked: str) -> bool:
        """Whether a product shown has the option ``asked`` ("what sizes does it come in?")
        and the question names no value ("what hardshell sets do you have?" is a search)."""
        searcher = turn.searcher
        if searcher is None:
            return True  # the question is answered as before: it says what it cannot find
        if await asyncio.to_thread(lambda: turn.reading.names_constraints):
            return False
        shown = turn.conversation.results
        return offers_option(await asyncio.to_thread(products_shown, shown, searcher), asked)

    async def _options(self, turn: TurnContext, asked: str) -> Reply:
        """What the product meant ("it", "the second one", or the one product shown) offers."""
        example = f"what {asked or 'option'}s does the second one have?"
        meant = await self._meant(turn, example, of_product=True)
        if isinstance(meant, Reply):
            each = await self._each(
                turn, lambda product, _: describe_options(product, asked), of_product=True
            )
            return each or meant
        product, _, cards = meant
        return Reply(describe_options(product, asked), self.domain, cards)

    async def _each(
        self, turn: TurnContext, answer: Callable[[Product, ProductCard], str], *, of_product: bool
    ) -> Reply | None:
        """``answer`` for each card of the latest list, when the question points at none of
        them and the list is short: "is the band leather?" over three close alternatives is
        asked of all three, as a clerk would answer it. ``of_product``: once per product."""
        conversation, searcher = turn.conversation, turn.searcher
        shown = conversation.results
        if (
            searcher is None
            or not 1 < len(shown) <= self.max_cards
            or turn.reading.reference is not None
            or focus(conversation) is not None
        ):
            return None
        lines: list[str] = []
        seen: set[str] = set()
        for card in shown:
            if of_product and card.id in seen:
                continue
            seen.add(card.id)
            product = await asyncio.to_thread(searcher.product, card.id)
            if product is not None:
                lines.append(f"#{card.rank}: {answer(product, card)}")
        return Reply("\n".join(lines), self.domain, tuple(shown)) if lines else None

    async def _fact(self, turn: TurnContext, question: FactQuestion) -> Reply:
        """Stock, price, a feature or the option values of the product meant, from the
        catalog."""
        examples = {
            "stock": "is the second one in stock?",
            "price": "how much is the second one?",
            "has": f"is the second one {question.feature}?",
            "comes_in": f"does the second one come in {question.feature}?",
            "rating": "is the second one any good?",
        }
        about_product = question.kind in ("has", "comes_in", "rating")
        meant = await self._meant(turn, examples[question.kind], of_product=about_product)
        if isinstance(meant, Reply):
            each = await self._each(
                turn,
                lambda product, card: answer_fact(question, product, card),
                of_product=question.kind in ("comes_in", "rating"),
            )
            if each is None:
                return meant
            return replace(each, cards=_asked_of(question, each.cards))
        product, card, cards = meant
        return Reply(answer_fact(question, product, card), self.domain, _asked_of(question, cards))

    def _compare(self, conversation: Conversation, ranks: tuple[int, ...]) -> Reply:
        shown = conversation.results
        if len(shown) < 2:
            return Reply("Search for products first; then I can compare two of them.", self.domain)
        if any(not 1 <= rank <= len(shown) for rank in ranks if rank != LAST):
            return Reply(
                f"I showed {len(shown)} results: compare numbers from 1 to {len(shown)}.",
                self.domain,
                tuple(shown),
            )
        ranks = tuple(len(shown) if rank == LAST else rank for rank in ranks)
        cards = [shown[rank - 1] for rank in ranks] if ranks else list(shown)
        return Reply(compare_cards(cards), self.domain, tuple(cards))

    # ---------------------------------------------------------------------- search

    async def _more(self, turn: TurnContext) -> Reply:
        """The next matches of the latest search (other products first, then more versions of
        those shown), or that there are no more."""
        conversation, searcher = turn.conversation, turn.searcher
        last: dict[str, Any] | None = None
        shown = {card.variant_id for card in conversation.results}
        # Every card shown since the search, over all its pages.
        for message in reversed(conversation.messages):
            if message.role != "assistant":
                continue
            shown.update(str(card.get("variant_id")) for card in message.payload.get("cards") or [])
            found = message.payload.get("search")
            if isinstance(found, dict) and not message.payload.get("more"):
                last = found
                break
        tr = turn.messages
        if last is None or searcher is None or not conversation.results:
            return Reply(tr.gettext("More of what? Tell me what you are looking for."), self.domain)
        query = SearchQuery.model_validate(last.get("query") or {})
        start = time.perf_counter()
        fetched = self.max_cards * 3
        result = await asyncio.to_thread(partial(searcher.search_query, query, fetched, near=0))
        every = fetched * self.per_product
        cards = self._cards(result.hits, query, limit=every)
        if all(c.variant_id in shown for c in cards):  # then other versions of those shown
            cards = self._cards(result.hits, query, per_product=every, limit=every)
        cards = [c for c in cards if c.variant_id not in shown]
        cards = [c for c in self._verified(cards, query, searcher)[0] if not c.breaks]
        turn.timings["retrieve"] = _ms(start)
        wanted = describe(query, tr)
        if not cards:
            return Reply(
                tr.gettext(
                    "That is every match for %(wanted)s. Ask for something else, or change a "
                    "constraint ('under 200', 'in any colour')."
                )
                % {"wanted": wanted},
                self.domain,
                tuple(conversation.results),
            )
        page = [replace(card, rank=rank) for rank, card in enumerate(cards[: self.max_cards], 1)]
        conversation.results = page
        more = tr.ngettext(
            "%(count)d more match for %(wanted)s:",
            "%(count)d more matches for %(wanted)s:",
            len(page),
        )
        return Reply(
            more % {"count": len(page), "wanted": wanted},
            self.domain,
            tuple(page),
            data={"search": last, "more": True},
        )

    async def _similar(self, turn: TurnContext, rest: str) -> Reply | None:
        """Other products like the one meant; ``None`` when no shown product is meant ("something
        similar to a kettle" is a search)."""
        conversation, searcher = turn.conversation, turn.searcher
        reference = find_reference(rest) if rest else None
        card = pointed_card(conversation, reference) if reference else focus(conversation)
        if isinstance(card, str):
            return Reply(card, self.domain, tuple(conversation.results))
        if card is None and not rest and len(conversation.results) > 1:
            return Reply(
                "Similar to which one? Say, for example, 'something similar to the first one'.",
                self.domain,
                tuple(conversation.results),
            )
        product = None if card is None or searcher is None else searcher.product(card.id)
        if card is None or product is None or searcher is None:
            return None
        # The title and the kinds above it ("Audio"): what it is and what it is among.
        query = SearchQuery(text=" ".join(dict.fromkeys([product.title, *product.category[1:]])))
        start = time.perf_counter()
        result = await asyncio.to_thread(
            partial(searcher.search_query, query, self.max_cards * 3, near=0)
        )

        def kin(hit: Hit) -> int:
            """How much of its category path a hit shares with the product (shoes by shoes)."""
            pairs = list(zip(hit.product.category, product.category, strict=False))
            return next((n for n, (a, b) in enumerate(pairs) if a != b), len(pairs))

        others = [hit for hit in result.hits if hit.product.id != product.id]
        others.sort(key=kin, reverse=True)  # stable: the search's order within each kinship
        cards = self._cards(others, query, per_product=1)
        turn.timings["retrieve"] = _ms(start)
        if not cards:
            return Reply(f"I found nothing else like {product.title}.", self.domain)
        shown = [replace(c, rank=rank) for rank, c in enumerate(cards, 1)]
        conversation.results = shown
        return Reply(f"Like {product.title}:", self.domain, tuple(shown))

    async def _search(self, turn: TurnContext) -> Reply:
        searcher, tr = turn.searcher, turn.messages
        if searcher is None:
            return Reply(tr.gettext("Product search is not set up in this assistant."), self.domain)
        conversation = turn.conversation
        adding = ADD_LEAD.match(turn.text)
        # "Also add a yoga mat": a search for a yoga mat, then the question which one to add.
        text = TO_CART.sub("", turn.text[adding.end() :]) if adding else turn.text
        if len(text) > _LONG and searcher.vocabulary is not None:
            text = searcher.vocabulary.need(text)  # the need, not the story around it
        elif searcher.vocabulary is not None:
            text = searcher.vocabulary.asked_kind(text)  # "... keyboard. looking for a mouse"
        if turn.language != DEFAULT and searcher.vocabulary is not None:
            # "meine Freundin hat mich mitgeschleppt": "hat" is German, not a hat.
            text = searcher.vocabulary.without_unsold_kinds(text, language_words(turn.language))
        start = time.perf_counter()
        query = await asyncio.to_thread(
            partial(
                turn.reading.search,
                text,
                context=conversation.search_requests(),
                shown=conversation.shown_query(),
            )
        )
        turn.timings["understand"] = _ms(start)
        if len(turn.text) > _LONG:
            # In a story, "a white appliance would look ridiculous" beside "nothing white" is
            # no wish for white: what it rules out stands.
            query = _without_ruled_out(query)
        clash = both_at_once(query, text)
        if clash is not None:
            option, first, second = clash
            question = tr.gettext(
                "%(first)s or %(second)s? A product has one %(option)s, not both: which one "
                "do you want?"
            )
            # Kept as the search on screen, less the option asked about: the answer ("soft
            # cover, A4") refines it.
            options = {k: v for k, v in query.options.items() if k != option}
            asked = query.model_copy(update={"options": options})
            return Reply(
                question % {"first": first, "second": second, "option": option},
                self.domain,
                data={"search": _search_record(text, asked)},
            )
        bounds = price_clash(text)
        if bounds is not None:
            low, high = bounds
            question = tr.gettext(
                "Nothing costs more than %(low)s and less than %(high)s at once: from "
                "%(low)s, or up to %(high)s?"
            )
            currency = query.price.currency if query.price else None
            said = {"low": _money(low, currency), "high": _money(high, currency)}
            # Kept as the search on screen, less the price: the answer ("more than 1000")
            # refines it.
            asked = query.model_copy(update={"price": None})
            return Reply(question % said, self.domain, data={"search": _search_record(text, asked)})
        if query.model_copy(update={"sort": "relevance"}).is_empty():
            return Reply(
                tr.gettext("What are you looking for? For example: a blue t-shirt under 60."),
                self.domain,
            )
        query = _about_shown(query, conversation, searcher)
        query, relative, bound = _relative_price(query, text, conversation.results, tr)
        start = time.perf_counter()
        fetched = self.max_cards  # products; each gives up to per_product cards
        result = await asyncio.to_thread(
            partial(searcher.search_query, query, fetched, near=self.max_near)
        )
        cards, unknown = self._verified(
            self._cards(result.hits, query),
            query,
            searcher,
            foreign=turn.text if turn.language != DEFAULT else "",
            language=turn.language,
            said=turn.text,
        )
        turn.timings["retrieve"] = _ms(start)
        described = _said_back(query, unknown, searcher.vocabulary)
        wanted = describe(described, tr)
        if unknown:
            # Said once, on the turn that says them: words carried from earlier turns were
            # listed then, and a long story's words are not all repeated back.
            lowered = turn.text.casefold()
            this_turn = {w.rstrip(".'-") for w in _WORD.findall(f"{lowered} {gloss(lowered)}")}
            # A common word of the shopper's language is their chat, not a requirement.
            fresh = [w for w in unknown if w in this_turn and not is_common(w, turn.language)]
            if fresh:
                words = ", ".join(fresh[:MAX_UNCHECKED_SHOWN])
                if len(fresh) > MAX_UNCHECKED_SHOWN:
                    more = len(fresh) - MAX_UNCHECKED_SHOWN
                    words += tr.gettext(" and %(count)d more") % {"count": more}
                unchecked = tr.gettext("(I could not check: %(words)s)") % {"words": words}
                wanted = f"{wanted} {unchecked}"
        if not cards and relative is not None:
            unbounded = describe(described.model_copy(update={"price": None}), tr)
            text = tr.gettext(
                "Nothing %(relative)s matches %(wanted)s; the results above still stand."
            ) % {"relative": relative, "wanted": unbounded}
            return Reply(text, self.domain)
        # "Cheaper" asks about prices only: a near miss would just be one that is not cheaper.
        room = 0 if relative is not None else min(self.max_near, self.max_cards - len(cards))
        near = [
            replace(card_from_hit(n.hit, 0), breaks=tuple(n.breaks))
            for n in result.near_misses[:room]
        ]
        if not cards and not near:
            if query.category and self.overview.sells(query.category) is False:
                text = tr.gettext(
                    "No products match %(wanted)s, and this store has no %(kind)s at all. Its "
                    "departments: %(departments)s."
                )
                departments = self.overview.departments_line()
                return Reply(
                    text % {"wanted": wanted, "kind": query.category, "departments": departments},
                    self.domain,
                )
            text = tr.gettext("No products match %(wanted)s. Try fewer or different words.")
            return Reply(text % {"wanted": wanted}, self.domain)
        shown = [replace(card, rank=rank) for rank, card in enumerate([*cards, *near], 1)]
        conversation.results = shown
        request = text if bound is None else f"{text} ({bound})"
        kinds = {card.title for card in cards if not card.breaks}
        if query.category is None and len(kinds) == 1:
            # Every match is one kind ("something for the air in my bedroom": air purifiers):
            # a follow-up refines a search for that kind.
            search = _search_record(request, query.model_copy(update={"category": kinds.pop()}))
        else:
            search = _search_record(request, query)
        matches = sum(1 for card in cards if not card.breaks)
        heading = _heading(matches, len(shown) - matches, wanted, tr)
        both = ruled_out_too(query) if not matches else None
        if both is not None:
            cannot = tr.gettext("%(wanted)s and not %(excluded)s cannot both hold.")
            impossible = cannot % {"wanted": both[0], "excluded": both[1]}
            heading = f"{impossible[:1].upper()}{impossible[1:]} {heading}"
        if not matches and any(card.breaks == (_WHICH_KIND,) for card in cards):
            heading = tr.gettext(
                "Which kind of product do you mean? Several kinds have %(wanted)s, for example:"
            ) % {"wanted": wanted}
        if adding and matches:
            which = tr.gettext("Which one should I add? Say, e.g., 'add the first one':")
            heading = f"{heading[:-1]}. {which}"
        constraints = [c.record() for c in turn.reading.constraints(query)]
        return Reply(
            heading,
            self.domain,
            tuple(shown),
            data={"search": search, "constraints": constraints},
        )

    @staticmethod
    def _verified(
        cards: list[ProductCard],
        query: SearchQuery,
        searcher: Searcher,
        *,
        foreign: str = "",
        language: str = DEFAULT,
        said: str = "",
    ) -> tuple[list[ProductCard], list[str]]:
        """``cards``, exact matches first, each other saying what it lacks; and the words of
        the request nothing could check.

        A card is an exact match only when the request's words that the catalog uses are
        its own too ("laptop compartment" left unplaced: a camera-compartment bag lacks
        "laptop"), and something of the request was checked at all: words alone that the
        catalog never uses ("tents", "commute") check nothing, so what they find is only
        the closest. In ``foreign``, the turn's words when they are not the catalog's
        language, such a word is most likely a requirement in that language ("argenté",
        "kabellose"): no card is an exact match while the turn itself says one, unless it is
        one of ``language``'s common words ("dazu", "entonces"), which are chat. Words the
        turn (``said``) asks to come "with" the product ("with a number pad", "works with
        siri") are requirements too, in any language: while nothing checks them, no card is
        an exact match."""
        vocabulary = searcher.vocabulary
        if vocabulary is None:
            return cards, []
        known, unknown, unplaced, graded = vocabulary.leftover(query)
        structured = not query.model_copy(update={"text": "", "sort": "relevance"}).is_empty()
        foreign_words = set(_WORD.findall(foreign.casefold()))
        untranslated = [w for w in unknown if w in foreign_words and not is_common(w, language)]
        asked = _asked_with(said, [*unplaced, *unknown])
        untranslated += [w for w in asked if w not in untranslated]
        # An option the turn names in its language ("Laptopfach": compartment) with no value
        # read for it is no more checked than an untranslated word.
        glossed = set(_WORD.findall(gloss(foreign.casefold()))) - foreign_words
        untranslated += [w for w in unplaced if w in glossed]
        kind = vocabulary.products_of(query.category) if query.category else None
        bare = query.model_copy(update={"text": "", "sort": "relevance", "category": None})
        filed_only = (
            query.category is not None
            and bare.is_empty()
            and not vocabulary.names_products(query.category)
        )

        def breaks(card: ProductCard) -> tuple[str, ...]:
            if card.breaks:
                return card.breaks
            if kind is not None and card.id not in kind:  # a Laptop filed under "Tablets"
                return (f"not a {query.category}",)
            if graded:
                return (f"not checked: {', '.join(graded)}",)
            if untranslated:
                return (f"not checked: {', '.join(untranslated)}",)
            if not structured and not known:
                return (f"not checked: {', '.join(unknown) or 'nothing to check'}",)
            if filed_only and unknown:
                # "a sleeping bag": a kind of its own, not any product filed under "Bags".
                return (f"not checked: {' '.join([*unknown, query.category or ''])}",)
            product = searcher.product(card.id)
            if product is None:
                return ("no longer in the catalog",)
            variant = next((v for v in product.variants if v.id == card.variant_id), None)
            if query.category is None:
                # No kind said: "without wires" asks for a thing that has a connectivity,
                # which running shoes, lacking one, pass only by having none.
                lacking = [
                    e.field
                    for e in query.exclude
                    if e.field and not vocabulary.speaks_of(product, e.field)
                ]
                if lacking:
                    return tuple(f"no {name}" for name in dict.fromkeys(lacking))
            return tuple(f"no {word}" for word in vocabulary.lacks(known, product, variant))

        judged = [replace(card, breaks=breaks(card)) for card in cards]
        kinds = {card.title for card in judged if not card.breaks}
        if not query.category and len(kinds) > 1:
            # No kind said, and what was said fits several: none is "the" match.
            judged = [replace(card, breaks=card.breaks or (_WHICH_KIND,)) for card in judged]
        ordered = [c for c in judged if not c.breaks] + [c for c in judged if c.breaks]
        return [replace(c, rank=rank) for rank, c in enumerate(ordered, 1)], unplaced + unknown

    def _cards(
        self,
        hits: list[Hit],
        query: SearchQuery,
        *,
        per_product: int | None = None,
        limit: int | None = None,
    ) -> list[ProductCard]:
        """Up to ``per_product`` cards per hit (default: the specialist's), one per matching
        variant, best first; at most ``limit`` (default ``max_cards``)."""
        per_product = per_product or self.per_product
        if self._words is None:
            self._words = Words(analyzer())
        plan = Plan.of(query, self._words)
        descending = query.sort == "price_desc"
        chosen: list[ProductCard] = []
        for hit in hits:
            variants = matching_variants(plan, hit.product, self._words)
            variants.sort(key=lambda v: (not v.available, -v.price if descending else v.price))
            if not variants:  # never shown as a match: it says what it breaks
                breaks = tuple(what_it_breaks(query, hit, self._words)) or ("not checked",)
                chosen.append(replace(card_from_hit(hit, 0), breaks=breaks))
                continue
            for variant in variants[:per_product]:
                chosen.append(card_from_hit(hit.model_copy(update={"variant": variant}), 0))
        if query.sort in ("price_asc", "price_desc"):
            chosen.sort(
                key=lambda c: (
                    not c.available,
                    (-1 if descending else 1) * (c.price if c.price is not None else 0),
                )
            )
        kept = chosen[: limit or self.max_cards]
        return [replace(card, rank=rank) for rank, card in enumerate(kept, 1)]
