"""The searcher a catalog gets by default: hybrid retrieval, its product vectors cached on disk.

Hybrid search (BM25 and MiniLM vectors, fused) ranks best on the labelled set, so it is what
``cartagent search``, ``search_products`` and the assistant use unless told otherwise. Embedding
the tau store takes seconds and a large catalog minutes, so the vectors are kept in
``<cache>/vectors/<key>/``, where the key is the SHA-256 of exactly what was embedded (each
product's id and field texts, the field weights, the embedder's kind and size): a changed
catalog gets new vectors, an unchanged one opens the saved ones in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

import orjson

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..catalog import Product
    from .dense import DenseIndex
    from .embeddings import Embedder
    from .search import Searcher, Understander

# The indexes (tantivy, numpy, faiss) are imported where they are used: the CLI imports this
# module for SEARCH_MODES on every start.

__all__ = [
    "SEARCH_MODES",
    "SearchMode",
    "cached_dense_index",
    "catalog_searcher",
    "index_searcher",
    "vectors_key",
]

SearchMode = Literal["lexical", "dense", "hybrid"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)


def vectors_key(products: Sequence[Product], embedder: Embedder) -> str:
    """The SHA-256 (hex) of what embedding ``products`` with ``embedder`` depends on."""
    from .dense import FORMAT_VERSION
    from .embeddings import embedder_id
    from .product_vectors import FIELD_WEIGHTS, product_fields

    digest = hashlib.sha256()
    made_by = [FORMAT_VERSION, embedder_id(embedder), embedder.dim, FIELD_WEIGHTS]
    digest.update(orjson.dumps(made_by, option=orjson.OPT_SORT_KEYS))
    for product in products:
        digest.update(orjson.dumps([product.id, product_fields(product)]))
        digest.update(b"\n")
    return digest.hexdigest()


def cached_dense_index(products: Sequence[Product], embedder: Embedder, cache: Path) -> DenseIndex:
    """``products``' dense index, opened from ``cache`` if it holds their vectors, else built
    and saved there (a half-written folder is never visible: it is renamed into place)."""
    from .dense import DenseIndex

    folder = cache / "vectors" / vectors_key(products, embedder)
    by_id = {p.id: p for p in products}
    if (folder / "dense.json").is_file():
        try:
            return DenseIndex.open(folder, embedder, products=by_id.get)
        except (OSError, ValueError):
            shutil.rmtree(folder, ignore_errors=True)  # unreadable: made again below
    index = DenseIndex.build(products, embedder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        index.save(staging)
        os.replace(staging, folder)
    except OSError:
        # Another process saved the same vectors first (or the cache is read-only): this
        # index is built either way; the next run opens theirs.
        shutil.rmtree(staging, ignore_errors=True)
    return index


def catalog_searcher(
    products: Sequence[Product],
    understand: Understander,
    *,
    mode: SearchMode = "hybrid",
    cache: Path | None = None,
    embedder: Callable[[], Embedder] | None = None,
    query_cache: int = 4096,
) -> Searcher:
    """A searcher over ``products`` in ``mode``; dense and hybrid embed with ``embedder()``
    (default: :data:`~cartagent.retrieval.embeddings.DEFAULT_EMBEDDER`), their vectors cached
    under ``cache`` (None: built in memory only; converted models go to ``cache/models``).
    The vectors of the last ``query_cache`` query texts are kept (0: none).

    Raises :class:`ConfigurationError` for an unknown mode or a missing embedding model.
    """
    from .catalog_vocabulary import CatalogVocabulary, GroundedUnderstander
    from .dense import DenseIndex
    from .lexical import LexicalIndex
    from .search import Searcher

    if mode not in SEARCH_MODES:
        raise ConfigurationError(
            f"unknown search mode {mode!r}; choose one of {', '.join(SEARCH_MODES)}"
        )
    from .rules import parse

    vocabulary = CatalogVocabulary(products)
    # Beside a model, the rule parser reads each request too: the reading that asks for fewer
    # values the catalog lacks is kept.
    check = None if understand is parse else parse
    understand = GroundedUnderstander(understand, vocabulary, check=check)
    if mode == "lexical":
        return Searcher(LexicalIndex.build(products), understand=understand, vocabulary=vocabulary)
    if embedder is None:
        from .embeddings import DEFAULT_EMBEDDER, EmbedderOptions, get_embedder, minilm_model_dir

        try:
            minilm_model_dir()
        except FileNotFoundError as error:
            raise ConfigurationError(f"{mode} search needs MiniLM: {error}") from None
        options = EmbedderOptions(model_cache=cache / "models" if cache is not None else None)
        made = get_embedder(DEFAULT_EMBEDDER, options)
    else:
        made = embedder()
    dense = (
        cached_dense_index(products, made, cache)
        if cache is not None
        else DenseIndex.build(products, made)
    )
    if query_cache:
        dense.cache_queries(query_cache)
    from .uses import EmbedderEncoder, KindsByUse, catalog_kinds, e5_encoder

    uses = KindsByUse(
        catalog_kinds(products),
        english=lambda: EmbedderEncoder(made),
        other=e5_encoder,
    )
    if mode == "dense":
        return Searcher(dense, understand=understand, vocabulary=vocabulary, uses=uses)
    lexical = LexicalIndex.build(products)
    return Searcher(lexical, understand=understand, dense=dense, vocabulary=vocabulary, uses=uses)


def index_searcher(
    folder: Path,
    understand: Understander,
    *,
    model_cache: Path | None = None,
    query_cache: int = 4096,
) -> Searcher:
    """A searcher over the index ``folder`` a catalog build wrote (hybrid when it is dense),
    embedding queries with the embedder the build recorded (converted models are kept in
    ``model_cache``), the vectors of the last ``query_cache`` query texts kept (0: none).

    Raises :class:`ConfigurationError` when the folder holds no readable build or names an
    embedder this cartagent does not have.
    """
    from .embeddings import EMBEDDERS, EmbedderOptions
    from .index_folder import open_index, read_manifest
    from .search import Searcher

    try:
        manifest = read_manifest(folder)
        embedder = None
        if manifest.embedder is not None:
            make = EMBEDDERS.get(manifest.embedder.name)
            if make is None:
                raise ConfigurationError(
                    f"{folder} was embedded with {manifest.embedder.name!r}, which this "
                    f"cartagent does not have (it has: {', '.join(sorted(EMBEDDERS))})"
                )
            embedder = make(EmbedderOptions(threads=1, model_cache=model_cache))
        stored = open_index(folder, embedder=embedder)
    except (OSError, ValueError) as error:
        raise ConfigurationError(str(error)) from error
    if stored.dense is not None and query_cache:
        stored.dense.cache_queries(query_cache)
    return Searcher(stored.lexical, understand=understand, dense=stored.dense)
