"""Store questions: answered by quoting the store's policy documents, never from memory.

The best-matching section of the policies (:mod:`.knowledge`) is quoted verbatim and named;
when no section matches well enough the answer is "I don't know" and where to ask instead.
The knowledge base is built on the first question and kept.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any

from ...domains import Domain
from ...reply import Reply
from ...specialist import TurnContext
from .knowledge import Match, StoreKnowledge

if TYPE_CHECKING:
    from ....retrieval import Embedder

__all__ = ["DONT_KNOW", "NOT_SET_UP", "SUPPORT_EMAIL", "StoreQuestionsSpecialist"]

SUPPORT_EMAIL = "support@cartagent-demo.example"
DONT_KNOW = f"I don't know that one: our policies don't say. Please ask {SUPPORT_EMAIL}."
NOT_SET_UP = (
    "I can't look up our store policies in this installation (it needs the MiniLM embedder: "
    f"pip install 'cartagent[dense]'). Please ask {SUPPORT_EMAIL}."
)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _source(match: Match) -> dict[str, Any]:
    section = match.section
    return {
        "document": section.document,
        "title": section.title,
        "section": section.heading,
        "score": round(match.score, 4),
    }


class StoreQuestionsSpecialist:
    """Quotes the policy section that answers the question, or says it does not know.

    ``embedder`` ranks the sections by meaning; pass the router's to share one model. Without
    one, a :class:`~cartagent.retrieval.embeddings.MiniLMEmbedder` is made on the first
    question.
    """

    name = "store_questions"
    domain = Domain.STORE_QUESTIONS
    tools: tuple[str, ...] = ()
    prompt: str | None = "store_questions.md"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embedder = embedder
        self._knowledge: StoreKnowledge | None = None
        self._lock = threading.Lock()

    def knowledge(self) -> StoreKnowledge:
        """The policy sections, embedded (built on the first call, in the caller's thread)."""
        with self._lock:
            if self._knowledge is None:
                embedder = self._embedder
                if embedder is None:
                    from ....retrieval import MiniLMEmbedder

                    embedder = MiniLMEmbedder()
                knowledge = StoreKnowledge(embedder)
                knowledge.warm_up()
                self._knowledge = knowledge
            return self._knowledge

    def _answer(self, question: str) -> Match | None:
        return self.knowledge().answer(question)

    async def handle(self, turn: TurnContext) -> Reply:
        start = time.perf_counter()
        try:
            # Embedding is torch work that releases the GIL: off the event loop.
            match = await asyncio.to_thread(self._answer, turn.text)
        except (ImportError, FileNotFoundError):  # no dense extra installed, no model files
            return Reply(NOT_SET_UP, self.domain, data={"policy": None})
        finally:
            turn.timings["retrieve"] = _ms(start)
        if match is None:
            return Reply(DONT_KNOW, self.domain, data={"policy": None})
        section = match.section
        text = f'From our {section.title}, "{section.heading}":\n"{section.text}"'
        return Reply(text, self.domain, data={"policy": _source(match)})
