"""The in-process build engine: ``LocalEngine().prepare(source, ...)`` yields prepared batches.

:class:`LocalEngine` is the :class:`~cartagent.catalog.prepared.Engine` for catalogs one machine
holds. It reads the source with :func:`read_catalog` (a tau-bench retail folder or its
``products.json``, else any file :func:`~cartagent.catalog.load_products` reads), reporting each
bad row, then fingerprints the products and embeds those the build still wants, a batch at a
time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..errors import ConfigurationError
from ..retrieval.product_vectors import TextVectors, embed_products
from .fingerprint import content_hash
from .loaders import load_products
from .prepared import PreparedBatch, ProblemSink
from .product import Product
from .tau import TAU_PRODUCTS, tau_catalog

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..retrieval.embeddings import Embedder

__all__ = ["LocalEngine", "read_catalog"]


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
        products = read_catalog(source, on_problem)
        vectors = None if embedder is None else TextVectors(embedder)
        for start in range(0, len(products), batch_size):
            chunk = products[start : start + batch_size]
            hashes = [content_hash(product) for product in chunk]
            if vectors is None:
                yield PreparedBatch(chunk, hashes)
                continue
            yield PreparedBatch(chunk, hashes, _embed(vectors, chunk, hashes, wanted))

    def close(self) -> None:
        """Nothing to release: the engine holds no resources between builds."""


def read_catalog(source: str | os.PathLike[str], on_problem: ProblemSink) -> list[Product]:
    """The products of a tau-bench retail folder (or its products.json) or a catalog file.

    Each row :func:`~cartagent.catalog.load_products` rejects goes to ``on_problem``. Raises
    :class:`~cartagent.errors.ConfigurationError` when the source is missing, has a suffix no
    loader reads, or is a tau-bench file in another shape.
    """
    path = Path(source)
    if not path.exists():
        raise ConfigurationError(f"{path} does not exist")
    tau_file = path / TAU_PRODUCTS if path.is_dir() else path
    if path.is_dir() or (path.name == TAU_PRODUCTS and _is_tau(tau_file)):
        if not tau_file.is_file():
            raise ConfigurationError(f"{path} holds no {TAU_PRODUCTS}")
        try:
            return tau_catalog(tau_file)
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"cannot read {path}: {error}") from error
    try:
        report = load_products(path)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error
    for problem in report.problems:
        on_problem(problem)
    return report.products


def _is_tau(path: Path) -> bool:
    """Whether ``path`` looks like tau-bench's products.json (an object of ``product_id`` s)."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and "product_id" in first and "name" in first


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
