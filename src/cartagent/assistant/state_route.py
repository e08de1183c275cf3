"""The rule router in front of the router: turns the conversation's state settles.

Before any router reads a turn, what the conversation holds may already say where it goes: a
confirmation the assistant asked for is answered ("yes"), small talk is answered as such, a
cart that holds something is edited ("remove the mug", "make it 3", "the red one instead"), a
result on screen is picked to add by its values ("add size 8"), the merchant asks about the
store's sales or sends the draft invoice, and an exchange is asked for after an order was
paid. :func:`state_route` returns that domain, or ``None`` for the router to decide. It reads
the turn through its :class:`~cartagent.assistant.reading.TurnReading`, which the router and
the specialist then reuse.
"""

from __future__ import annotations

import re

from .confirmation import answers_confirmation
from .conversation import Conversation
from .domains import Domain
from .exchange import EXCHANGE
from .reading import TurnReading
from .specialists.back_office.invoice_request import SEND_IT
from .specialists.back_office.sales import ORDER_COUNT, TOP_SELLERS

__all__ = ["state_route"]

_CART_EDIT = re.compile(r"^\s*(?:please\s+)?(?:remove|delete|take out|drop)\b", re.IGNORECASE)
"""With something in the cart, "remove the mug" (and "make it 2", "change it to size 10")
edits the cart whatever the router says."""


def state_route(
    reading: TurnReading, conversation: Conversation, *, merchant: bool
) -> Domain | None:
    """The domain ``conversation``'s state settles for the turn (see the module), or ``None``."""
    text = reading.text
    waiting = conversation.pending
    if waiting is not None and waiting.domain is not None and answers_confirmation(text):
        return waiting.domain
    if reading.small_talk is not None:
        return Domain.OUT_OF_SCOPE  # which answers a greeting, thanks or goodbye as such
    if conversation.cart and (
        _CART_EDIT.search(text)
        or reading.quantity_change is not None
        or reading.variant_change is not None
    ):
        return Domain.CART_CHECKOUT
    if conversation.results and reading.option_pick is not None:
        return Domain.CART_CHECKOUT  # "add size 8", "add the purple one"
    if merchant and (TOP_SELLERS.search(text) or ORDER_COUNT.search(text)):
        return Domain.BACK_OFFICE  # "top 3 products": the store's sales, not a search
    if merchant and SEND_IT.search(text):
        return Domain.BACK_OFFICE  # "send it", after a draft invoice
    if EXCHANGE.search(text) and any(o.capture_id for o in conversation.orders):
        return Domain.RETURNS_REFUNDS
    return None
