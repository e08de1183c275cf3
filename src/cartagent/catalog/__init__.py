"""The product catalog: models, file loaders, the tau-bench catalog and a synthetic one.

``Product`` / ``Variant`` are what search indexes and tools share; ``iter_products`` streams
JSON, JSON Lines, CSV and Parquet files (reporting bad rows) and ``load_products`` loads them;
``iter_catalog`` / ``read_catalog`` read either such a file or a tau-bench retail folder;
``tau_catalog`` maps tau-bench's retail products; ``synthetic_catalog`` streams any number of
realistic products for tests and benchmarks. Index building lives in :mod:`cartagent.indexing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_face

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "LoadReport": ".loaders",
        "iter_products": ".loaders",
        "load_products": ".loaders",
        "PICTURE_TYPES": ".product",
        "Product": ".product",
        "Variant": ".product",
        "is_web_address": ".product",
        "RowProblem": ".rows",
        "iter_catalog": ".source",
        "read_catalog": ".source",
        "synthetic_catalog": ".synthetic",
        "tau_catalog": ".tau",
    },
)
