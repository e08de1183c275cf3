"""Small file operations the model caches share: hashing a file, replacing one atomically."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["file_sha256", "write_atomically"]

_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of ``path``'s contents, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one: a
    private temporary file beside it, renamed into place."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
