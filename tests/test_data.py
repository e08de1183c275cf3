"""The data cartagent ships: in the package, identical to its published source.

The digests are of the upstream files (tau-bench ``tau_bench/envs/retail/data/``, WebShop's
``goal_query_map`` development selection), so a changed copy fails here, with nothing read from
outside the clone.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import cartagent.data
from cartagent.data import tau_retail, webshop_dev

# `sha256sum` of the upstream files, checked against the copies under src/cartagent/data/.
UPSTREAM = """
a9eabcc1a9742c5f5288c2779acce52b9308423383ed24706bbaf0889f762a0f  tau-bench-retail/products.json
6f4fd104cc5e80b92166c4035315c31532c6cea52a90dcdf18425ee7f87c2b82  tau-bench-retail/users.json
2598a12586d28f2d6bd16bc86f4c800029b6af18e0abb5c475ef5c869c11ced1  tau-bench-retail/orders.json
243d23d45b80122b5ac575586ccef352fdc9c45e6d7d2605449aca8a17478b42  tau-bench-retail/LICENSE
460c2bc339a9bdd966f5129460fdc770b4bbf5e3638b9370b26a6904d24c33bd  webshop/goal_query_map.dev.json
8872dbf8660b00890b5e07ce1ea1f7a44fa7ae4e1857da56caba172b51dab3cb  webshop/LICENSE.md
"""
DIGESTS = {
    name: digest for digest, name in (line.split() for line in UPSTREAM.strip().splitlines())
}
PACKAGE = Path(cartagent.data.__file__).parent


def test_the_tau_store_and_the_webshop_set_ship_inside_the_package() -> None:
    assert tau_retail() == PACKAGE / "tau-bench-retail"
    assert webshop_dev() == PACKAGE / "webshop" / "goal_query_map.dev.json"
    for folder in (tau_retail(), webshop_dev().parent):
        assert (folder / "NOTICE").is_file(), folder


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_each_shipped_file_is_its_source_unchanged(name: str) -> None:
    assert hashlib.sha256((PACKAGE / name).read_bytes()).hexdigest() == DIGESTS[name]
