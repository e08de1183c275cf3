"""What a newcomer gets wrong at startup is a one-line error, not a traceback: a PostgreSQL URL
naming a missing database (or no server), a port already taken; and a sandbox already running
where a server would start its own is used instead."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from cartagent.child_process import SandboxProcess, free_port
from cartagent.cli.main import cli
from cartagent.database import create_engine
from cartagent.errors import ConfigurationError
from cartagent.sandbox.engine import create_engine as sandbox_engine
from tests.conftest import POSTGRES_ADMIN_URL, _no_postgres

MISSING = f"cartagent_missing_{uuid.uuid4().hex[:8]}"
MCP_CREDENTIALS = ["--token", "t" * 32, "--client-id", "c", "--client-secret", "s"]


@pytest.fixture
def postgres_server() -> sa.URL:
    """The test PostgreSQL server's URL (its admin database); skipped when none answers."""
    url = sa.make_url(POSTGRES_ADMIN_URL)
    try:
        psycopg.connect(POSTGRES_ADMIN_URL, connect_timeout=5).close()
    except psycopg.OperationalError as error:
        reason = str(error).strip().splitlines()[0]
    else:
        return url
    _no_postgres(reason)


def clean_error(result: Result) -> str:
    """The message of a run that failed as a click error should: exit 1, no traceback."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.output


# A PostgreSQL URL naming no database, or no server


@pytest.mark.parametrize(
    "args",
    [["sandbox", "--db", "{url}"], ["sandbox", "--db", "{url}", "migrate"]],
    ids=["sandbox", "sandbox-migrate"],
)
def test_a_missing_postgresql_database_is_named_with_the_command_that_creates_it(
    environment: dict[str, str], postgres_server: sa.URL, args: list[str]
) -> None:
    url = postgres_server.set(database=MISSING).render_as_string(hide_password=False)
    result = CliRunner().invoke(cli, [arg.format(url=url) for arg in args])
    where = f"{postgres_server.host}:{postgres_server.port or 5432}"
    assert f'database "{MISSING}" does not exist on {where}; create it with: createdb' in (
        clean_error(result)
    )
    assert f"-U {postgres_server.username} {MISSING}" in result.output


def test_merchant_names_a_missing_checkout_database(
    environment: dict[str, str], postgres_server: sa.URL
) -> None:
    url = postgres_server.set(database=MISSING).render_as_string(hide_password=False)
    args = ["merchant", "--port", str(free_port()), "--db", url]
    result = CliRunner().invoke(cli, args)
    assert f'database "{MISSING}" does not exist' in clean_error(result)


def test_a_postgresql_server_that_does_not_answer_is_said_so(
    environment: dict[str, str],
) -> None:
    port = free_port()
    url = f"postgresql://postgres@127.0.0.1:{port}/shop"
    result = CliRunner().invoke(cli, ["sandbox", "--db", url])
    message = f"no PostgreSQL server answers at 127.0.0.1:{port} (connection refused)"
    assert message in clean_error(result)


@pytest.mark.parametrize("make", [create_engine, sandbox_engine], ids=["cartagent", "sandbox"])
def test_only_a_first_connection_failure_is_explained(postgres_server: sa.URL, make: Any) -> None:
    """A server gone after the first connection is an outage: SQLAlchemy's errors stay, for
    callers that handle them."""
    engine = make(postgres_server.render_as_string(hide_password=False))
    failing = {"now": True}

    def connect(*_: Any) -> None:
        if failing["now"]:
            raise psycopg.OperationalError(
                'connection to server at "127.0.0.1", port 5432 failed: Connection refused'
            )

    sa.event.listen(engine, "do_connect", connect)
    try:
        with pytest.raises(ConfigurationError, match="no PostgreSQL server answers"):
            engine.connect()
        failing["now"] = False
        engine.connect().close()
        engine.dispose()
        failing["now"] = True
        with pytest.raises(sa.exc.OperationalError):
            engine.connect()
    finally:
        engine.dispose()


# A port already taken


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something other than cartagent listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize(
    ("args", "command", "option"),
    [
        (["sandbox", "--port", "{port}"], "sandbox", "--port"),
        (
            ["mcp", "--transport", "http", "--port", "{port}", *MCP_CREDENTIALS],
            "mcp",
            "--port",
        ),
        (["merchant", "--port", "{port}"], "merchant", "--port"),
        (["merchant", "--port", "{free}", "--mcp-port", "{port}"], "merchant", "--mcp-port"),
        (
            ["merchant", "--port", "{free}", "--ucp-mcp-port", "{port}"],
            "merchant",
            "--ucp-mcp-port",
        ),
        (["serve", "--port", "{port}"], "serve", "--port"),
    ],
    ids=["sandbox", "mcp", "merchant", "merchant-mcp", "merchant-ucp-mcp", "serve"],
)
def test_a_taken_port_is_said_so_before_anything_starts(
    environment: dict[str, str], taken_port: int, args: list[str], command: str, option: str
) -> None:
    given = [arg.format(port=taken_port, free=free_port()) for arg in args]
    result = CliRunner().invoke(cli, given)
    assert (
        f"127.0.0.1:{taken_port} is already in use (is another cartagent {command} running?); "
        f"stop it or choose another {option}"
    ) in clean_error(result)


# The sandbox beside a server


class _NotASandbox(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[int]:
    """An HTTP server that is not a sandbox, on a port of its own."""
    server = HTTPServer(("127.0.0.1", 0), _NotASandbox)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command", ["merchant", "serve"])
def test_a_sandbox_port_held_by_something_else_is_said_so(
    environment: dict[str, str],
    other_server: int,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    monkeypatch.setenv("CARTAGENT_SANDBOX_PORT", str(other_server))
    result = CliRunner().invoke(cli, [command, "--port", str(free_port())])
    assert (
        f"127.0.0.1:{other_server} is already in use (not by a cartagent sandbox); stop it or "
        "choose another port for the sandbox with CARTAGENT_SANDBOX_PORT"
    ) in clean_error(result)


@pytest.fixture
def running_sandbox(environment: dict[str, str]) -> Iterator[SandboxProcess]:
    """``cartagent sandbox`` on the environment's port and database, as ``make run`` leaves
    one."""
    port = int(environment["CARTAGENT_SANDBOX_PORT"])
    local = SandboxProcess(
        environment["CARTAGENT_SANDBOX_DB"],
        client_id="cartagent-sandbox-client",
        client_secret="cartagent-sandbox-secret",
        port=port,
    )
    with local:
        yield local


class _Served(Exception):
    """Raised where the command would start serving: the test has seen what it needs."""


def _stop(*_: Any, **__: Any) -> None:
    raise _Served


def test_merchant_uses_the_sandbox_already_running_on_its_port(
    running_sandbox: SandboxProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cartagent.cli.merchant._sandbox_process", _stop)
    monkeypatch.setattr("cartagent.web.server.serve_together", _stop)
    result = CliRunner().invoke(cli, ["merchant", "--port", str(free_port())])
    assert isinstance(result.exception, _Served), result.output
    assert f"using the sandbox already running at {running_sandbox.base_url}" in result.output
    assert "PayPal sandbox on" not in result.output
    assert "address already in use" not in result.output


def test_serve_uses_the_sandbox_already_running_on_its_port(
    running_sandbox: SandboxProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cartagent.cli.serve._sandbox_app", _stop)
    monkeypatch.setattr("cartagent.cli.serve.build_assistant", _stop)
    result = CliRunner().invoke(cli, ["serve", "--port", str(free_port())])
    assert isinstance(result.exception, _Served), result.output
    assert f"using the sandbox already running at {running_sandbox.base_url}" in result.output
    # the one line said, before the assistant is built (build_assistant stops the run here)
    assert result.output.count("sandbox") == 1
