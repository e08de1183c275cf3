"""``bench sandbox`` and ``bench merchant`` drop and create a PostgreSQL database: they say
which first, and only ever one whose name the bench chose (``cartagent_bench...``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from cartagent.bench import merchant, sandbox
from cartagent.bench.sandbox import describe_database, fresh_postgres_database
from cartagent.cli.main import cli
from cartagent.errors import ConfigurationError
from tests.conftest import BACKENDS, POSTGRES_ADMIN_URL, _drop_postgres_database

NOWHERE = "postgresql://postgres@127.0.0.1:1"  # nothing listens: a connection would fail


@pytest.fixture
def dropped(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The databases the benches recreate (each also said on stderr), with no server and no
    run: the runs measure nothing."""
    urls: list[str] = []

    def fresh(url: str) -> None:
        urls.append(url)
        print("RECREATED", file=sys.stderr)

    def no_runs(*args: Any, **kwargs: Any) -> list[Any]:
        return []

    monkeypatch.setattr(sandbox, "fresh_postgres_database", fresh)
    monkeypatch.setattr(sandbox, "run_backend", no_runs)
    monkeypatch.setattr(merchant, "run_backend", no_runs)
    return urls


def test_bench_sandbox_says_which_database_it_recreates_before_it_does(
    dropped: list[str],
) -> None:
    url = f"{NOWHERE}/cartagent_bench"
    result = CliRunner().invoke(cli, ["bench", "sandbox", "--no-sqlite", "--postgres", url])
    assert result.exit_code == 0, result.output
    said = "PostgreSQL: recreating database cartagent_bench on 127.0.0.1:1 (--postgres '' to skip)"
    assert said in result.stderr
    assert result.stderr.index(said) < result.stderr.index("RECREATED")
    assert dropped == [url]


def test_bench_merchant_says_which_database_it_recreates_before_it_does(
    dropped: list[str],
) -> None:
    url = f"{NOWHERE}/cartagent_bench_merchant"
    args = ["bench", "merchant", "--backend", "postgresql", "--postgres", url, "--no-sandbox"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    said = (
        "PostgreSQL: recreating database cartagent_bench_merchant on 127.0.0.1:1 "
        "(leave postgresql out of --backend to skip)"
    )
    assert said in result.stderr
    assert result.stderr.index(said) < result.stderr.index("RECREATED")
    assert dropped == [url]


def test_sqlite_only_benches_say_nothing_of_postgresql(dropped: list[str]) -> None:
    result = CliRunner().invoke(cli, ["bench", "merchant", "--no-sandbox", "--duration", "1"])
    assert result.exit_code == 0, result.output
    assert "PostgreSQL" not in result.stderr and dropped == []


@pytest.mark.parametrize(
    ("command", "extra"),
    [("sandbox", ["--no-sqlite"]), ("merchant", ["--backend", "postgresql", "--no-sandbox"])],
)
@pytest.mark.parametrize("name", ["postgres", "cartagent", "shop_bench", "cartagent_benchmark"])
def test_a_database_the_bench_did_not_name_is_refused_before_anything_runs(
    dropped: list[str], command: str, extra: list[str], name: str
) -> None:
    args = ["bench", command, *extra, "--postgres", f"{NOWHERE}/{name}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "Invalid value for --postgres" in result.output
    assert f"database '{name}' is not one the bench may drop" in result.output
    assert "cartagent_bench" in result.output and "Traceback" not in result.output
    assert dropped == [] and "recreating" not in result.stderr


@pytest.mark.parametrize("command", ["sandbox", "merchant"])
def test_the_help_says_the_database_is_dropped_and_which_names_it_takes(command: str) -> None:
    result = CliRunner().invoke(cli, ["bench", command, "--help"])
    text = " ".join(result.output.split())
    assert "dropped and created afresh, so its name must start with cartagent_bench" in text


def test_the_database_is_described_by_name_host_and_port() -> None:
    assert describe_database(f"{NOWHERE}/cartagent_bench_x") == "cartagent_bench_x on 127.0.0.1:1"
    assert describe_database("postgresql://db.internal/cartagent_bench") == (
        "cartagent_bench on db.internal:5432"
    )
    assert describe_database("postgresql:///cartagent_bench") == (
        "cartagent_bench on the local socket"
    )


@pytest.mark.parametrize(
    "url",
    [f"{NOWHERE}/postgres", f"{NOWHERE}/", f'{NOWHERE}/cartagent_bench"x', "not a url"],
)
def test_fresh_postgres_database_refuses_before_connecting(url: str) -> None:
    with pytest.raises(ConfigurationError):
        fresh_postgres_database(url)


def test_with_no_postgresql_server_the_bench_says_so_instead_of_a_traceback() -> None:
    with pytest.raises(
        ConfigurationError, match=r"no PostgreSQL server answers at 127\.0\.0\.1:1 "
    ):
        fresh_postgres_database(f"{NOWHERE}/cartagent_bench")


def _admin(database: str = "postgres") -> sa.Engine:
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}"
    return sa.create_engine(
        url.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT"
    )


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="needs PostgreSQL")
def test_a_users_database_named_to_the_bench_keeps_its_tables() -> None:
    name = f"cartagent_keep_{os.getpid()}"
    admin = _admin()
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    theirs = _admin(name)
    try:
        with theirs.connect() as conn:
            conn.exec_driver_sql("CREATE TABLE orders (id int)")
        with pytest.raises(ConfigurationError, match="not one the bench may drop"):
            fresh_postgres_database(POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}")
        with theirs.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM orders").scalar() == 0
    finally:
        theirs.dispose()
        admin.dispose()
        _drop_postgres_database(name)
