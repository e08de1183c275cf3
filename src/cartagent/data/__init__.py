"""Where cartagent's data files are.

All the data cartagent reads ships inside the package and is found with
:mod:`importlib.resources`, so a clone and an installed wheel work alike, from any folder:
:func:`tau_retail` is the tau-bench retail store (MIT, see ``tau-bench-retail/NOTICE``), the
default catalog of ``cartagent search`` and the demo store ``cartagent sandbox seed`` loads;
:func:`webshop_dev` is WebShop's shopper instructions with the queries people typed for them
(MIT, see ``webshop/NOTICE``), which ``cartagent eval`` compares with and ``cartagent tune
data`` holds out.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["TAU_RETAIL", "WEBSHOP_DEV", "tau_retail", "webshop_dev"]

TAU_RETAIL = "tau-bench-retail"
WEBSHOP_DEV = "webshop/goal_query_map.dev.json"


def tau_retail() -> Path:
    """The tau-bench retail folder shipped with cartagent (products, users, orders JSON)."""
    return _packaged(TAU_RETAIL, folder=True)


def webshop_dev() -> Path:
    """The WebShop development instructions shipped with cartagent (``goal_query_map`` JSON:
    each instruction with the queries shoppers typed for it)."""
    return _packaged(WEBSHOP_DEV, folder=False)


def _packaged(name: str, *, folder: bool) -> Path:
    found = resources.files(__package__).joinpath(name)
    # Callers hand these to code that opens files by path (tantivy, SQL seeding).
    if not isinstance(found, Path) or not (found.is_dir() if folder else found.is_file()):
        raise ConfigurationError(f"cartagent's packaged {name} data is missing (found {found})")
    return found
