"""Teacher-written training data, labels first: the gold query is drawn from the catalog, and a
stronger model (the teacher) writes the message a shopper would type for it.

Writing text for a known label is within reach of a small teacher; the label stays exact
because it never comes from the text. Each label is a product's kind with one to three of a
variant's facets (:mod:`cartagent.tuning.listing`), sometimes a value ruled out, a price
ceiling or "in stock". Each message is written in a :class:`Style`: long and chatty, vague
about the kind (what it is for instead), typed fast with typos, slang, a few words, or in
Spanish, German or French.

A message is kept only when it passes the round trip of :func:`check`: it says each wanted
value (in the catalog's words, a gloss of them, or within a typo of them), each value ruled
out with a negation, the price, the kind (or, for a vague message, anything but the kind), in
the style's language, and is not a request of an evaluation set. What is rejected is counted
by reason in the :class:`TeacherCard`.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from rapidfuzz import fuzz

from ..llm.model import Message, Model
from ..retrieval import SearchQuery, gloss, parse, query_json
from .holdout import HeldOut, normalise
from .listing import Facet, Listing, Offer
from .wording import Ask, ceiling_price

__all__ = [
    "STYLES",
    "Label",
    "Style",
    "TeacherCard",
    "TeacherExample",
    "check",
    "out_of_role_reason",
    "sample_label",
    "stock_said",
    "teacher_messages",
    "write_teacher_data",
]

MAX_MESSAGE_CHARS = 1500
MAX_WANTED = 3
_FUZZY = 85  # rapidfuzz partial ratio at which a value counts as said (a typo or two)


@dataclass(frozen=True)
class Style:
    """How the shopper writes: ``instruction`` for the teacher, the message's ``language``,
    and whether the kind may be named (a vague message says what it is for instead)."""

    name: str
    instruction: str
    language: str = "en"
    names_kind: bool = True


STYLES: Final[tuple[Style, ...]] = (
    Style(
        "chatty",
        "Write a long, chatty message of four to six sentences: a little story about why they "
        "need it (their day, family or plans), with the requirements inside the story.",
    ),
    Style(
        "vague",
        "Do NOT name the kind of product or any word of its name. Say instead what it is for: "
        "the situation or use (for example where or when they would use it).",
        names_kind=False,
    ),
    Style("typos", "Write it quickly on a phone: all lower case, two or three typos."),
    Style("slang", "Write it casually, with slang and abbreviations, like a text to a friend."),
    Style("terse", "Write only a few words, as typed into a search box."),
    Style("spanish", "Write the message in Spanish.", language="es"),
    Style("german", "Write the message in German.", language="de"),
    Style("french", "Write the message in French.", language="fr"),
)

_NEGATIONS: Final = {
    "en": ("not", "no", "n't", "without", "except", "anything but", "avoid", "hate", "other than"),
    "es": ("no", "sin", "nada", "excepto", "menos", "ni"),
    "de": ("nicht", "kein", "keine", "keinen", "ohne", "außer", "ausser", "bloß nicht"),
    "fr": ("pas", "sans", "sauf", "aucun", "aucune", "ni", "non", "évitez", "éviter"),
}
_META = re.compile(
    r"\b(?:requirements?|style|the shopper|as a shopper|here is|here's the message|example|"
    r"exemple|ejemplo|beispiel|voici|shopping assistant|chat assistant)\b"
    r"|^\W*message\s*:|\[[^\]]*\]",  # "[Your Name]": a template's blank
    re.IGNORECASE,
)
# The teacher answering as the store ("Sure! What kind of running shoes do you need?").
_ASSISTANT_VOICE = re.compile(
    r"^\W*(?:sure|certainly|of course|absolutely|great choice|i'd be happy|i would be happy|"
    r"bien sûr|claro|por supuesto|natürlich|gerne|selbstverständlich)\b"
    r"|\b(?:how can i (?:help|assist)|do you need\?|would you like\?|let me know if|"
    r"besuchen sie unsere|visit our)",
    re.IGNORECASE,
)
_QUOTES = "\"'\u201c\u201d\u00ab\u00bb\u2018\u2019"


@dataclass(frozen=True)
class Label:
    """A gold query and the pieces it was drawn from."""

    listing: Listing
    wanted: tuple[Facet, ...]
    avoided: tuple[Facet, ...]
    price_max: Decimal | None
    in_stock: bool
    gold: SearchQuery

    def requirements(self) -> list[str]:
        """The requirements in plain English, one a line, for the teacher."""
        lines = [f"{facet.key or 'feature'}: {facet.words}" for facet in self.wanted]
        lines += [f"NOT {facet.words} (rule it out)" for facet in self.avoided]
        if self.price_max is not None:
            lines.append(f"at most {self.price_max} dollars")
        if self.in_stock:
            lines.append("must be in stock now")
        return lines


def sample_label(listings: Sequence[Listing], rng: random.Random) -> Label | None:
    """A label from a random listing's random variant; ``None`` when that one gives none."""
    listing = rng.choice(listings)
    offer = rng.choice(listing.offers) if listing.offers else None
    if offer is None:
        return None
    facets = [f for f in offer.facets if f.kind in ("option", "attribute", "brand")]
    if not facets:
        return None
    wanted = tuple(rng.sample(facets, rng.randint(1, min(MAX_WANTED, len(facets)))))
    avoided = _ruled_out(listing, offer, wanted, rng)
    price = ceiling_price(offer, rng) if rng.random() < 0.35 else None
    in_stock = offer.available and rng.random() < 0.15
    ask = Ask(category=listing.category)
    for facet in wanted:
        ask.want(facet)
    for facet in avoided:
        ask.avoid(facet)
    if price is not None:
        ask.price(None, price)
    ask.available_only = in_stock
    return Label(listing, wanted, avoided, price, in_stock, ask.query())


def _ruled_out(
    listing: Listing, offer: Offer, wanted: tuple[Facet, ...], rng: random.Random
) -> tuple[Facet, ...]:
    if rng.random() >= 0.3:
        return ()
    keys = {(f.kind, f.key) for f in wanted}
    others = [
        f
        for f in listing.alternatives(offer)
        if f.kind in ("option", "attribute") and (f.kind, f.key) not in keys
    ]
    return (rng.choice(others),) if others else ()


def teacher_messages(label: Label, style: Style) -> list[Message]:
    """What the teacher is asked: write the one message, saying every requirement, no more."""
    kind = label.listing.noun
    system = (
        "You write realistic messages that shoppers type into an online store's chat "
        "assistant. Answer with the shopper's message only: no quotes, no title, no notes."
    )
    user = "\n".join(
        [
            f"The shopper wants: {kind}.",
            "Requirements:",
            *(f"- {line}" for line in label.requirements()),
            f"Style: {style.instruction}",
            "Mention every requirement, in your own words; add no other requirement.",
        ]
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def cleaned(text: str) -> str:
    """The teacher's answer as a shopper's message: one paragraph, outer quotes dropped."""
    return " ".join(text.strip().strip(_QUOTES).split())


def check(
    label: Label,
    style: Style,
    text: str,
    *,
    held_out: HeldOut | None = None,
    language_of: Callable[[str], str] | None = None,
) -> str | None:
    """Why ``text`` fails the round trip for ``label`` in ``style``; ``None`` when it passes."""
    if not text:
        return "empty"
    if len(text) > MAX_MESSAGE_CHARS:
        return "too long"
    out_of_role = out_of_role_reason(text)
    if out_of_role is not None:
        return out_of_role
    if held_out is not None and text in held_out:
        return "an evaluation request"
    folded = text.casefold()
    read = f"{folded} {gloss(folded)}"
    parsed = parse(text)  # the rule parser reads colours and kinds of other languages too
    for facet in label.wanted:
        if not (_said(facet, read) or _parsed(facet, parsed)):
            return f"misses {facet.key or 'a feature'}"
    for facet in label.avoided:
        said = _said(facet, read) or _parsed(facet, parsed) or _excluded(facet, parsed)
        if not said or not _negated(read, style.language):
            return "misses what is ruled out"
    if label.price_max is not None and not _price_said(label.price_max, folded):
        return "misses the price"
    if label.in_stock and not (parsed.available_only or stock_said(folded)):
        return "misses in stock"
    names_kind = (
        _said_words(label.listing.noun, read)
        or _said_words(label.listing.category, read)
        or parsed.category == label.listing.category
    )
    if style.names_kind and not names_kind:
        return "misses the kind"
    if not style.names_kind and names_kind:
        return "names the kind"
    if language_of is not None and style.language != "en" and language_of(text) != style.language:
        return "wrong language"
    return None


def out_of_role_reason(text: str) -> str | None:
    """Why ``text`` is not a shopper's own message: it talks about the task ("Here is an
    example message: ..."), or the store speaks ("Sure! What do you need?"); ``None`` if
    neither."""
    if _META.search(text):
        return "talks about the task"
    if _ASSISTANT_VOICE.search(text):
        return "speaks as the store"
    return None


def _parsed(facet: Facet, parsed: SearchQuery) -> bool:
    if facet.kind == "brand":
        return parsed.brand is not None and parsed.brand.casefold() == facet.value.casefold()
    table = parsed.options if facet.kind == "option" else parsed.attributes
    return facet.value.casefold() in {v.casefold() for v in table.get(facet.key, [])}


def _excluded(facet: Facet, parsed: SearchQuery) -> bool:
    return any(e.value.casefold() == facet.value.casefold() for e in parsed.exclude)


def _said(facet: Facet, read: str) -> bool:
    return any(_said_words(form, read) for form in {facet.words, facet.value})


def _said_words(phrase: str, read: str) -> bool:
    phrase = phrase.casefold().strip()
    if not phrase:
        return True
    if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", read):
        return True
    # A typo, a plural or a compound ("laptopfach"): close enough to the phrase.
    return len(phrase) >= 4 and fuzz.partial_ratio(phrase, read) >= _FUZZY


def _negated(read: str, language: str) -> bool:
    cues = _NEGATIONS.get(language, ()) + _NEGATIONS["en"]
    return any(re.search(rf"(?<!\w){re.escape(cue)}(?!\w)", read) for cue in cues)


_STOCK = re.compile(
    r"\b(?:stock|available|ship(?:s|ping)?|now|today|disponible|lager|lieferbar|verfügbar|"
    r"sofort|jetzt|existencia|ahora|ya mismo|maintenant|tout de suite)\b"
)


def stock_said(folded: str) -> bool:
    """Whether a (casefolded) message asks for what is in stock, in any of the four languages."""
    return _STOCK.search(folded) is not None


def _price_said(price: Decimal, folded: str) -> bool:
    whole = str(int(price))
    return re.search(rf"(?<!\d){whole}(?:[.,]\d+)?(?!\d)", folded.replace(",", "")) is not None


@dataclass(frozen=True)
class TeacherExample:
    """A kept message: the request, its style and the gold query of its label."""

    id: str
    style: str
    product_id: str
    request: str
    gold: SearchQuery

    def record(self) -> dict[str, Any]:
        """One JSON Lines object, in the shape of ``cartagent tune data``'s splits but without
        the prompt, which training builds again from the request (``load_split``)."""
        completion = query_json(self.gold)
        return {
            "id": self.id,
            "family": f"teacher-{self.style}",
            "template": "teacher",
            "product_id": self.product_id,
            "request": self.request,
            "context": [],
            "completion": completion,
            "gold": json.loads(completion),
        }


@dataclass
class TeacherCard:
    """What the teacher wrote and what the round trip kept, per style and per reason."""

    teacher: str
    seed: int
    asked: int = 0
    kept: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    products: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "teacher": self.teacher,
            "seed": self.seed,
            "asked": self.asked,
            "kept": sum(self.kept.values()),
            "kept_by_style": dict(sorted(self.kept.items())),
            "rejected_by_reason": dict(self.rejected.most_common()),
            "duplicates": self.duplicates,
            "products": self.products,
        }

    def summary(self) -> str:
        kept = sum(self.kept.values())
        share = f"{kept / self.asked:.0%}" if self.asked else "0%"
        styles = ", ".join(f"{name} {count}" for name, count in sorted(self.kept.items()))
        reasons = ", ".join(f"{why} {count}" for why, count in self.rejected.most_common())
        return (
            f"teacher {self.teacher}: kept {kept} of {self.asked} ({share}); by style: "
            f"{styles or 'none'}; rejected: {reasons or 'none'}; duplicates {self.duplicates}"
        )


async def write_teacher_data(
    teacher: Model,
    listings: Sequence[Listing],
    *,
    count: int,
    seed: int,
    styles: Sequence[Style] = STYLES,
    held_out: HeldOut | None = None,
    language_of: Callable[[str], str] | None = None,
    teacher_name: str = "teacher",
    max_asks: int | None = None,
    card: TeacherCard | None = None,
    on_kept: Callable[[TeacherExample], object] | None = None,
) -> tuple[list[TeacherExample], TeacherCard]:
    """Ask ``teacher`` for messages until ``count`` pass the round trip (or ``max_asks``,
    default four per wanted message, have been asked), styles taken in turn. Each kept one
    goes to ``on_kept`` at once, and ``card`` (one is made when none is given) is filled as
    the run goes, so a run cut short keeps what it did."""
    if not listings:
        raise ValueError("no listings to draw labels from")
    if not styles:
        raise ValueError("no styles to write in")
    rng = random.Random(seed)
    card = card if card is not None else TeacherCard(teacher_name, seed)
    card.products = len(listings)
    kept: list[TeacherExample] = []
    seen: set[str] = set()
    limit = max_asks if max_asks is not None else 4 * count
    turn = 0
    while len(kept) < count and card.asked < limit:
        label = sample_label(listings, rng)
        if label is None:
            continue
        style = styles[turn % len(styles)]
        turn += 1
        card.asked += 1
        answer = await teacher.complete(teacher_messages(label, style))
        text = cleaned(answer.message.content or "")
        why = check(label, style, text, held_out=held_out, language_of=language_of)
        if why is not None:
            card.rejected[why] += 1
            continue
        key = normalise(text)
        if key in seen:
            card.duplicates += 1
            continue
        seen.add(key)
        example = TeacherExample(
            f"teacher-{seed}-{len(kept):06d}", style.name, label.listing.product_id, text,
            label.gold,
        )  # fmt: skip
        kept.append(example)
        card.kept[style.name] += 1
        if on_kept is not None:
            on_kept(example)
    return kept, card
