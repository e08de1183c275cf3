"""Conversation state: what one session remembers between turns.

A :class:`Conversation` is loaded from the :class:`~cartagent.assistant.conversation_store.
ConversationStore` at the start of a turn, changed in memory by the specialist that handles the
turn, and written back with the turn's two messages in ONE transaction at its end: a turn that
fails midway leaves the stored conversation exactly as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import ValidationError

from ..retrieval import SearchQuery
from .cards import ProductCard
from .domains import Domain

__all__ = [
    "MAX_SEARCH_CONTEXT",
    "OPEN_STATUSES",
    "CartLine",
    "Conversation",
    "PendingConfirmation",
    "PlacedOrder",
    "StoredMessage",
]

MAX_SEARCH_CONTEXT = 8
"""Earlier search requests handed to query understanding for follow-ups ("in red")."""

MessageRole = Literal["user", "assistant"]


@dataclass(frozen=True)
class CartLine:
    """One line of the session's cart: a variant of a product, its price and quantity."""

    product_id: str
    variant_id: str
    title: str
    unit_price: Decimal
    currency: str
    quantity: int
    options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.quantity < 1:
            raise ValueError(f"a cart line needs a quantity of at least 1, not {self.quantity}")


@dataclass(frozen=True)
class PendingConfirmation:
    """Something the assistant asked the user to confirm (``kind``) with what it needs.

    ``domain`` is the specialist waiting for the answer: a "yes" or "no" goes straight to it.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    domain: Domain | None = None


OrderStatus = Literal[
    "CREATED", "SAVED", "PAYER_ACTION_REQUIRED", "APPROVED", "COMPLETED", "VOIDED"
]

OPEN_STATUSES = frozenset({"CREATED", "SAVED", "PAYER_ACTION_REQUIRED", "APPROVED"})
"""PayPal order statuses of an order not paid yet that may still be paid. PayPal creates an
order as PAYER_ACTION_REQUIRED rather than CREATED whenever it carries a return URL."""


@dataclass(frozen=True)
class PlacedOrder:
    """A PayPal order this conversation created: what was bought, what was paid and refunded.

    ``status`` mirrors PayPal's order status as last seen; ``capture_id`` is set once paid;
    ``paid_at`` once this conversation has recorded the payment (its lines left the cart);
    ``refunded`` is the total refunded so far, in ``currency``; ``returned`` the variant ids
    of the lines refunded (each line is refunded at most once).
    """

    order_id: str
    status: OrderStatus
    total: Decimal
    currency: str
    lines: tuple[CartLine, ...]
    created_at: datetime
    approve_url: str | None = None
    capture_id: str | None = None
    paid_at: datetime | None = None
    refunded: Decimal = Decimal(0)
    returned: frozenset[str] = frozenset()

    @property
    def settled(self) -> bool:
        """Whether this conversation knows how this order ended (paid and recorded, or
        cancelled): an unsettled order may have been paid without the conversation hearing."""
        return self.paid_at is not None or self.status == "VOIDED"


@dataclass(frozen=True)
class StoredMessage:
    """A message of the conversation as stored.

    ``payload`` holds what the text alone does not (product cards, the search that ran);
    ``timings`` the assistant's per-stage milliseconds for its turn.
    """

    role: MessageRole
    text: str
    domain: Domain | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    created_at: datetime | None = None


@dataclass
class Conversation:
    """A session's state during a turn; specialists change it in place.

    ``version`` is the stored version this state was read at: saving checks it, so two
    turns racing on one session cannot both write (the second one fails and stores nothing).
    ``messages`` are the most recent messages, oldest first.
    """

    session_id: str
    owner: str | None
    created_at: datetime
    version: int = 0
    messages: list[StoredMessage] = field(default_factory=list)
    cart: list[CartLine] = field(default_factory=list)
    results: list[ProductCard] = field(default_factory=list)
    pending: PendingConfirmation | None = None
    last_domain: Domain | None = None
    orders: list[PlacedOrder] = field(default_factory=list)

    def order(self, order_id: str) -> PlacedOrder | None:
        return next((o for o in self.orders if o.order_id == order_id), None)

    def update_order(self, order: PlacedOrder) -> None:
        """Replace the stored order with the same id (or add it)."""
        for index, known in enumerate(self.orders):
            if known.order_id == order.order_id:
                self.orders[index] = order
                return
        self.orders.append(order)

    def record_paid(self, order: PlacedOrder, when: datetime) -> PlacedOrder:
        """Record ``order`` as paid (at ``when`` unless already recorded): what it bought
        leaves the cart (a line bought in part keeps the rest) and its pending yes is over."""
        if order.paid_at is not None:
            self.update_order(order)
            return order
        order = replace(order, status="COMPLETED", paid_at=when)
        self.update_order(order)
        bought: dict[str, int] = {}
        for line in order.lines:
            bought[line.variant_id] = bought.get(line.variant_id, 0) + line.quantity
        kept = []
        for line in self.cart:
            left = line.quantity - bought.pop(line.variant_id, 0)
            if left > 0:
                kept.append(replace(line, quantity=left))
        self.cart[:] = kept
        if self.pending is not None and self.pending.data.get("order_id") == order.order_id:
            self.pending = None
        return order

    def search_requests(self) -> list[str]:
        """The requests of the latest searches, oldest first (context for follow-ups)."""
        found = [
            str(m.payload["search"]["request"])
            for m in self.messages
            if m.role == "assistant" and isinstance(m.payload.get("search"), Mapping)
        ]
        return found[-MAX_SEARCH_CONTEXT:]

    def shown_query(self) -> SearchQuery | None:
        """The query of the latest search, as it ran: what a follow-up refines. ``None`` when
        there was none (or it was stored by a version whose queries read otherwise)."""
        for message in reversed(self.messages):
            search = message.payload.get("search") if message.role == "assistant" else None
            if isinstance(search, Mapping):
                try:
                    return SearchQuery.model_validate(search.get("query", {}))
                except ValidationError:
                    return None
        return None

    def add_to_cart(self, card: ProductCard, quantity: int = 1) -> CartLine:
        """Add ``quantity`` of the card's variant (to its line if the cart has one)."""
        if card.variant_id is None or card.price is None or card.currency is None:
            raise ValueError(f"{card.title} has no variant that can be bought")
        for index, line in enumerate(self.cart):
            if line.variant_id == card.variant_id:
                grown = replace(line, quantity=line.quantity + quantity)
                self.cart[index] = grown
                return grown
        line = CartLine(
            product_id=card.id,
            variant_id=card.variant_id,
            title=card.title,
            unit_price=card.price,
            currency=card.currency,
            quantity=quantity,
            options=dict(card.options),
        )
        self.cart.append(line)
        return line
