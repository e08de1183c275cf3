"""Training rows from the JSONL splits ``cartagent tune data`` writes.

Each row needs ``request``, ``context`` (earlier requests) and ``completion`` (the gold
SearchQuery JSON). The prompt is rebuilt here with the runtime's own
:func:`~cartagent.retrieval.prompt.understanding_messages` (``short`` style, or ``line``,
``guided`` or ``patch`` for a model answering in the query-line notation) and so is the
answer, so a model is always trained on exactly what it will be asked and how it must answer. A
malformed row is reported by line and skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ..errors import ConfigurationError
from ..retrieval import (
    PromptStyle,
    SearchQuery,
    gold_answer,
    parse,
    query_json,
    understanding_messages,
)

__all__ = [
    "Example",
    "Split",
    "asked",
    "chat",
    "example_from_row",
    "load_split",
    "needs_model",
    "prompt_messages",
    "read_rows",
]

_Row = TypeVar("_Row")


@dataclass(frozen=True)
class Example:
    request: str
    context: tuple[str, ...]
    gold: SearchQuery

    @property
    def completion(self) -> str:
        return query_json(self.gold)

    def answer(self, style: PromptStyle = "short") -> str:
        """The gold answer as a model prompted in ``style`` writes it."""
        return gold_answer(self.request, self.context, self.gold, style)


@dataclass(frozen=True)
class Split:
    """One split's usable examples, what was skipped (``path:line: reason``) and its hash."""

    path: Path
    examples: tuple[Example, ...]
    skipped: tuple[str, ...]
    sha256: str


def needs_model(example: Example) -> bool:
    """Whether a model served rules-first is asked ``example``: the rule parser's reading of it
    leaves words it could not place (see ``ModelUnderstander(rules_first=True)``)."""
    return bool(parse(example.request, context=example.context).text)


def asked(split: Split, *, rules_first: bool) -> Split:
    """``split`` as a model is asked it: all of it, or rules-first only the examples the rule
    parser leaves words of (a model is trained and scored on what it will be asked)."""
    if not rules_first:
        return split
    return replace(split, examples=tuple(e for e in split.examples if needs_model(e)))


def prompt_messages(
    request: str, context: Sequence[str], style: PromptStyle = "short"
) -> list[dict[str, str]]:
    """The chat messages the understanding step sends for ``request``, as role/content dicts."""
    messages = understanding_messages(request, context, style=style)
    return [{"role": m.role, "content": m.content or ""} for m in messages]


def chat(example: Example, style: PromptStyle = "short") -> dict[str, Any]:
    """``example`` in TRL's conversational prompt-completion form."""
    return {
        "prompt": prompt_messages(example.request, example.context, style),
        "completion": [{"role": "assistant", "content": example.answer(style)}],
    }


def example_from_row(row: Any) -> Example:
    """One JSON Lines row as an :class:`Example`; a ValueError says what is wrong with it."""
    if not isinstance(row, dict):
        raise ValueError("a row must be a JSON object")
    request = row.get("request")
    if not isinstance(request, str) or not request.strip():
        raise ValueError("'request' must be a non-empty string")
    context = row.get("context") or []
    if not isinstance(context, list) or not all(isinstance(t, str) for t in context):
        raise ValueError("'context' must be a list of strings")
    completion = row.get("completion")
    if not isinstance(completion, str):
        raise ValueError("'completion' must be the gold SearchQuery as a JSON string")
    try:
        gold = SearchQuery.model_validate_json(completion)
    except ValidationError as error:
        reason = error.errors()[0]["msg"]
        raise ValueError(f"'completion' is not a valid SearchQuery: {reason}") from None
    return Example(request, tuple(context), gold)


def read_rows(
    path: Path, raw: bytes, read: Callable[[Any, int], _Row]
) -> tuple[list[_Row], list[str]]:
    """Each JSON Lines row of ``raw`` (the file ``path``) as ``read(row, line number)`` gives
    it, and a ``path:line: skipped: reason`` for each row it refuses with a ValueError."""
    rows: list[_Row] = []
    skipped: list[str] = []
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(read(json.loads(line), number))
        except ValueError as error:  # JSONDecodeError included
            skipped.append(f"{path}:{number}: skipped: {error}")
    return rows, skipped


def load_split(path: str | Path) -> Split:
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise ConfigurationError(f"{file}: no such data file (run `cartagent tune data`)") from None
    examples, skipped = read_rows(file, raw, lambda row, _: example_from_row(row))
    if not examples:
        raise ConfigurationError(f"{file}: no usable examples ({len(skipped)} malformed rows)")
    return Split(file, tuple(examples), tuple(skipped), hashlib.sha256(raw).hexdigest())
