"""cartagent's own SQLite databases (conversations, checkouts) are their owner's alone: the
file, SQLite's companions and a folder made for them."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from cartagent.assistant import ConversationStore
from cartagent.commerce import CheckoutRecords
from cartagent.database import create_engine


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """The usual umask (022): what SQLite makes would be world-readable (0644) unless the code
    says otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes(root: Path) -> dict[str, int]:
    """Every file and folder under ``root`` (itself included) and its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


def test_a_conversation_database_and_its_wal_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = ConversationStore.open(f"sqlite:///{data / 'chat.db'}")
    try:
        with store.engine.begin() as conn:  # a write, so the WAL and its index exist
            conn.execute(sa.text("CREATE TABLE IF NOT EXISTS probe (x INTEGER)"))
        found = modes(data)
        assert {"chat.db", "chat.db-wal", "chat.db-shm"} <= set(found)
        assert found == {name: 0o700 if name == "." else 0o600 for name in found}
    finally:
        store.close()


def test_a_checkout_database_is_0600_and_an_old_world_readable_one_is_tightened(
    tmp_path: Path,
) -> None:
    path = tmp_path / "merchant.db"
    engine = create_engine(f"sqlite:///{path}")
    CheckoutRecords(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE IF NOT EXISTS probe (x INTEGER)"))
    engine.dispose()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)  # as versions before this one left it
    create_engine(f"sqlite:///{path}").dispose()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
