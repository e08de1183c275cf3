"""LoRA adapters that ship inside cartagent, for the packaged base models.

``search-smollm2`` is SmolLM2-135M-Instruct tuned for query understanding by ``cartagent tune``
(``make adapter`` rebuilds it); its card (``search-smollm2.json``) records how it was made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ...errors import ConfigurationError

__all__ = [
    "SHIPPED_ADAPTERS",
    "ShippedAdapter",
    "card_prompt_style",
    "card_rules_first",
    "shipped_adapter",
    "trained_prompt_style",
]

SHIPPED_ADAPTERS = {"search-smollm2": "smollm2"}
"""Adapter name -> the packaged base model it was trained on."""


TrainedStyle = Literal["short", "line", "guided", "patch", "gaps"]


def trained_prompt_style(output: object, guided: object = False) -> TrainedStyle:
    """The prompt a model trained with ``[model] output`` and ``guided`` is asked with: ``line``
    for one that answers in the query-line notation, ``guided`` for one that also reads the rule
    parser's line, ``patch`` for one that answers only what that line lacks, else ``short``
    (JSON)."""
    if output in ("patch", "gaps"):
        return "gaps" if output == "gaps" else "patch"
    if output != "line":
        return "short"
    return "guided" if guided else "line"


def card_prompt_style(card: dict[str, Any]) -> str:
    """The prompt an adapter was trained on, from its card (:func:`trained_prompt_style`)."""
    model = (card.get("config") or {}).get("model") or {}
    return trained_prompt_style(model.get("output"), model.get("guided"))


def card_rules_first(card: dict[str, Any]) -> bool:
    """Whether an adapter was trained to be asked only where the rule parser leaves words
    unplaced (its card's ``config.model.rules_first``), and so must be served that way."""
    model = (card.get("config") or {}).get("model") or {}
    return model.get("rules_first") is True


@dataclass(frozen=True)
class ShippedAdapter:
    name: str
    base: str
    path: Path
    card: dict[str, Any]

    @property
    def prompt_style(self) -> str:
        return card_prompt_style(self.card)

    @property
    def rules_first(self) -> bool:
        return card_rules_first(self.card)


def shipped_adapter(name: str = "search-smollm2") -> ShippedAdapter:
    """The GGUF LoRA file and card of the shipped adapter ``name``."""
    if name not in SHIPPED_ADAPTERS:
        raise ConfigurationError(f"no shipped adapter {name!r}; known: {sorted(SHIPPED_ADAPTERS)}")
    folder = Path(str(resources.files(__package__)))
    path, card = folder / f"{name}.gguf", folder / f"{name}.json"
    if not path.is_file() or not card.is_file():
        raise ConfigurationError(f"the {name} adapter is missing from {folder}: run `make adapter`")
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ConfigurationError(f"{card}: unreadable adapter card: {error}") from None
    return ShippedAdapter(name, SHIPPED_ADAPTERS[name], path, data)
