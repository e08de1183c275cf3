"""The in-process build engine: ``LocalEngine().prepare(source, ...)`` yields prepared batches.

:class:`LocalEngine` is the :class:`~cartagent.indexing.prepared.Engine` for catalogs one
machine builds. It streams the source with :func:`~cartagent.catalog.iter_catalog` (a
tau-bench retail folder or its ``products.json``, else any file
:func:`~cartagent.catalog.iter_products` reads), reporting each bad row as it is met, and
fingerprints and embeds the products a batch at a time: it never holds more than one batch of
products, whatever the catalog's size.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog import Product, iter_catalog
from ..errors import ConfigurationError
from ..retrieval import TextVectors, embed_products
from .fingerprints import content_hash
from .prepared import PreparedBatch, ProblemSink

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval import Embedder

__all__ = ["LocalEngine"]


class LocalEngine:
    """Reads, validates, fingerprints and embeds a catalog in this process."""

    def prepare(
        self,
        source: Path,
        *,
        embedder: Embedder | None,
        batch_size: int,
        on_problem: ProblemSink,
        wanted: Callable[[str], bool] | None = None,
    ) -> Iterator[PreparedBatch]:
        """Batches of at most ``batch_size`` products, in source order (see ``Engine``).

        Raises :class:`~cartagent.errors.ConfigurationError` when ``source`` cannot be read at
        all; bad rows go to ``on_problem`` and the rest is prepared.
        """
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be at least 1, not {batch_size}")
        products = iter_catalog(source, on_problem)
        return self._batches(products, embedder, batch_size, wanted)

    def _batches(
        self,
        products: Iterator[Product],
        embedder: Embedder | None,
        batch_size: int,
        wanted: Callable[[str], bool] | None,
    ) -> Iterator[PreparedBatch]:
        vectors = None if embedder is None else TextVectors(embedder)
        while chunk := list(itertools.islice(products, batch_size)):
            hashes = [content_hash(product) for product in chunk]
            if vectors is None:
                yield PreparedBatch(chunk, hashes)
            else:
                yield PreparedBatch(chunk, hashes, _embed(vectors, chunk, hashes, wanted))

    def close(self) -> None:
        """Nothing to release: the engine holds no resources between builds."""


def _embed(
    cache: TextVectors,
    products: list[Product],
    hashes: list[str],
    wanted: Callable[[str], bool] | None,
) -> npt.NDArray[np.float32]:
    """Rows for the wanted fingerprints embedded, zeros elsewhere (the build has those)."""
    import numpy as np

    vectors = np.zeros((len(products), cache.embedder.dim), dtype=np.float32)
    rows = [i for i, fingerprint in enumerate(hashes) if wanted is None or wanted(fingerprint)]
    if rows:
        vectors[rows] = embed_products([products[i] for i in rows], cache)
    return vectors
