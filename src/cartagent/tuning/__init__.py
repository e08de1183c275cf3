"""Tuning the query-understanding model; this first part builds its training data.

``training_catalog`` gathers products (a catalog file or folder, synthetic ones); ``build_dataset``
writes examples from them in named phrasing families (``FAMILIES``), drops duplicates and
held-out requests (``held_out_requests``), splits by template and by product, and
``write_dataset`` saves the JSON Lines files with their data card.
"""

from __future__ import annotations

from .card import DataCard
from .dataset import SPLITS, Dataset, TrainingExample, build_dataset, write_dataset
from .families import FAMILIES, Family, Template
from .holdout import HeldOut, held_out_requests
from .sources import Catalog, training_catalog

__all__ = [
    "FAMILIES",
    "SPLITS",
    "Catalog",
    "DataCard",
    "Dataset",
    "Family",
    "HeldOut",
    "Template",
    "TrainingExample",
    "build_dataset",
    "held_out_requests",
    "training_catalog",
    "write_dataset",
]
