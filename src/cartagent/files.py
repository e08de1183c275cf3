"""Small file operations: hashing a file, replacing one atomically (the model caches), and
files and folders that only their owner may read (databases, keys, secrets)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["file_sha256", "private_file", "private_folder", "write_atomically"]

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


def private_folder(path: Path) -> Path:
    """Create ``path`` and each missing parent mode 0700 (whatever the umask); a folder that
    exists is left as it is (it may be anyone's: ``/tmp``, a mounted volume)."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process: theirs to set
            continue
        folder.chmod(0o700)
    return path


def private_file(path: Path, companions: tuple[str, ...] = ()) -> Path:
    """Make ``path`` a file only its owner may read or write (0600): created empty (in a
    :func:`private_folder`) if absent, else its mode tightened, its contents untouched; the
    same for each existing ``path`` + suffix of ``companions`` (e.g. SQLite's ``-wal``).

    An existing file is never opened: closing a descriptor of a SQLite database drops the
    locks other connections of this process hold on it.
    """
    private_folder(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for file in (path, *(path.with_name(path.name + suffix) for suffix in companions)):
        try:
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)
        except FileNotFoundError:
            continue
        except PermissionError:  # someone else's file: theirs to set
            continue
    return path
