"""The product catalog: models, file loaders, the tau-bench catalog and a synthetic one.

``Product`` / ``Variant`` are what search indexes and tools share; ``iter_products`` streams
JSON, JSON Lines, CSV and Parquet files (reporting bad rows) and ``load_products`` loads them;
``iter_catalog`` / ``read_catalog`` read either such a file or a tau-bench retail folder;
``tau_catalog`` maps tau-bench's retail products; ``synthetic_catalog`` streams any number of
realistic products for tests and benchmarks. Index building lives in :mod:`cartagent.indexing`.
"""

from __future__ import annotations

from .loaders import LoadReport, iter_products, load_products
from .product import PICTURE_TYPES, Product, Variant, is_web_address
from .rows import RowProblem
from .source import iter_catalog, read_catalog
from .synthetic import synthetic_catalog
from .tau import tau_catalog

__all__ = [
    "PICTURE_TYPES",
    "LoadReport",
    "Product",
    "RowProblem",
    "Variant",
    "is_web_address",
    "iter_catalog",
    "iter_products",
    "load_products",
    "read_catalog",
    "synthetic_catalog",
    "tau_catalog",
]
