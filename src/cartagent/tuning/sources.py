"""The products examples are written from: a catalog file or folder, synthetic ones, or both."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..catalog import RowProblem, read_catalog
from ..catalog.product import Product
from ..catalog.synthetic import synthetic_catalog
from ..errors import ConfigurationError

__all__ = ["Catalog", "training_catalog"]


@dataclass(frozen=True)
class Catalog:
    """Products, and a line per origin for the data card."""

    products: tuple[Product, ...]
    origins: tuple[str, ...]


def _ignore(problem: RowProblem) -> None:
    """Rows a loader rejects are simply not written about."""


def training_catalog(
    path: str | os.PathLike[str] | None,
    synthetic: int,
    seed: int,
    on_problem: Callable[[RowProblem], None] = _ignore,
) -> Catalog:
    """Products from ``path`` (a tau-bench folder or any catalog file) and ``synthetic`` more.

    Raises :class:`~cartagent.errors.ConfigurationError` when ``path`` does not exist or cannot
    be read, when ``synthetic`` is negative, or when there are no products at all.
    """
    if synthetic < 0:
        raise ConfigurationError(f"synthetic products must not be negative, got {synthetic}")
    products: list[Product] = []
    origins: list[str] = []
    if path is not None:
        found = read_catalog(path, on_problem)
        products.extend(found)
        origins.append(f"{Path(path).name}: {len(found)} products")
    if synthetic:
        products.extend(synthetic_catalog(synthetic, seed))
        origins.append(f"synthetic_catalog({synthetic}, seed={seed}): {synthetic} products")
    if not products:
        raise ConfigurationError("no products to write training examples from")
    return Catalog(tuple(products), tuple(origins))
