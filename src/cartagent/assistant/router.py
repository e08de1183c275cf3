"""Routing: which :class:`~cartagent.assistant.domains.Domain` a turn belongs to.

Two routers, one protocol:

* :class:`EmbeddingRouter` (the embedded default, no LLM): a rule pre-pass where a rule is
  clearly right (a pick from the listed results, a short refinement of the last search), then
  k-nearest-neighbours over sentence embeddings of the labelled example utterances shipped in
  ``assistant/data/routes.jsonl``; the previous turn's domain breaks near-ties.
* :class:`ModelRouter`: the same pre-pass, then any :class:`~cartagent.llm.Model` answering a
  JSON object whose ``domain`` is constrained to the enum (the grammar path for embedded
  models, ``json_schema`` for servers), with another router as the fallback.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..llm import Message, Model
from ..retrieval import CATEGORY_OF, parse
from .cart import ADD_LEAD, TO_CART
from .domains import DOMAIN_DESCRIPTIONS, Domain
from .policy_fallback import is_question
from .reading import TurnReading

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval import Embedder

__all__ = [
    "EmbeddingRouter",
    "Example",
    "ModelRouter",
    "Route",
    "RouteContext",
    "Router",
    "load_examples",
    "rule_route",
]

RouteSource = Literal["rules", "embedding", "context", "model", "fallback", "wants"]

_MAX_REFINEMENT_WORDS = 6
# A shopper saying they want or need a thing ("i want music without wires", "was brauche ich
# da?", "il me faudrait un aspirateur"): not wanting *to do* something ("i want to book a
# flight") nor wanting the assistant to ("i need you to tell me a joke").
_WANTS_A_THING = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|just\s+|kinda\s+)?(?:want|need|would like|'d like)\s+"
    r"(?!to\b|you\b|help\b|advice\b|some advice\b)"
    r"|\blooking for\s+(?:a|an|some|something)\b"
    r"|\bwhat\s+(?:\w+\s+){0,2}should\s+i\s+(?:get|buy)\b|\bwhat\s+do\s+i\s+need\b"
    r"|\b(?:brauche|suche)\b|\bwas\s+brauche\s+ich\b"
    r"|\bje\s+cherche\b|\bil\s+me\s+(?:faut|faudrait)\s+(?:un|une|des)\b"
    r"|\bj'ai\s+besoin\s+d(?:'|e\s|u\s)"
    r"|\b(?:necesito|busco)\s+(?:un|una|unos|unas|algo)\b",
    re.IGNORECASE,
)
_OWNED = re.compile(r"\b(?:my|mine|our|ours)\b")
_RELATIVE_CUES = re.compile(
    r"\b(cheaper|less expensive|more affordable|pricier|more expensive|bigger|smaller|"
    r"lighter|larger|more like (?:this|these|that)|show me more|more options|other colou?rs|"
    r"sort (?:them )?by)\b"
)


@dataclass(frozen=True)
class Example:
    """A labelled utterance: ``text`` belongs to ``domain``."""

    text: str
    domain: Domain


@dataclass(frozen=True)
class RouteContext:
    """What the conversation says about the turn: the last turn's domain, shown results, and
    the turn's reading (:class:`~cartagent.assistant.reading.TurnReading`) when the
    assistant made one, so that what the rules read the specialist need not read again."""

    previous: Domain | None = None
    has_results: bool = False
    reading: TurnReading | None = None

    def read(self, text: str) -> TurnReading:
        """The reading of ``text``: the one given when it is of these words."""
        if self.reading is not None and self.reading.text == text:
            return self.reading
        return TurnReading(text)


@dataclass(frozen=True)
class Route:
    """The chosen domain, a confidence in 0-1 and which path chose it."""

    domain: Domain
    confidence: float
    source: RouteSource


class Router(Protocol):
    """Classifies a turn into a domain."""

    async def route(self, text: str, context: RouteContext = RouteContext()) -> Route: ...


def load_examples(text: str | None = None) -> list[Example]:
    """The labelled utterances in JSON lines (``{"text": ..., "domain": ...}`` each).

    Without ``text``, the set shipped with cartagent (``assistant/data/routes.jsonl``).
    """
    if text is None:
        text = resources.files(__package__).joinpath("data", "routes.jsonl").read_text("utf-8")
    examples = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            examples.append(Example(str(item["text"]), Domain(item["domain"])))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"routing example line {number}: {error}") from error
    return examples


_ANY = re.compile(r"^\s*(?:any|got|have\s+you\s+got)\b", re.IGNORECASE)
_MORE = re.compile(r"\b(?:more|another|again)\b", re.IGNORECASE)
_DEALS = re.compile(
    r"\bon\s+sale\b|\bsales?\s+(?:on|going\s+on|right\s+now)\b"
    r"|\b(?:any|got|have|offer)\s+(?:discounts?|deals|coupons?|promo(?:tion)?s?|vouchers?)\b"
    r"|\b(?:discount|coupon|promo(?:tion(?:al)?)?|voucher)\s+codes?\b",
    re.IGNORECASE,
)


def rule_route(text: str, context: RouteContext) -> Route | None:
    """The domain when a rule is clearly right, else ``None``.

    A greeting, thanks or goodbye and nothing else is out of scope, which answers it; a
    question about sales, discounts or coupon codes is the store's. "What do you sell?" and
    "something similar to the first one" are discovery. With results on screen, a short
    message picking one ("the second one", "add the first to my cart") or comparing them
    ("compare the first two", "which one is the lightest?"), asking about them ("is it
    dimmable?", "what sizes does it come in?") or asking for more of them ("any others?") is
    discovery, which owns the list.
    After a search, a short message that only refines it ("cheaper", "in red", "under $40",
    "not polyester") is discovery too, and so is a message that only names products ("a red
    hoodie") unless the last turn was about returns or the cart.
    """
    words = text.split()
    reading = context.read(text)
    if reading.small_talk is not None:
        return Route(Domain.OUT_OF_SCOPE, 1.0, "rules")  # answered as such there
    if _DEALS.search(text) and (is_question(text) or _ANY.match(text)):
        # "Any coupons?": the payment policy; "put the mats on sale" is no question.
        return Route(Domain.STORE_QUESTIONS, 1.0, "rules")
    if reading.catalog_question or ("similar" in text.casefold() and reading.similar is not None):
        return Route(Domain.DISCOVERY, 1.0, "rules")
    if context.has_results and (
        reading.reference
        or reading.comparison is not None
        or reading.more
        or reading.superlative is not None
        or reading.fact is not None
        or reading.option_question is not None
        or reading.points_by_value
    ):
        return Route(Domain.DISCOVERY, 1.0, "rules")
    if _adds_a_new_product(reading):
        return Route(Domain.DISCOVERY, 1.0, "rules")  # "add a red t-shirt": which one first
    # Not where the last turn may have asked "which item?" ("the hoodie" answers it).
    asking = (Domain.RETURNS_REFUNDS, Domain.CART_CHECKOUT)
    if context.previous not in asking and _names_products(reading):
        return Route(Domain.DISCOVERY, 1.0, "rules")
    if context.previous is not Domain.DISCOVERY or len(words) > _MAX_REFINEMENT_WORDS:
        return None
    if _RELATIVE_CUES.search(text.casefold()):
        return Route(Domain.DISCOVERY, 1.0, "rules")
    query = reading.parsed
    refines = query.price is not None or query.options or query.exclude or query.attributes
    if refines and not query.text:
        return Route(Domain.DISCOVERY, 1.0, "rules")
    return None


def _adds_a_new_product(reading: TurnReading) -> bool:
    """Whether the turn asks to add a kind of product ("also add a red t-shirt to my cart"),
    not a result shown ("add the first one") nor more of one ("add another one of those")."""
    text = reading.text
    lead = ADD_LEAD.match(text)
    if lead is None or _MORE.search(text) or reading.reference is not None:
        return False
    if "put" in lead.group().casefold() and not TO_CART.search(text):
        return False  # "put the yoga mats on sale" is no shopping
    return parse(TO_CART.sub("", text)).category is not None


def _names_products(reading: TurnReading) -> bool:
    """Whether the turn asks for products and says nothing else: the rule parser finds a
    category and every other word is a constraint or another category ("a red hoodie",
    "t-shirts and hoodies"). The examples' nouns would pull "a hoodie" to "refund the hoodie"."""
    text = reading.text
    if len(text.split()) > _MAX_REFINEMENT_WORDS or _OWNED.search(text.casefold()):
        return False  # "my shoes" are the shopper's own: a return, an order, the cart
    query = reading.parsed
    return query.category is not None and all(w in CATEGORY_OF for w in query.text.split())


class EmbeddingRouter:
    """Rules, then k-nearest-neighbours over embeddings of labelled example utterances.

    A domain's score is the mean cosine similarity of its ``k`` nearest examples. When the
    previous turn's domain scores within ``tie_margin`` of the best, it wins (a conversation
    tends to stay on its subject). When no domain reaches ``min_similarity`` the turn is out
    of scope. The examples are embedded once, on the first call (or by :meth:`warm_up`).
    """

    def __init__(
        self,
        embedder: Embedder,
        examples: Sequence[Example] | None = None,
        *,
        k: int = 3,
        tie_margin: float = 0.03,
        min_similarity: float = 0.3,
    ) -> None:
        self.embedder = embedder
        self.examples = list(load_examples() if examples is None else examples)
        if not self.examples:
            raise ValueError("an EmbeddingRouter needs labelled examples")
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        self.k = k
        self.tie_margin = tie_margin
        self.min_similarity = min_similarity
        self._matrix: npt.NDArray[np.float32] | None = None
        self._labels: npt.NDArray[np.int64] | None = None
        self._domains = sorted({e.domain for e in self.examples}, key=list(Domain).index)

    def warm_up(self) -> None:
        """Embed the examples now rather than on the first turn."""
        self._index()

    def _index(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        import numpy as np

        if self._matrix is None or self._labels is None:
            self._matrix = self.embedder.embed([e.text for e in self.examples])
            self._labels = np.array(
                [self._domains.index(e.domain) for e in self.examples], dtype=np.int64
            )
        return self._matrix, self._labels

    def scores(self, text: str) -> dict[Domain, float]:
        """Each domain's score for ``text``: mean similarity of its ``k`` nearest examples."""
        import numpy as np

        matrix, labels = self._index()
        similarity = matrix @ self.embedder.embed([text])[0]
        out: dict[Domain, float] = {}
        for index, domain in enumerate(self._domains):
            mine = np.sort(similarity[labels == index])[::-1][: self.k]
            out[domain] = float(mine.mean())
        return out

    def classify(self, text: str, context: RouteContext = RouteContext()) -> Route:
        """:meth:`route` without the event loop (it embeds in the caller's thread)."""
        ruled = rule_route(text, context)
        if ruled is not None:
            return ruled
        scores = self.scores(text)
        best, score = max(scores.items(), key=lambda item: item[1])
        if (score < self.min_similarity or best is Domain.OUT_OF_SCOPE) and _WANTS_A_THING.search(
            text
        ):
            # A need in the shopper's own words ("for my morning run i want music without
            # wires") is a search, however far from the examples: its closest products beat
            # a refusal.
            return Route(Domain.DISCOVERY, max(scores[Domain.DISCOVERY], 0.0), "wants")
        if score < self.min_similarity:
            return Route(Domain.OUT_OF_SCOPE, max(score, 0.0), "fallback")
        previous = context.previous
        near = previous is not None and scores.get(previous, -1.0) >= score - self.tie_margin
        if previous is not None and previous is not best and near:
            return Route(previous, scores[previous], "context")
        return Route(best, score, "embedding")

    async def route(self, text: str, context: RouteContext = RouteContext()) -> Route:
        # Embedding takes milliseconds of torch work that releases the GIL: off the loop.
        return await asyncio.to_thread(self.classify, text, context)


def _router_prompt() -> str:
    return resources.files(__package__).joinpath("prompts", "router.md").read_text("utf-8")


ROUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"domain": {"type": "string", "enum": [d.value for d in Domain]}},
    "required": ["domain"],
    "additionalProperties": False,
}
"""The JSON Schema a :class:`ModelRouter`'s model must answer: one domain from the enum."""


class ModelRouter:
    """Rules, then a model constrained to answer ``{"domain": <one of the enum>}``.

    ``fallback`` routes when the model fails or answers outside the enum; without one such a
    turn is routed out of scope (the out-of-scope answer lists what the assistant can do).
    """

    def __init__(self, model: Model, *, fallback: Router | None = None) -> None:
        self.model = model
        self.fallback = fallback
        domains = "\n".join(f"- {d.value}: {DOMAIN_DESCRIPTIONS[d]}" for d in Domain)
        self._system = _router_prompt().replace("{domains}", domains)

    def messages(self, text: str, context: RouteContext) -> list[Message]:
        """What the model is sent for ``text``."""
        system = self._system
        if context.previous is not None:
            system += f"\nThe previous turn was about: {context.previous.value}."
            if context.has_results:
                system += " The shopper is looking at a list of products."
        return [Message("system", system), Message("user", text)]

    async def route(self, text: str, context: RouteContext = RouteContext()) -> Route:
        ruled = rule_route(text, context)
        if ruled is not None:
            return ruled
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "route", "schema": ROUTE_SCHEMA, "strict": True},
        }
        try:
            completion = await self.model.complete(
                self.messages(text, context), response_format=response_format
            )
            answer = json.loads(completion.message.content or "")
            return Route(Domain(answer["domain"]), 1.0, "model")
        except Exception:  # a failing model must not fail the turn: the fallback routes
            if self.fallback is not None:
                return await self.fallback.route(text, context)
            return Route(Domain.OUT_OF_SCOPE, 0.0, "fallback")
