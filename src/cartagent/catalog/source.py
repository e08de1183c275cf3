"""Which catalog a command reads, and reading it: a products file, a tau-bench retail folder or
a UCP sample shop folder.

:func:`locate_catalog` picks the source (the tau-bench store cartagent ships by default);
:func:`iter_catalog` streams any source, :func:`read_catalog` loads it into a list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from ..data import tau_retail
from ..errors import ConfigurationError
from .loaders import iter_products
from .product import Product
from .rows import RowProblem
from .tau import TAU_PRODUCTS, tau_catalog
from .ucp_shop import is_ucp_shop, ucp_shop_catalog

__all__ = [
    "ProblemSink",
    "is_tau_file",
    "iter_catalog",
    "locate_catalog",
    "read_catalog",
    "rows_file",
]

ProblemSink = Callable[[RowProblem], None]
"""Receives each bad row (with its line) as the reader meets it."""


def locate_catalog(path: str | os.PathLike[str] | None) -> Path:
    """``path`` (which must exist): a products file or a tau-bench retail folder; ``None``:
    the tau-bench retail store packaged with cartagent."""
    if path is None:
        return tau_retail()
    found = Path(path).expanduser()
    if not found.exists():
        raise ConfigurationError(f"{found} does not exist")
    return found


def rows_file(path: Path) -> Path:
    """The file whose lines a bad row's report numbers: a tau-bench folder's products file."""
    return path / TAU_PRODUCTS if path.is_dir() else path


def iter_catalog(source: str | os.PathLike[str], on_problem: ProblemSink) -> Iterator[Product]:
    """Stream the products of a tau-bench retail folder (or its products.json) or a catalog
    file (see :func:`~cartagent.catalog.iter_products`); each bad row goes to ``on_problem``
    as it is met.

    Raises :class:`~cartagent.errors.ConfigurationError` at the call when the source is
    missing, has a suffix no loader reads, or is a tau-bench file in another shape; and, while
    streaming, when the file cannot be read.
    """
    path = Path(source)
    if not path.exists():
        raise ConfigurationError(f"{path} does not exist")
    if is_ucp_shop(path):
        return iter(ucp_shop_catalog(path))  # a handful of products: nothing to stream
    tau_file = rows_file(path)
    if path.is_dir() or (path.name == TAU_PRODUCTS and is_tau_file(tau_file)):
        if not tau_file.is_file():
            raise ConfigurationError(f"{path} holds no {TAU_PRODUCTS}")
        try:
            return iter(tau_catalog(tau_file))  # 50 products: nothing to stream
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"cannot read {path}: {error}") from error
    try:
        rows = iter_products(path)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error
    return _products(path, rows, on_problem)


def _products(
    path: Path, rows: Iterator[Product | RowProblem], on_problem: ProblemSink
) -> Iterator[Product]:
    try:
        for item in rows:
            if isinstance(item, RowProblem):
                on_problem(item)
            else:
                yield item
    except OSError as error:
        raise ConfigurationError(f"cannot read {path}: {error}") from error


def read_catalog(source: str | os.PathLike[str], on_problem: ProblemSink) -> list[Product]:
    """The products of ``source`` in a list (see :func:`iter_catalog`, which raises the same)."""
    return list(iter_catalog(source, on_problem))


def is_tau_file(path: Path) -> bool:
    """Whether ``path`` looks like tau-bench's products.json (an object of ``product_id`` s)."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and "product_id" in first and "name" in first
