"""Test doubles for code that talks to a :class:`~cartagent.llm.Model`.

Not imported by ``cartagent`` itself; tests and examples import it explicitly.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .llm import Completion, Message, ToolSpec

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Turn = Message | Callable[[list[Message]], Message]


class ScriptExhausted(AssertionError):
    """A :class:`ScriptedModel` was asked for more replies than it was given."""


@dataclass(frozen=True)
class ModelCall:
    """What one ``complete`` call was sent (a snapshot: later appends do not show up)."""

    messages: list[Message]
    tools: list[ToolSpec] | None
    response_format: dict[str, Any] | None


class ScriptedModel:
    """Replies with ``turns`` in order and records every call it receives.

    A turn is either the reply itself or a function of the conversation so far returning it,
    for replies that depend on earlier tool results (e.g. an id a tool returned).
    """

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns = list(turns)
        self.calls: list[ModelCall] = []

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.calls)

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        sent = list(messages)
        if self.remaining <= 0:
            last = sent[-1] if sent else None
            raise ScriptExhausted(
                f"ScriptedModel was called {len(self.calls) + 1} times but scripted only "
                f"{len(self._turns)} turns; the last message it was sent: {last!r}"
            )
        self.calls.append(ModelCall(sent, None if tools is None else list(tools), response_format))
        turn = self._turns[len(self.calls) - 1]
        reply = turn(sent) if callable(turn) else turn
        return Completion(reply)


ModelFunction = Callable[[list[Message], list[ToolSpec] | None], Message | Awaitable[Message]]


class FunctionModel:
    """A model whose every reply is ``fn(messages, tools)`` (sync or async)."""

    def __init__(self, fn: ModelFunction) -> None:
        self._fn = fn
        self.calls: list[ModelCall] = []

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        sent = list(messages)
        self.calls.append(ModelCall(sent, None if tools is None else list(tools), response_format))
        reply = self._fn(sent, tools)
        if inspect.isawaitable(reply):
            reply = await reply
        return Completion(reply)


__all__ = [
    "FunctionModel",
    "HashingEmbedder",
    "ModelCall",
    "ModelFunction",
    "ScriptExhausted",
    "ScriptedModel",
    "Turn",
]


class HashingEmbedder:
    """A deterministic stand-in for a text embedding model (an ``Embedder``).

    Each lower-cased word (and each word pair, so word order counts a little) is hashed into one
    of ``dim`` buckets with a sign; the bucket counts, L2-normalised, are the vector. Texts
    sharing words are near, texts sharing none are (almost) orthogonal; synonyms are not near.
    A text without words gets the zero vector. Needs numpy.
    """

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"dim must be at least 1, not {dim}")
        self._dim = dim
        self.calls = 0  # texts embedded so far

    @property
    def dim(self) -> int:
        return self._dim

    def _bucket(self, token: str) -> tuple[int, float]:
        import hashlib

        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "little")
        return number % self._dim, (1.0 if number >> 63 else -1.0)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import itertools
        import re

        import numpy

        out = numpy.zeros((len(texts), self._dim), dtype=numpy.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.casefold())
            for token, weight in [(w, 1.0) for w in words] + [
                (f"{a} {b}", 0.5) for a, b in itertools.pairwise(words)
            ]:
                bucket, sign = self._bucket(token)
                out[row, bucket] += sign * weight
            norm = float(numpy.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        self.calls += len(texts)
        return out
