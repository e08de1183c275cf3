"""Private files and folders: 0600 and 0700 whatever the umask, companions included, and an
existing folder that may be anyone's left alone."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cartagent.files import private_file, private_folder


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """The usual umask (022): files and folders would be world-readable unless the code says
    otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_folder_and_its_missing_parents_are_0700(tmp_path: Path) -> None:
    folder = private_folder(tmp_path / "a" / "b" / "c")
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", folder)] == [0o700] * 3


def test_an_existing_folder_is_left_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    private_folder(shared)
    assert mode(shared) == 0o755


def test_a_private_file_is_created_0600_in_a_0700_folder(tmp_path: Path) -> None:
    path = private_file(tmp_path / "data" / "merchant.db")
    assert path.read_bytes() == b""
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)


def test_an_existing_file_and_its_companions_are_tightened_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    path.write_bytes(b"rows")
    companion = tmp_path / "chat.db-wal"
    companion.write_bytes(b"log")
    for file in (path, companion):
        file.chmod(0o644)
    private_file(path, ("-wal", "-shm"))
    assert (mode(path), mode(companion)) == (0o600, 0o600)
    assert path.read_bytes() == b"rows" and companion.read_bytes() == b"log"
    assert not (tmp_path / "chat.db-shm").exists()  # only existing companions are touched
