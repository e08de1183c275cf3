"""The assistant: a router hands each turn to the specialist of its domain.

``Assistant(router, store, searcher=...)`` answers ``await assistant.turn(session_id, text)``
with a :class:`Reply` (text, product cards, domain, per-stage latency). :func:`run_turn` is the
free-form tool loop a capable model runs through the toolkit.
"""

from __future__ import annotations

from ..commerce.terms import DEMO_STORE, Quote, StoreTerms
from ..errors import StepLimitExceeded
from .assistant import Assistant
from .cards import ProductCard
from .conversation import (
    CartLine,
    Conversation,
    PendingConfirmation,
    PlacedOrder,
    StoredMessage,
)
from .conversation_store import ConversationConflict, ConversationStore, UnknownSession
from .domains import Domain
from .reply import STAGES, Reply
from .router import EmbeddingRouter, ModelRouter, Route, RouteContext, Router
from .runner import run_turn, tool_specs
from .specialist import Specialist, TurnContext

__all__ = [
    "DEMO_STORE",
    "STAGES",
    "Assistant",
    "CartLine",
    "Conversation",
    "ConversationConflict",
    "ConversationStore",
    "Domain",
    "EmbeddingRouter",
    "ModelRouter",
    "PendingConfirmation",
    "PlacedOrder",
    "ProductCard",
    "Quote",
    "Reply",
    "Route",
    "RouteContext",
    "Router",
    "Specialist",
    "StepLimitExceeded",
    "StoreTerms",
    "StoredMessage",
    "TurnContext",
    "UnknownSession",
    "run_turn",
    "tool_specs",
]
