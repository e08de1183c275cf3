"""The product catalog: models, file loaders, the tau-bench catalog and a synthetic one.

``Product`` / ``Variant`` are what search indexes and tools share; ``load_products`` reads
JSON, JSON Lines, CSV and Parquet files (reporting bad rows); ``tau_catalog`` maps tau-bench's
retail products; ``synthetic_catalog`` streams any number of realistic products for tests and
benchmarks.
"""

from __future__ import annotations

from .loaders import LoadReport, RowProblem, load_products
from .product import Product, Variant
from .synthetic import synthetic_catalog
from .tau import tau_catalog

__all__ = [
    "LoadReport",
    "Product",
    "RowProblem",
    "Variant",
    "load_products",
    "synthetic_catalog",
    "tau_catalog",
]
