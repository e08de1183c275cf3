"""The sandbox's engines: PostgreSQL's pool serves requests from a fixed set of connections and
replaces one the server closed without a failed request or a ping per checkout."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from cartagent.cli.sandbox import sandbox as sandbox_command
from cartagent.sandbox.engine import DEFAULT_POOL_SIZE, create_engine, request_slots


def test_the_cli_default_pool_is_the_sandboxs() -> None:
    option = next(p for p in sandbox_command.params if p.name == "pool_size")
    assert option.default == DEFAULT_POOL_SIZE


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
