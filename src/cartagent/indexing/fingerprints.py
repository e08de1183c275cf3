"""Product fingerprints: :func:`content_hash`, and the :class:`FingerprintStore` of a build.

Equal fingerprints mean nothing an index reads changed. Incremental index builds compare them
to find the products to re-index (and, for dense retrieval, re-embed); every build engine
(local or Spark) must compute them with :func:`content_hash`. A build folder keeps its
products' fingerprints in ``fingerprints.sqlite`` (see :mod:`cartagent.retrieval.index_folder`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..catalog import Product

__all__ = ["FingerprintStore", "content_hash"]

_LOOKUP_CHUNK = 500  # ids per SQL query, under SQLite's bound-parameter limit


def content_hash(product: Product) -> str:
    """32 hex characters of SHA-256 over the product's canonical JSON (field order is fixed)."""
    return hashlib.sha256(product.model_dump_json().encode()).hexdigest()[:32]


class FingerprintStore:
    """Product id -> content hash in SQLite: looked up a batch at a time, never all in memory."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self.path = path

    @classmethod
    def create(cls, path: Path) -> FingerprintStore:
        """A new, empty store at ``path`` (replacing a file there).

        Writes are not synced as they go: the caller syncs the finished file, which is only
        trusted once a manifest names it.
        """
        path = Path(path)
        path.unlink(missing_ok=True)
        connection = sqlite3.connect(path.absolute().as_uri(), uri=True)
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(
            "CREATE TABLE fingerprints (id TEXT PRIMARY KEY, hash TEXT NOT NULL) WITHOUT ROWID"
        )
        return cls(connection, path)

    @classmethod
    def open(cls, path: Path) -> FingerprintStore:
        """The store at ``path``, read-only."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no fingerprint store at {path}")
        connection = sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True)
        return cls(connection, path)

    def __len__(self) -> int:
        row = self._connection.execute("SELECT count(*) FROM fingerprints").fetchone()
        return int(row[0])

    def add(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Store ``(id, hash)`` pairs (ids must be new to the store)."""
        self._connection.executemany("INSERT INTO fingerprints (id, hash) VALUES (?, ?)", pairs)

    def lookup(self, ids: Sequence[str]) -> dict[str, str]:
        """The hash of each of ``ids`` the store has."""
        found: dict[str, str] = {}
        for start in range(0, len(ids), _LOOKUP_CHUNK):
            chunk = ids[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._connection.execute(
                f"SELECT id, hash FROM fingerprints WHERE id IN ({marks})", chunk
            )
            found.update(rows)
        return found

    def hashes(self) -> set[str]:
        """Every stored hash."""
        return {row[0] for row in self._connection.execute("SELECT hash FROM fingerprints")}

    def missing(self, newer: FingerprintStore) -> list[str]:
        """The ids this store has and ``newer`` lacks (products a build removed)."""
        newer.commit()
        self._connection.execute(
            "ATTACH DATABASE ? AS newer", (newer.path.absolute().as_uri() + "?mode=ro",)
        )
        try:
            rows = self._connection.execute(
                "SELECT id FROM fingerprints EXCEPT SELECT id FROM newer.fingerprints"
            ).fetchall()
        finally:
            self._connection.execute("DETACH DATABASE newer")
        return [row[0] for row in rows]

    def commit(self) -> None:
        self._connection.commit()

    def close(self) -> None:
        """Commit what was added and close the database."""
        self._connection.commit()
        self._connection.close()
