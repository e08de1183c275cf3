"""An index folder on disk: what ``cartagent catalog build`` writes and searches open.

::

    DIR/
      manifest.json        Manifest: format, source, engine, embedder, counts; written last
      lexical/             the tantivy index (stores the products)
      dense/               vectors, ids and HNSW graph (see DenseIndex.save); only when built
      fingerprints.sqlite  product id -> content hash, for incremental builds (see
                           cartagent.indexing.fingerprints, which writes it)

A folder without ``manifest.json`` is not a build. :func:`open_index` opens the lexical index
and, given the embedder the build used, the dense one (taking its products from the lexical
index, so only candidates are materialised).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigurationError
from .lexical import LexicalIndex

if TYPE_CHECKING:
    from .dense import DenseIndex
    from .embeddings import Embedder

__all__ = [
    "DENSE_FOLDER",
    "FINGERPRINTS_FILE",
    "FORMAT_VERSION",
    "LEXICAL_FOLDER",
    "MANIFEST_FILE",
    "BuildCounts",
    "EmbedderInfo",
    "Manifest",
    "StoredIndex",
    "open_index",
    "read_manifest",
]

FORMAT_VERSION = 1
"""Version of the folder layout; a build of another version is rebuilt, not updated."""

MANIFEST_FILE = "manifest.json"
LEXICAL_FOLDER = "lexical"
DENSE_FOLDER = "dense"
FINGERPRINTS_FILE = "fingerprints.sqlite"


class EmbedderInfo(BaseModel):
    """The embedder a dense index was built with (queries must be embedded with the same)."""

    model_config = ConfigDict(frozen=True)

    name: str
    dim: int


class BuildCounts(BaseModel):
    """What a build did to the products (``embedded`` counts products embedded this time)."""

    model_config = ConfigDict(frozen=True)

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0
    skipped_rows: int = 0


class Manifest(BaseModel):
    """``manifest.json``: what the folder holds and how it was built."""

    model_config = ConfigDict(frozen=True)

    format: int = FORMAT_VERSION
    source: str = Field(description="The catalog source, as an absolute path.")
    engine: str = Field(description="The engine that read it: local or spark.")
    embedder: EmbedderInfo | None = Field(description="None when there is no dense index.")
    products: int
    incremental: bool = Field(description="Whether the previous build was updated.")
    built_at: datetime
    seconds: float
    counts: BuildCounts
    stages: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds per stage: prepare (read, validate, embed), index, commit, dense.",
    )


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the build in ``folder``.

    Raises ``FileNotFoundError`` when ``folder`` holds no build and
    :class:`~cartagent.errors.ConfigurationError` when its manifest is of another format.
    """
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{folder} holds no catalog build (no {MANIFEST_FILE}); "
            "build one with `cartagent catalog build`"
        )
    try:
        manifest = Manifest.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise ConfigurationError(f"{path} is not a manifest this version reads: {error}") from None
    if manifest.format != FORMAT_VERSION:
        raise ConfigurationError(
            f"{folder} is a build of format {manifest.format}, not {FORMAT_VERSION}; rebuild it"
        )
    return manifest


@dataclass(frozen=True)
class StoredIndex:
    """An opened build: its manifest, lexical index and, when opened with one, dense index."""

    manifest: Manifest
    lexical: LexicalIndex
    dense: DenseIndex | None


def open_index(
    folder: Path,
    *,
    embedder: Embedder | None = None,
    ef_search: int = 64,
    min_score: float | None = None,
) -> StoredIndex:
    """Open the build in ``folder``; its dense part too when it has one and ``embedder`` is given.

    ``embedder`` must match the manifest's (``ConfigurationError`` otherwise); ``ef_search`` and
    ``min_score`` are passed to :meth:`~cartagent.retrieval.dense.DenseIndex.open`.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    lexical = LexicalIndex.open(folder / LEXICAL_FOLDER)
    dense = None
    if manifest.embedder is not None and embedder is not None:
        if embedder.dim != manifest.embedder.dim:
            raise ConfigurationError(
                f"{folder} was embedded with {manifest.embedder.name} "
                f"({manifest.embedder.dim} dimensions), not a {embedder.dim}-dimension embedder"
            )
        from .dense import DenseIndex

        try:
            dense = DenseIndex.open(
                folder / DENSE_FOLDER,
                embedder,
                products=lexical.get,
                ef_search=ef_search,
                min_score=min_score,
            )
        except ValueError as error:
            raise ConfigurationError(str(error)) from error
        dense.screen = lexical.screened
    return StoredIndex(manifest, lexical, dense)
