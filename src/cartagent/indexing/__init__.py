"""Index building: a catalog source into the search index folder :mod:`cartagent.retrieval`
opens.

``build_index(source, out)`` writes (or incrementally updates) a build folder; an engine reads,
validates, fingerprints and embeds the source for it: ``LocalEngine`` in this process,
streaming, or the Spark engine (``get_engine("spark", ...)``, needs PySpark) on a cluster.
Both hand the index writers the same :class:`PreparedBatch` es, so they build identical indexes.
"""

from __future__ import annotations

from .build import BuildReport, build_index
from .engines import ENGINES, get_engine
from .fingerprints import content_hash
from .local_engine import LocalEngine
from .prepared import Engine, PreparedBatch, ProblemSink

__all__ = [
    "ENGINES",
    "BuildReport",
    "Engine",
    "LocalEngine",
    "PreparedBatch",
    "ProblemSink",
    "build_index",
    "content_hash",
    "get_engine",
]
