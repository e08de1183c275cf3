"""Where the products come from, and the errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.tuning import training_catalog
from tests.conftest import TAU


def test_a_folder_and_synthetic_products_are_combined() -> None:
    catalog = training_catalog(TAU, 20, seed=3)
    assert len(catalog.products) == 70
    assert catalog.origins == (
        "tau-bench-retail: 50 products",
        "synthetic_catalog(20, seed=3): 20 products",
    )


def test_a_missing_catalog_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        training_catalog(tmp_path / "nowhere", 0, seed=0)


def test_negative_synthetic_or_no_products_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="negative"):
        training_catalog(None, -1, seed=0)
    with pytest.raises(ConfigurationError, match="no products"):
        training_catalog(None, 0, seed=0)
