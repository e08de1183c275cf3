"""Index-build engines by name: ``get_engine("local")``, or ``get_engine("spark", ...)``."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigurationError
from .prepared import Engine

__all__ = ["ENGINES", "get_engine"]

ENGINES = ("local", "spark")


def get_engine(
    name: str, *, master: str | None = None, conf: Mapping[str, str] | None = None
) -> Engine:
    """The engine ``name``: ``local`` (this process), or ``spark`` on ``master`` (default
    ``local[*]``) with the Spark settings ``conf``. The caller closes it.

    Raises :class:`ConfigurationError` for an unknown name, or spark without PySpark installed.
    """
    if name == "local":
        from .local_engine import LocalEngine

        return LocalEngine()
    if name != "spark":
        raise ConfigurationError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    try:
        from .spark import SparkEngine
    except ImportError as error:
        raise ConfigurationError(
            f"the spark engine needs PySpark ({error}): pip install 'cartagent[spark]'"
        ) from None
    return SparkEngine(master or "local[*]", dict(conf) if conf else None)
