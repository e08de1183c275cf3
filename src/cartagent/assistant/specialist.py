"""The specialist contract: one domain, a subset of the registry's tools, a prompt, a handler.

A specialist is a plain object; the assistant hands it the turn as a :class:`TurnContext` and
stores whatever it changed in ``turn.conversation`` together with its :class:`Reply`, in one
transaction. Specialists are listed in ``specialists/__init__.py``: adding one is a file there
and one line in that tuple.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigurationError
from .conversation import Conversation
from .domains import Domain
from .language import DEFAULT, messages
from .reading import TurnReading
from .reply import Reply

if TYPE_CHECKING:
    from gettext import NullTranslations

    from ..llm import Model
    from ..retrieval import Searcher
    from ..tools import Toolkit, ToolResult

__all__ = ["Specialist", "TurnContext", "check_specialists", "load_prompt"]

SEARCH_TOOL = "search_products"  # built per searcher (retrieval/catalog_tool.py), not in ALL_TOOLS


@dataclass
class TurnContext:
    """One turn as a specialist sees it.

    ``timings`` collects milliseconds for the stages the specialist runs (``understand``,
    ``retrieve``, ``tools``); the assistant adds ``route`` and ``respond``. ``model`` is the
    capable model when one is configured (``None`` on embedded defaults). ``toolkit`` reaches
    PayPal (``None`` when no payment backend is configured); its approval callback is
    :func:`~cartagent.assistant.consent.approve_granted`. ``merchant`` is true when the
    speaker is the store's merchant (back office), false for a shopper. ``language`` is the
    shopper's (:func:`~cartagent.assistant.language.detect`): replies are written in it.
    ``shared_reading`` is the turn's reading the router made
    (:class:`~cartagent.assistant.reading.TurnReading`), which :attr:`reading` reuses.
    """

    text: str
    conversation: Conversation
    searcher: Searcher | None = None
    model: Model | None = None
    toolkit: Toolkit | None = None
    merchant: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    language: str = DEFAULT
    shared_reading: TurnReading | None = None

    @property
    def reading(self) -> TurnReading:
        """The turn's one reading: the router's (``shared_reading``) when it read these words."""
        if self.shared_reading is None or self.shared_reading.text != self.text:
            self.shared_reading = TurnReading(self.text, self.conversation, self.searcher)
        return self.shared_reading

    @property
    def messages(self) -> NullTranslations:
        """The assistant's messages in the shopper's language (:mod:`..language`)."""
        return messages(self.language)

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool through the toolkit, adding its time to the ``tools`` stage."""
        if self.toolkit is None:
            raise ConfigurationError("no payment backend is configured for the assistant")
        start = time.perf_counter()
        try:
            return await self.toolkit.call(tool, arguments)
        finally:
            spent = (time.perf_counter() - start) * 1000
            self.timings["tools"] = self.timings.get("tools", 0.0) + spent


class Specialist(Protocol):
    """Handles the turns of one domain."""

    @property
    def name(self) -> str: ...

    @property
    def domain(self) -> Domain: ...

    @property
    def tools(self) -> tuple[str, ...]:
        """Names of the registry tools it may call (``search_products`` included)."""
        ...

    @property
    def prompt(self) -> str | None:
        """Its prompt file under ``assistant/prompts/`` (instructions for a capable model)."""
        ...

    async def handle(self, turn: TurnContext) -> Reply: ...


def load_prompt(name: str) -> str:
    """The text of ``assistant/prompts/<name>``."""
    return resources.files(__package__).joinpath("prompts", name).read_text("utf-8")


def check_specialists(specialists: Iterable[Specialist]) -> dict[Domain, Specialist]:
    """The specialists by domain, after checking each domain has exactly one, every tool
    name is a registry tool and every prompt file exists."""
    from ..tools import ALL_TOOLS

    known = {t.name for t in ALL_TOOLS} | {SEARCH_TOOL}
    by_domain: dict[Domain, Specialist] = {}
    for specialist in specialists:
        if specialist.domain in by_domain:
            raise ConfigurationError(
                f"two specialists for {specialist.domain.value}: "
                f"{by_domain[specialist.domain].name} and {specialist.name}"
            )
        unknown = sorted(set(specialist.tools) - known)
        if unknown:
            raise ConfigurationError(f"{specialist.name}: no such tools: {', '.join(unknown)}")
        if specialist.prompt is not None:
            try:
                load_prompt(specialist.prompt)
            except (FileNotFoundError, OSError) as error:
                raise ConfigurationError(
                    f"{specialist.name}: prompt {specialist.prompt!r} not found"
                ) from error
        by_domain[specialist.domain] = specialist
    missing = [d.value for d in Domain if d not in by_domain]
    if missing:
        raise ConfigurationError(f"no specialist for: {', '.join(missing)}")
    return by_domain
