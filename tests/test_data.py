"""The data cartagent ships: the tau-bench store is in the package, identical to its source."""

from __future__ import annotations

from pathlib import Path

import pytest

import cartagent.data
from cartagent.data import WEBSHOP_DEV, shared_file, tau_retail
from tests.conftest import SHARED

FILES = ("products.json", "users.json", "orders.json", "LICENSE")


def test_the_tau_store_ships_inside_the_package() -> None:
    folder = tau_retail()
    assert folder.parent == Path(cartagent.data.__file__).parent
    assert all((folder / name).is_file() for name in (*FILES, "NOTICE"))


@pytest.mark.skipif(not (SHARED / "data").is_dir(), reason="needs ../shared/data")
def test_the_shipped_tau_store_is_the_shared_one_unchanged() -> None:
    source = SHARED / "data" / "tau-bench-retail"
    for name in FILES:
        assert (tau_retail() / name).read_bytes() == (source / name).read_bytes(), name


def test_development_data_is_found_beside_the_checkout_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shared_file(WEBSHOP_DEV) is None
    (tmp_path / "shared" / "data" / "webshop").mkdir(parents=True)
    (tmp_path / "shared" / "data" / WEBSHOP_DEV).write_text("{}")
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)
    assert shared_file(WEBSHOP_DEV) == tmp_path / "shared" / "data" / WEBSHOP_DEV
