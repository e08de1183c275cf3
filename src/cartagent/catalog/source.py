"""Which catalog a command reads: the one it is given, else the tau-bench store cartagent ships."""

from __future__ import annotations

import os
from pathlib import Path

from ..data import tau_retail
from ..errors import ConfigurationError
from .tau import TAU_PRODUCTS

__all__ = ["locate_catalog", "rows_file"]


def locate_catalog(path: str | os.PathLike[str] | None) -> Path:
    """``path`` (which must exist): a products file or a tau-bench retail folder; ``None``:
    the tau-bench retail store packaged with cartagent."""
    if path is None:
        return tau_retail()
    found = Path(path).expanduser()
    if not found.exists():
        raise ConfigurationError(f"{found} does not exist")
    return found


def rows_file(path: Path) -> Path:
    """The file whose lines a bad row's report numbers: a tau-bench folder's products file."""
    return path / TAU_PRODUCTS if path.is_dir() else path
