"""Shared inputs for the tuning tests: the tau-bench store, held-out sets, one small data set."""

from __future__ import annotations

import pytest

from cartagent.catalog import Product
from cartagent.tuning import Dataset, HeldOut, build_dataset, held_out_requests, training_catalog
from tests.conftest import TAU, WEBSHOP


@pytest.fixture(scope="package")
def products() -> tuple[Product, ...]:
    return training_catalog(TAU, 150, seed=7).products


@pytest.fixture(scope="package")
def held_out() -> HeldOut:
    return held_out_requests(WEBSHOP)


@pytest.fixture(scope="package")
def dataset(products: tuple[Product, ...], held_out: HeldOut) -> Dataset:
    return build_dataset(products, size=1500, seed=7, held_out=held_out)
