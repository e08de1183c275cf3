"""A semantic cache of understood queries: ask the model once per meaning, not once per wording.

``SemanticCache(embedder).get(request, context)`` answers from an exact match of the normalised
text (case, spacing and surrounding punctuation ignored) or, failing that, from the most similar
stored request whose embedding has cosine similarity at least ``threshold``. Entries are evicted
least recently used first at ``capacity``. All methods are thread-safe.

Similar embeddings do not mean equal queries: all-MiniLM-L6-v2 scores "red shoes not blue"
against "blue shoes not red" at 0.99 and a long request against the same with one colour,
gender or size swapped at 0.93-0.94. So a similarity hit is only allowed between requests that
share a *guard*: the same earlier turns, the same numbers in the same order, the same negated
words, and the same structured reading by the rule parser (brand, category, options, attributes,
price, sort, rating, availability, exclusions). The embedding only decides whether the remaining
free words say the same thing ("cheap running shoes" ~ "inexpensive running shoes").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError
from .embeddings import Embedder
from .query import SearchQuery
from .rules import MAX_CONTEXT_TURNS, MAX_REQUEST_CHARS, parse
from .vocabulary import NEGATION_CUES

__all__ = ["CacheStats", "SemanticCache"]

_CHUNK = 256  # rows added to the vector matrix at a time
_EMBED_MEMO = 64  # recent request vectors kept, so a miss followed by put embeds once
_EDGE_PUNCTUATION = " \t\n.,;:!?¡¿\"'()[]"
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION_RE = re.compile(
    r"(?<![\w'])(?P<cue>"
    + "|".join(re.escape(c) for c in sorted(NEGATION_CUES, key=len, reverse=True))
    + r"|never|none|neither|non|\w+n't)(?![\w'])\W*(?P<word>[\w'-]*)"
)
_Key = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class CacheStats:
    """Counts since the cache was made; ``size`` is the number of entries now."""

    lookups: int
    hits: int
    exact_hits: int
    misses: int
    size: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0


@dataclass
class _Entry:
    slot: int
    guard: tuple[object, ...]
    query: SearchQuery


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:MAX_REQUEST_CHARS]).casefold()
    return " ".join(text.split()).strip(_EDGE_PUNCTUATION)


def _number(raw: str) -> str:
    plain = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw) else raw
    try:
        value = Decimal(plain.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
        return raw
    return format(value.normalize(), "f")


def _guard(text: str, context: tuple[str, ...]) -> tuple[object, ...]:
    """What must be equal for two requests to share an entry (see the module docstring)."""
    numbers = tuple(_number(m.group(0)) for m in _NUMBER_RE.finditer(text))
    negated = tuple(sorted({(m["cue"], m["word"]) for m in _NEGATION_RE.finditer(text)}))
    reading = parse(text, context=context).model_copy(update={"text": ""})
    return (context, numbers, negated, reading.model_dump_json())


class SemanticCache:
    """Understood queries by request (and earlier turns), matched exactly or by meaning.

    ``embedder`` is any :class:`~cartagent.retrieval.embeddings.Embedder` (unit vectors).
    ``threshold`` is the lowest cosine similarity that counts as the same request.
    """

    def __init__(
        self, embedder: Embedder, *, threshold: float = 0.92, capacity: int = 10_000
    ) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigurationError(f"threshold must be in (0, 1], not {threshold}")
        if capacity < 1:
            raise ConfigurationError(f"capacity must be at least 1, not {capacity}")
        self._embedder = embedder
        self._threshold = threshold
        self._capacity = capacity
        self._lock = threading.Lock()
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._slot_keys: list[_Key | None] = []
        self._vectors: npt.NDArray[np.float32] = np.zeros((0, embedder.dim), dtype=np.float32)
        self._groups: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # -1: free slot
        self._free: list[int] = []
        self._memo: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lookups = self._hits = self._exact_hits = 0

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                lookups=self._lookups,
                hits=self._hits,
                exact_hits=self._exact_hits,
                misses=self._lookups - self._hits,
                size=len(self._entries),
            )

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, request: str, context: Sequence[str] = ()) -> SearchQuery | None:
        """The query stored for ``request`` after ``context``, or for one meaning the same."""
        key = _key(request, context)
        with self._lock:
            self._lookups += 1
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                self._exact_hits += 1
                return entry.query
            if not self._entries:
                return None
        guard = _guard(*key)
        vector = self._embed(key[0])
        with self._lock:
            found = self._nearest(guard, vector)
            if found is None:
                return None
            self._entries.move_to_end(found)
            self._hits += 1
            return self._entries[found].query

    def put(self, request: str, context: Sequence[str], query: SearchQuery) -> None:
        """Store ``query`` as the understanding of ``request`` after ``context``."""
        key = _key(request, context)
        guard = _guard(*key)
        vector = self._embed(key[0])
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.query = query
                self._entries.move_to_end(key)
                return
            if len(self._entries) >= self._capacity:
                _, oldest = self._entries.popitem(last=False)
                self._release(oldest.slot)
            slot = self._claim()
            searchable = bool(np.any(vector))  # a text without words is found only exactly
            self._vectors[slot] = vector
            self._groups[slot] = hash(guard) if searchable else -1  # hash() is never -1
            self._slot_keys[slot] = key
            self._entries[key] = _Entry(slot, guard, query)

    def clear(self) -> None:
        """Forget every entry (the counts are kept)."""
        with self._lock:
            self._entries.clear()
            self._groups[:] = -1
            self._slot_keys = [None] * len(self._slot_keys)
            self._free = list(range(len(self._groups)))[::-1]

    # ------------------------------------------------------------------ internals (lock held)

    def _nearest(self, guard: tuple[object, ...], vector: npt.NDArray[np.float32]) -> _Key | None:
        if not np.any(vector):
            return None
        rows = np.flatnonzero(self._groups == hash(guard))
        if rows.size == 0:
            return None
        similarity = self._vectors[rows] @ vector
        best = int(np.argmax(similarity))
        if float(similarity[best]) < self._threshold:
            return None
        key = self._slot_keys[int(rows[best])]
        if key is None or self._entries[key].guard != guard:  # equal hashes, unequal guards
            return None
        return key

    def _claim(self) -> int:
        if not self._free:
            start = len(self._groups)
            grow = min(max(_CHUNK, start), self._capacity - start)  # used slots < capacity
            self._vectors = np.vstack(
                [self._vectors, np.zeros((grow, self._vectors.shape[1]), dtype=np.float32)]
            )
            self._groups = np.concatenate([self._groups, np.full(grow, -1, dtype=np.int64)])
            self._slot_keys.extend([None] * grow)
            self._free = list(range(start + grow - 1, start - 1, -1))
        return self._free.pop()

    def _release(self, slot: int) -> None:
        self._groups[slot] = -1
        self._slot_keys[slot] = None
        self._free.append(slot)

    def _embed(self, text: str) -> npt.NDArray[np.float32]:
        with self._lock:
            memo = self._memo.get(text)
            if memo is not None:
                self._memo.move_to_end(text)
                return memo
        vector = np.asarray(self._embedder.embed([text])[0], dtype=np.float32)
        with self._lock:
            self._memo[text] = vector
            if len(self._memo) > _EMBED_MEMO:
                self._memo.popitem(last=False)
        return vector


def _key(request: str, context: Sequence[str]) -> _Key:
    turns = tuple(
        _normalise(t)
        for t in list(context)[-MAX_CONTEXT_TURNS:]
        if isinstance(t, str) and t.strip()
    )
    return _normalise(request if isinstance(request, str) else ""), turns
