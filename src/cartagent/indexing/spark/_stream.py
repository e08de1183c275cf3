"""Embedding in executors, and streaming records to the driver as prepared batches."""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark import Broadcast

from ...catalog import Product, RowProblem
from ...catalog.rows import ProductIds
from ...errors import ConfigurationError
from ..prepared import PreparedBatch, ProblemSink
from ._sources import Found

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ...retrieval import Embedder

__all__ = ["Wanted", "assemble", "embed", "hash_of", "portable"]

_EMBED_CHUNK = 256  # products embedded per call in an executor


def hash_of(record: Found | RowProblem) -> list[str]:
    return [record.hash] if isinstance(record, Found) else []


@dataclass(frozen=True)
class Wanted:
    """The fingerprints to embed, as the wanted set or (when smaller) its complement."""

    hashes: frozenset[str]
    listed: bool  # True: ``hashes`` are the wanted ones

    @classmethod
    def choose(cls, hashes: list[str], wanted: Callable[[str], bool]) -> Wanted:
        unique = set(hashes)
        yes = frozenset(h for h in unique if wanted(h))
        if len(yes) * 2 <= len(unique):
            return cls(yes, True)
        return cls(frozenset(unique - yes), False)

    def __call__(self, content_hash: str) -> bool:
        return (content_hash in self.hashes) == self.listed


@dataclass(frozen=True)
class _MiniLMRecipe:
    """How an executor builds the MiniLM embedder (a loaded model does not pickle)."""

    threads: int | None
    batch_size: int
    model_dir: Path | None

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return _built(self).embed(texts)


_BUILT: dict[_MiniLMRecipe, Embedder] = {}  # per Python worker: the model loads once


def _built(recipe: _MiniLMRecipe) -> Embedder:
    from ...retrieval import MiniLMEmbedder

    embedder = _BUILT.get(recipe)
    if embedder is None:
        embedder = _BUILT[recipe] = MiniLMEmbedder(
            threads=recipe.threads, batch_size=recipe.batch_size, model_dir=recipe.model_dir
        )
    return embedder


def portable(embedder: Embedder) -> Embedder:
    """What is sent to executors: a MiniLM recipe, or the embedder itself if it pickles."""
    from ...retrieval import MiniLMEmbedder

    if isinstance(embedder, MiniLMEmbedder):
        return _MiniLMRecipe(embedder.threads, embedder.batch_size, embedder._model_dir)
    try:
        pickle.dumps(embedder)
    except Exception as error:  # pickling fails with many exception types
        raise ConfigurationError(
            f"the embedder ({type(embedder).__name__}) cannot be sent to Spark executors: "
            f"it does not pickle ({error})"
        ) from error
    return embedder


def embed(
    shipped: Broadcast[Embedder],
    chosen: Broadcast[Wanted] | None,
    records: Iterable[Found | RowProblem],
) -> Iterator[Found | RowProblem]:
    """Add each wanted product's vector, embedding ``_EMBED_CHUNK`` products a call."""
    import numpy as np

    from ...retrieval import TextVectors, embed_products

    embedder = shipped.value
    cache = TextVectors(embedder)  # per partition: repeated field texts are embedded once
    wanted = None if chosen is None else chosen.value
    stream = iter(records)
    while chunk := list(itertools.islice(stream, _EMBED_CHUNK)):
        todo = [
            (i, record)
            for i, record in enumerate(chunk)
            if isinstance(record, Found) and (wanted is None or wanted(record.hash))
        ]
        if todo:
            products = [Product.model_validate_json(found.json) for _, found in todo]
            vectors = np.asarray(embed_products(products, cache), dtype=np.float32)
            for (i, found), vector in zip(todo, vectors, strict=True):
                chunk[i] = found._replace(vector=vector.tobytes())
        yield from chunk


def assemble(
    stream: Iterable[Found | RowProblem],
    batch_size: int,
    dim: int | None,
    on_problem: ProblemSink,
) -> Iterator[PreparedBatch]:
    """Records, in file order, to batches; a second product with a seen id is a problem."""
    ids = ProductIds()
    batch: list[Found] = []
    for record in stream:
        if isinstance(record, RowProblem):
            on_problem(record)
        elif (repeated := ids.repeated(record.line, record.product_id)) is not None:
            on_problem(repeated)
        else:
            batch.append(record)
            if len(batch) == batch_size:
                yield _batch(batch, dim)
                batch = []
    if batch:
        yield _batch(batch, dim)


def _batch(found: list[Found], dim: int | None) -> PreparedBatch:
    products = [Product.model_validate_json(record.json) for record in found]
    hashes = [record.hash for record in found]
    if dim is None:
        return PreparedBatch(products, hashes)
    import numpy as np

    vectors = np.zeros((len(found), dim), dtype=np.float32)
    for row, record in enumerate(found):
        if record.vector is not None:
            vectors[row] = np.frombuffer(record.vector, dtype=np.float32)
    return PreparedBatch(products, hashes, vectors)
