"""The requests training data must never contain: the project's labelled sets and WebShop's.

The labelled sets under ``cartagent/evals/data`` (their requests and earlier turns) and the
WebShop goal-query map (instructions and the queries people typed) measure the tuned model;
an example equal to one of them (ignoring case and spacing) would leak the test into training.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError

__all__ = ["HeldOut", "held_out_requests", "normalise"]


def normalise(text: str) -> str:
    """``text`` case-folded with runs of whitespace made one space: the comparison key."""
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class HeldOut:
    """Normalised requests to keep out, and where they came from (name, SHA-256)."""

    requests: frozenset[str]
    sources: tuple[tuple[str, str], ...]

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and normalise(text) in self.requests


def _labelled(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        yield str(case.get("request", ""))
        yield from (str(turn) for turn in case.get("context", []))


def _turns(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if line.strip():
            yield from (str(turn.get("text", "")) for turn in json.loads(line).get("turns", []))


def _webshop(data: Any, path: Path) -> Iterator[str]:
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path}: expected an object of instruction -> queries")
    for instruction, queries in data.items():
        yield str(instruction)
        if isinstance(queries, list):
            yield from (str(q) for q in queries)


def held_out_requests(webshop: Path | None = None, extra: Iterable[str] = ()) -> HeldOut:
    """Every labelled request shipped in ``cartagent.evals`` (and every turn of its discovery
    conversations), plus WebShop's when given.

    Raises :class:`~cartagent.errors.ConfigurationError` when ``webshop`` cannot be read.
    """
    found: set[str] = {normalise(t) for t in extra}
    sources: list[tuple[str, str]] = []
    data_dir = resources.files("cartagent.evals") / "data"
    for entry in sorted(data_dir.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".jsonl"):
            raw = entry.read_bytes()
            found.update(normalise(t) for t in _labelled(raw.decode("utf-8")))
            sources.append((f"cartagent/evals/data/{entry.name}", hashlib.sha256(raw).hexdigest()))
    for entry in sorted((data_dir / "discovery").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".jsonl"):  # conversations: each turn's text is held out
            raw = entry.read_bytes()
            found.update(normalise(t) for t in _turns(raw.decode("utf-8")))
            name = f"cartagent/evals/data/discovery/{entry.name}"
            sources.append((name, hashlib.sha256(raw).hexdigest()))
    if webshop is not None:
        try:
            raw = webshop.read_bytes()
            data = json.loads(raw)
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"cannot read WebShop file {webshop}: {error}") from error
        found.update(normalise(t) for t in _webshop(data, webshop))
        sources.append((webshop.name, hashlib.sha256(raw).hexdigest()))
    found.discard("")
    return HeldOut(frozenset(found), tuple(sources))
