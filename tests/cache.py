"""A content-keyed cache for what tests build once and only read: tiny models, built indexes.

Each entry is a folder ``.cache/cartagent-tests/<name>-<key>/`` in the clone (ignored by git),
where ``key`` hashes everything the entry is made from: the input files' bytes, the source of
the function that builds it, the versions of the libraries it calls. Change any of them and the
next run builds a new entry; nothing is invalidated by hand, and ``rm -rf .cache`` is always
safe. An entry is built in a temporary folder and renamed into place, so parallel workers that
build it at once all succeed and one copy stays; its files are then made read-only, so a test
that writes into an entry fails instead of changing what later tests read.

``CARTAGENT_TEST_CACHE=0`` builds every entry afresh in the run's temporary folder (a cold run).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

__all__ = ["CACHE", "cached_folder", "file_digest", "versions"]

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "cartagent-tests"
ENABLED = os.environ.get("CARTAGENT_TEST_CACHE", "1") not in ("", "0")


def file_digest(path: Path) -> str:
    """The SHA-256 of ``path``'s bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def versions(*distributions: str) -> str:
    """``name==version`` of each installed distribution: a key part for what they build."""
    return ",".join(f"{name}=={metadata.version(name)}" for name in distributions)


def cached_folder(
    name: str, build: Callable[[Path], None], key: Iterable[str], *, scratch: Path
) -> Path:
    """The folder ``build(folder)`` fills, from the cache when an entry for ``key`` (and the
    source of ``build``) is there; ``scratch`` is where a cold run (the cache off) builds."""
    if not ENABLED:
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch))
        build(folder)
        return folder
    digest = hashlib.sha256(inspect.getsource(build).encode())
    for part in key:
        digest.update(b"\0" + part.encode())
    folder = CACHE / f"{name}-{digest.hexdigest()[:16]}"
    if folder.is_dir():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=CACHE))
    try:
        build(partial)
        _read_only(partial)
        os.replace(partial, folder)
    except OSError:
        if not folder.is_dir():  # not another worker's copy that won the race: a real error
            raise
    finally:
        if partial.exists():
            _writable(partial)
            shutil.rmtree(partial)
    return folder


def _read_only(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def _writable(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
