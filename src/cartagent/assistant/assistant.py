"""The assistant: screen the input, route the turn, let the domain's specialist answer, and
store the turn, all of it or nothing.

``await assistant.turn(session_id, text)`` returns a :class:`Reply` with the answer, product
cards, the domain and a latency breakdown per stage (route, understand, retrieve, tools,
respond; milliseconds).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ModelError
from ..redaction import redact
from .catalog_overview import CatalogOverview
from .conversation import Conversation, StoredMessage
from .conversation_store import ConversationStore
from .domains import Domain
from .language import DEFAULT, detect, messages
from .product_facts import STORE_MATTERS
from .reading import TurnReading
from .reply import STAGES, Reply
from .router import RouteContext, Router
from .safety import screen
from .specialist import Specialist, TurnContext, check_specialists
from .state_route import state_route

if TYPE_CHECKING:
    from ..llm import Model
    from ..retrieval import Searcher, SearchQuery
    from ..tools import Toolkit

__all__ = ["Assistant"]

log = logging.getLogger("cartagent.assistant")

_CART_WORDS = re.compile(
    r"\b(?:cart|basket|check\s?out|pay|paypal|buy|purchase|add|remove|empty|order)\b",
    re.IGNORECASE,
)
_ORDER_WORDS = re.compile(
    r"\b(?:orders?|ordered|ship(?:ped|ping|ment)?|track(?:ing)?|deliver(?:y|ed)?|arrive[sd]?"
    r"|package|parcel|returns?|returned|refunds?|exchange|money\s+back|send\s+(?:it\s+)?back"
    r"|broken|damaged|wrong\s+item|cancel\w*)\b",
    re.IGNORECASE,
)
"""Words of the cart, and of orders and returns: without them, a turn the router sends to an
empty cart, or to orders and returns when none was placed, while results are on screen ("ok
and if i bump it to 32?", "forget the battery thing") is about the results."""
_THE_STORES = (Domain.ORDERS, Domain.RETURNS_REFUNDS)
"""For the merchant, orders and refunds are the store's: the back office serves them."""


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _last_language(conversation: Conversation) -> str:
    """The language the conversation was last answered in (English when it is new)."""
    for message in reversed(conversation.messages):
        if message.role == "assistant":
            language = message.payload.get("language")
            return language if isinstance(language, str) else DEFAULT
    return DEFAULT


def _refines(reading: TurnReading, on_screen: SearchQuery) -> bool:
    """Whether the turn, read as a follow-up of the search on screen, changes what it asks
    for (an option value, a price, stock, an exclusion), not only its words."""
    try:
        refined = reading.search(shown=on_screen)
    except ModelError:
        return False
    if refined.category != on_screen.category:
        return False  # read as another search, not as a follow-up of this one
    fields = ("options", "attributes", "price", "available_only", "exclude", "brand")
    return any(getattr(refined, name) != getattr(on_screen, name) for name in fields)


class Assistant:
    """Router + specialists + conversation store + searcher (+ a capable model, optional).

    ``specialists`` defaults to :func:`~cartagent.assistant.specialists.default_specialists`
    (with the installed plugins); every domain needs exactly one. ``model`` is the capable model
    (``--model openai``), handed to the specialists; on embedded defaults it is ``None``.
    ``toolkit`` reaches PayPal; build it with
    :func:`~cartagent.assistant.toolkit.assistant_toolkit` so that only what the shopper
    confirmed is approved. A turn that takes longer than ``turn_timeout`` seconds, or whose
    model backend fails, is answered with an apology and changes nothing but the history.
    """

    def __init__(
        self,
        router: Router,
        store: ConversationStore,
        *,
        searcher: Searcher | None = None,
        specialists: Iterable[Specialist] | None = None,
        model: Model | None = None,
        toolkit: Toolkit | None = None,
        turn_timeout: float = 60.0,
    ) -> None:
        if turn_timeout <= 0:
            raise ValueError("turn_timeout must be positive")
        if specialists is None:
            from .specialists import default_specialists

            specialists = default_specialists()
        self.router = router
        self.store = store
        self.searcher = searcher
        self.model = model
        self.toolkit = toolkit
        self.turn_timeout = turn_timeout
        self.specialists = check_specialists(specialists)
        self._product_of = None if searcher is None else searcher.product

    async def _route(
        self, reading: TurnReading, conversation: Conversation, *, merchant: bool
    ) -> Domain:
        text = reading.text
        domain = state_route(reading, conversation, merchant=merchant)
        if domain is None:
            context = RouteContext(
                conversation.last_domain, has_results=bool(conversation.results), reading=reading
            )
            domain = (await self.router.route(text, context)).domain
            declined = domain is Domain.OUT_OF_SCOPE or (
                bool(conversation.results) and self._unservable(domain, text, conversation)
            )
            if declined and await self._asks_for_products(reading, conversation):
                domain = Domain.DISCOVERY
            elif domain is Domain.STORE_QUESTIONS and await self._about_shown(reading):
                domain = Domain.DISCOVERY  # "how long does its battery last?": the product's
        return Domain.BACK_OFFICE if merchant and domain in _THE_STORES else domain

    @staticmethod
    def _unservable(domain: Domain, text: str, conversation: Conversation) -> bool:
        """Whether ``domain`` has nothing to serve ``text`` with and ``text`` does not ask for
        it: an empty cart, or no order placed, and none of their words."""
        if domain is Domain.CART_CHECKOUT:
            return not conversation.cart and not _CART_WORDS.search(text)
        if domain in (Domain.ORDERS, Domain.RETURNS_REFUNDS):
            return not conversation.orders and not _ORDER_WORDS.search(text)
        return False

    @staticmethod
    async def _about_shown(reading: TurnReading) -> bool:
        """Whether the turn asks about an option the products on screen have."""
        if STORE_MATTERS.search(reading.text.casefold()):
            return False  # "how long does shipping take?" is the store's
        asked = await asyncio.to_thread(lambda: reading.about_shown)
        return asked is not None

    async def _asks_for_products(self, reading: TurnReading, conversation: Conversation) -> bool:
        """Whether a turn the router declined names a kind of product the store has ("labtop
        with i9 procesor", "ich suche einen Wasserkocher"), or says something about products
        after a search ("nothing too hard tho, she's no expert", "soft cover, A4" answering
        "hard cover or soft cover?"): a search, or a follow-up to it."""
        if self.searcher is None:
            return False
        shown = conversation.results
        if shown and reading.reference is not None:
            return True  # "Was kostet der zweite?"
        if await self._about_shown(reading):
            return True  # "Welcher ist billiger?"
        on_screen = conversation.shown_query()
        if conversation.results or on_screen is not None:
            if await asyncio.to_thread(lambda: reading.names_constraints):
                return True
            # "ok and if i bump it to 32?" after 16GB laptops: read among what is on screen.
            return on_screen is not None and await asyncio.to_thread(_refines, reading, on_screen)
        return await asyncio.to_thread(lambda: reading.names_a_kind)

    def _unavailable(self, error: Exception) -> str:
        if isinstance(error, TimeoutError):
            why = f"it took longer than {self.turn_timeout:g} s"
        else:
            why = "the language model did not answer"
        return (
            f"Sorry, I could not answer that: {why}. Nothing was changed (your cart and "
            "orders are as they were); please try again in a moment."
        )

    def examples(self) -> list[str]:
        """Requests a shopper could start with, made from the store's catalog."""
        overview = getattr(self.specialists.get(Domain.DISCOVERY), "overview", None)
        if isinstance(overview, CatalogOverview) and overview:
            return overview.examples()
        return ["What do you sell?", "What is your return policy?"]

    def open_session(self, session_id: str | None = None, *, owner: str | None = None) -> str:
        """``session_id`` if that conversation exists, else a new one (with that id if given)."""
        if session_id is not None and self.store.exists(session_id):
            return session_id
        return self.store.create_session(owner=owner, session_id=session_id)

    async def turn(self, session_id: str, text: str, *, merchant: bool = False) -> Reply:
        """Answer ``text`` in the conversation ``session_id`` and store the turn.

        ``merchant`` says the speaker is the store's merchant (back office work is theirs
        only). A turn that answers a pending confirmation ("yes", "no") goes to the
        specialist that asked, without routing, and so does "remove ..." to the cart when it
        holds something. The merchant's questions about orders and refunds go to the back
        office: they are about the store's orders, not the conversation's. A greeting,
        thanks or goodbye is answered as such whatever the router would say, and a turn the
        router declines that names what products to show while results are on screen
        ("no expert level", "bagless then") refines them.

        Input that cannot be served (empty, too long, unreadable) gets a clear answer and
        stores nothing. Otherwise the user's message, the reply and every change the
        specialist made (cart, results, pending confirmation) are stored in one transaction;
        if anything raises, nothing of the turn is stored. Raises
        :class:`~cartagent.assistant.conversation_store.UnknownSession` for an unknown id.
        """
        start = time.perf_counter()
        conversation = await asyncio.to_thread(self.store.load, session_id)
        language = await asyncio.to_thread(detect, text, _last_language(conversation))
        refusal = screen(text, messages(language))
        if refusal is not None:
            timings = dict.fromkeys(STAGES, 0.0)
            timings["respond"] = timings["total"] = _ms(start)
            return Reply(refusal, None, timings=timings)
        # Read once: the router's reading of the turn is the specialist's.
        reading = TurnReading(text, conversation, self.searcher, self._product_of)
        context = TurnContext(
            text=text,
            conversation=conversation,
            searcher=self.searcher,
            model=self.model,
            toolkit=self.toolkit,
            merchant=merchant,
            language=language,
            shared_reading=reading,
        )
        routed = time.perf_counter()
        try:
            async with asyncio.timeout(self.turn_timeout):
                domain = await self._route(reading, conversation, merchant=merchant)
                route_ms = _ms(routed)
                reply = await self.specialists[domain].handle(context)
        except (TimeoutError, ModelError) as error:
            # The specialist's changes are dropped: the conversation is reloaded as it was.
            conversation = await asyncio.to_thread(self.store.load, session_id)
            domain = conversation.last_domain or Domain.OUT_OF_SCOPE
            route_ms = _ms(routed)
            reply = Reply(self._unavailable(error), domain, data={"error": type(error).__name__})
            context.timings.clear()
        log.info("turn session=%s domain=%s text=%s", session_id, domain, redact(text[:200]))
        conversation.last_domain = domain
        timings = dict.fromkeys(STAGES, 0.0)
        timings.update(context.timings)
        timings["route"] = route_ms
        spent_elsewhere = sum(timings[s] for s in STAGES if s != "respond")
        asked = StoredMessage("user", text, domain)
        # The stored reply's timings cannot include the save itself; the returned one does.
        timings["respond"] = max(_ms(start) - spent_elsewhere, 0.0)
        timings["total"] = _ms(start)
        payload = {**reply.payload(), "language": context.language}
        answered = StoredMessage(
            "assistant", reply.text, domain, payload=payload, timings=dict(timings)
        )
        await asyncio.to_thread(self.store.save_turn, conversation, [asked, answered])
        timings["total"] = _ms(start)
        timings["respond"] = max(timings["total"] - spent_elsewhere, 0.0)
        return replace(reply, domain=domain, timings=timings)
