"""PostgreSQL plans that must not depend on the table's statistics.

A fresh database has none until autovacuum's first ANALYZE, and the sandbox serves requests from
its first second: a query planned as a scan of every resource then costs more with each order
taken (``bench sandbox`` at 32 clients: 4.4 PostgreSQL CPU ms per flow instead of 1.9).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from cartagent.sandbox.database import migrate
from cartagent.sandbox.engine import create_engine
from cartagent.sandbox.store import _DESCENDANTS_POSTGRES
from tests.conftest import BACKENDS, _drop_postgres_database, _postgres_database

# PostgreSQL's own query plans: nothing here runs on SQLite.
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif("postgresql" not in BACKENDS, reason="PostgreSQL only"),
]


@pytest.fixture
def engine() -> Iterator[sa.Engine]:
    name = f"cartagent_plans_{os.getpid()}"
    engine = create_engine(_postgres_database(name), pool_size=1)
    try:
        migrate(engine)
        yield engine
    finally:
        engine.dispose()
        _drop_postgres_database(name)


def test_sandbox_connections_do_not_jit_compile(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SHOW jit").scalar() == "off"


def test_an_orders_payments_are_found_through_the_parent_index_without_statistics(
    engine: sa.Engine,
) -> None:
    with engine.begin() as conn:
        # No ANALYZE may run: the planner sees the table as a fresh sandbox's is.
        conn.exec_driver_sql("ALTER TABLE resources SET (autovacuum_enabled = false)")
        conn.exec_driver_sql(
            "INSERT INTO resources (id, kind, merchant_id, status, parent_id, created_at,"
            " updated_at, data)"
            " SELECT 'R' || i, CASE WHEN mod(i, 2) = 0 THEN 'order' ELSE 'capture' END, 'M', '',"
            " CASE WHEN mod(i, 2) = 1 THEN 'R' || (i + 1) END, now(), now(), '{}'"
            " FROM generate_series(1, 20000) AS i"
        )
        analyzed = conn.exec_driver_sql(
            "SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL"
            " FROM pg_stat_user_tables WHERE relname = 'resources'"
        ).scalar()
        assert not analyzed
        sql = "EXPLAIN " + _DESCENDANTS_POSTGRES.replace("?", "%s")
        plan = "\n".join(row[0] for row in conn.exec_driver_sql(sql, ("R2", 3)))
        found = conn.exec_driver_sql(_DESCENDANTS_POSTGRES.replace("?", "%s"), ("R2", 3)).fetchall()
    assert "Seq Scan on resources" not in plan, plan
    assert "ix_resources_parent" in plan, plan
    assert [row.id for row in found] == ["R1"]
