"""Where cartagent's data files are.

Data cartagent needs at run time ships inside the package and is found with
:mod:`importlib.resources`, so an installed wheel works from any folder: :func:`tau_retail` is
the tau-bench retail store (MIT, see ``tau-bench-retail/NOTICE``), the default catalog of
``cartagent search`` and the demo store ``cartagent sandbox seed`` loads. Development data that
does not ship (the WebShop instructions ``cartagent eval`` compares with) is looked up in the
project's ``shared/data`` beside the checkout only: :func:`shared_file`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["TAU_RETAIL", "WEBSHOP_DEV", "shared_file", "tau_retail"]

TAU_RETAIL = "tau-bench-retail"
WEBSHOP_DEV = Path("webshop", "goal_query_map.dev.json")


def tau_retail() -> Path:
    """The tau-bench retail folder shipped with cartagent (products, users, orders JSON)."""
    return _packaged(TAU_RETAIL)


def shared_file(relative: str | Path) -> Path | None:
    """``relative`` under ``shared/data`` beside the current folder or in it (a development
    checkout: the repository and ``shared/`` side by side), else ``None``."""
    for root in (Path.cwd().parent, Path.cwd()):
        candidate = root / "shared" / "data" / relative
        if candidate.exists():
            return candidate.resolve()
    return None


def _packaged(name: str) -> Path:
    found = resources.files(__package__).joinpath(name)
    # Callers hand these folders to code that opens files by path (tantivy, SQL seeding).
    if not isinstance(found, Path) or not found.is_dir():
        raise ConfigurationError(f"cartagent's packaged {name} data is missing (found {found})")
    return found
