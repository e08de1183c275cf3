"""What a turn answers: text, product cards, the domain, and where the time went."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cards import ProductCard
from .domains import Domain

__all__ = ["STAGES", "Reply"]

STAGES = ("route", "understand", "retrieve", "tools", "respond")
"""The stages of a turn's latency breakdown, in the order they run."""


@dataclass(frozen=True)
class Reply:
    """The assistant's answer to one turn.

    ``domain`` is ``None`` when the input was refused before routing (empty, too long,
    unreadable). ``data`` is what the specialist keeps with the stored message beside the
    cards (e.g. the search that ran, for later follow-ups). ``timings`` holds milliseconds
    for every stage of :data:`STAGES` plus ``total``; a stage that did not run is 0.
    """

    text: str
    domain: Domain | None
    cards: tuple[ProductCard, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        """The JSON kept with the stored message: ``data`` plus the cards, if any."""
        out = dict(self.data)
        if self.cards:
            out["cards"] = [c.to_json() for c in self.cards]
        return out
