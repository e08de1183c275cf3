"""The sandbox's engines: PostgreSQL's pool serves requests from a fixed set of connections and
replaces one the server closed without a failed request or a ping per checkout."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import click
import pytest
import sqlalchemy as sa

from cartagent.cli.bench import sandbox_bench
from cartagent.cli.sandbox import sandbox as sandbox_command
from cartagent.sandbox import ensure_merchant, open_sandbox
from cartagent.sandbox.engine import (
    DB_CALLS,
    DEFAULT_POOL_SIZE,
    calls_inline,
    create_engine,
    request_slots,
)
from cartagent.sandbox.store import Store

# Each dialect's pool, and where its database calls run (inline on SQLite, threads on PostgreSQL).
pytestmark = pytest.mark.postgres


def test_the_cli_default_pool_is_the_sandboxs() -> None:
    option = next(p for p in sandbox_command.params if p.name == "pool_size")
    assert option.default == DEFAULT_POOL_SIZE


def test_the_clis_offer_the_sandboxs_places_for_database_calls() -> None:
    for command in (sandbox_command, sandbox_bench):
        option = next(p for p in command.params if p.name == "db_calls")
        assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == DB_CALLS


@pytest.mark.parametrize(
    ("url", "inline"),
    [("sqlite:///{tmp}/x.db", True), ("postgresql://app@db.internal/shop", False)],
)
def test_database_calls_run_inline_on_sqlite_and_in_threads_on_postgresql_unless_asked(
    url: str, inline: bool, tmp_path: Path
) -> None:
    # Connects on first use only: no server is reached (a SQLite file is made private, in
    # the test's own folder, not wherever the tests run from).
    engine = create_engine(url.format(tmp=tmp_path))
    try:
        assert calls_inline(engine) is inline
        assert calls_inline(engine, "inline") is True
        assert calls_inline(engine, "threads") is False
        assert Store(engine, db_calls="threads").inline is False
        with pytest.raises(ValueError, match="db_calls must be one of auto, inline, threads"):
            calls_inline(engine, "fibers")
    finally:
        engine.dispose()


def test_requests_get_the_pool_size_and_sqlite_one_at_a_time(database_url: str) -> None:
    engine = create_engine(database_url, pool_size=3)
    try:
        assert request_slots(engine) == (1 if database_url.startswith("sqlite") else 3)
    finally:
        engine.dispose()


def test_a_pooled_connection_the_server_closed_is_replaced_at_checkout(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL server closes connections; SQLite has none")
    engine = create_engine(database_url, pool_size=1)
    admin = create_engine(database_url, pool_size=1)
    try:
        with engine.connect() as conn:
            first = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        with admin.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": first}).scalar()
            deadline = time.monotonic() + 10
            gone = sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = :p")
            while conn.execute(gone, {"p": first}).scalar() and time.monotonic() < deadline:
                conn.rollback()
                time.sleep(0.05)
        with engine.connect() as conn:  # no error: the dead connection is not handed out
            second = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        assert second != first
    finally:
        engine.dispose()
        admin.dispose()


def test_a_sandbox_makes_its_database_calls_where_it_is_told(
    database_url: str,
) -> None:
    from cartagent.sandbox import open_sandbox

    threads = open_sandbox(database_url, db_calls="threads")
    inline = open_sandbox(database_url, db_calls="inline")
    try:
        assert threads.store.inline is False and inline.store.inline is True
    finally:
        threads.store.engine.dispose()
        inline.store.engine.dispose()


def test_a_sandbox_database_and_its_companions_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # the usual umask: SQLite alone would make them 0644
    try:
        folder = tmp_path / "data" / "sandbox"
        sandbox = open_sandbox(f"sqlite:///{folder / 'sandbox.db'}")  # migrates: it writes
        ensure_merchant(sandbox, "modes", "secret")
        made = [folder, *folder.iterdir()]
        assert {p.name for p in made} >= {"sandbox.db", "sandbox.db-wal", "sandbox.db-shm"}
        assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
        assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in made} == {
            p.name: 0o700 if p == folder else 0o600 for p in made
        }
        sandbox.store.engine.dispose()
        (folder / "sandbox.db").chmod(0o644)  # as versions before this one left it
        create_engine(f"sqlite:///{folder / 'sandbox.db'}").dispose()
        assert stat.S_IMODE((folder / "sandbox.db").stat().st_mode) == 0o600
    finally:
        os.umask(previous)
