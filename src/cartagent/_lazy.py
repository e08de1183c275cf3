"""Package faces that import their modules when a name is first used (PEP 562).

A package whose face names a server, a database layer and a client would otherwise load all
of them for whoever needs one: ``import cartagent.tools`` loaded the merchant server because
the toolkit uses the ACP client.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` whose names live in the modules
    ``names`` gives (relative, e.g. ``".client"``, or ``".client:OTHER"`` for a name the module
    spells differently); each is imported on first use and kept."""

    def attribute(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, spelled = where.partition(":")
        value = getattr(importlib.import_module(module, package), spelled or name)
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return attribute, listing
