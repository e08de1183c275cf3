"""What an index-build engine hands the index writers: validated products, in batches.

An engine (local, or Spark for catalogs beyond one machine) reads a catalog source, validates
every row (reporting bad ones with their line), fingerprints each product and, when a dense index
is wanted, embeds it. The writers (lexical and dense) only ever see :class:`PreparedBatch` es, so
both engines produce identical indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..catalog import Product
from ..catalog.source import ProblemSink

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval import Embedder

__all__ = ["Engine", "PreparedBatch", "ProblemSink"]


@dataclass(frozen=True)
class PreparedBatch:
    """Products ready to index: ``hashes[i]`` is ``content_hash(products[i])`` and, when the
    build embeds, ``vectors[i]`` is ``embed_products([products[i]], ...)``: a unit vector."""

    products: list[Product]
    hashes: list[str]
    vectors: npt.NDArray[np.float32] | None = None

    def __len__(self) -> int:
        return len(self.products)


class Engine(Protocol):
    """Reads ``source`` and yields prepared batches of at most ``batch_size`` products.

    ``embedder`` is ``None`` when no dense index is built. ``wanted`` (when given) says which
    fingerprints still need embedding: an incremental build passes the ones it does not have, so
    unchanged products are not embedded again (their batch ``vectors`` rows are then zeros).
    Whoever makes an engine calls ``close()`` when done with it (Spark stops its session).
    """

    def prepare(
        self,
        source: Path,
        *,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None = None,
    ) -> Iterator[PreparedBatch]: ...

    def close(self) -> None:
        """Release what the engine holds (a no-op for one that holds nothing)."""
        ...
