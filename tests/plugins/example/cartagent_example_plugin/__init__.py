"""An example cartagent plugin: one factory per entry-point group it declares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from cartagent.assistant.domains import Domain
from cartagent.assistant.reply import Reply
from cartagent.assistant.small_talk import small_talk
from cartagent.retrieval.query import SearchQuery

if TYPE_CHECKING:
    from cartagent.assistant.specialist import Specialist, TurnContext
    from cartagent.assistant.specialists import SpecialistSetup
    from cartagent.retrieval.embeddings import EmbedderOptions
    from cartagent.settings import Settings

REFUSAL = "Shop talk only here: ask me about our products, your cart or your order."


class FirstWords:
    """Understands a request as its first three words, nothing else."""

    def __call__(self, request: str, *, context: Sequence[str] = ()) -> SearchQuery:
        return SearchQuery(text=" ".join(request.split()[:3]))


def make_understander(settings: Settings) -> FirstWords:
    return FirstWords()


class LetterCounts:
    """Embeds a text as its letter counts, normalised: similar spellings, similar vectors."""

    dim = 26

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for letter in text.lower():
                if "a" <= letter <= "z":
                    vectors[row, ord(letter) - ord("a")] += 1
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


def make_embedder(options: EmbedderOptions) -> LetterCounts:
    return LetterCounts()


@dataclass
class ShopTalkOnly:
    """Out of scope, the store's way: small talk as cartagent answers it, the rest refused in
    the store's own words."""

    built_in: Specialist
    name: str = "shop_talk_only"
    domain: Domain = Domain.OUT_OF_SCOPE
    tools: tuple[str, ...] = ()
    prompt: str | None = None

    async def handle(self, turn: TurnContext) -> Reply:
        if small_talk(turn.text) is None:
            return Reply(REFUSAL, self.domain)
        return await self.built_in.handle(turn)


def make_specialist(setup: SpecialistSetup) -> ShopTalkOnly:
    return ShopTalkOnly(setup.built_in[Domain.OUT_OF_SCOPE])
