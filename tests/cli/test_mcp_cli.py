"""``cartagent mcp`` refuses to start on a bad configuration, with a clean message."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cartagent.cli.mcp import mcp, resolve_base_url
from cartagent.errors import ConfigurationError

CLEAN_ENV: dict[str, str | None] = {
    "CARTAGENT_MCP_TOKEN": None,
    "CARTAGENT_MCP_ISSUER": None,
    "CARTAGENT_MCP_JWKS_URL": None,
    "CARTAGENT_PAYPAL_BASE_URL": None,
    "CARTAGENT_PAYPAL_CLIENT_ID": None,
    "CARTAGENT_PAYPAL_CLIENT_SECRET": None,
    "CARTAGENT_MCP_ACTIONS": None,
}
CREDENTIALS = ["--client-id", "id", "--client-secret", "secret"]
ISSUER = "https://as.example"


def run(*args: str, **env: str) -> tuple[int, str]:
    result = CliRunner().invoke(mcp, list(args), env={**CLEAN_ENV, **env})
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "http", *CREDENTIALS], "needs a bearer token"),
        (["--transport", "http", "--token", "short", *CREDENTIALS], "at least 16"),
        (["--client-id", "id"], "credentials are required"),
        (["--base-url", "ftp://x", *CREDENTIALS], "expected live, sandbox"),
        (["--actions", '{"orders": {"refund": true}}', *CREDENTIALS], "unknown action"),
        (["--spend-limit", "USD", *CREDENTIALS], "CURRENCY=AMOUNT"),
        (
            ["--actions", '{"orders": {"capture": true}}', "--allow-money-moving", *CREDENTIALS],
            "no spend limit",
        ),
        (["--catalog", "tau", "--search-model", "oracle", *CREDENTIALS], "--search-model"),
        (["--catalog", "/no/such/catalog.jsonl", *CREDENTIALS], "does not exist"),
        (
            ["--transport", "http", "--token", "x" * 16, "--issuer", ISSUER, *CREDENTIALS],
            "--token (CARTAGENT_MCP_TOKEN) and --issuer are exclusive",
        ),
        (["--issuer", ISSUER, *CREDENTIALS], "--transport http only"),
        (
            ["--transport", "http", "--token", "x" * 16, "--required-scope", "a", *CREDENTIALS],
            "--required-scope: only with --issuer",
        ),
        (
            ["--transport", "http", "--issuer", "http://as.example", *CREDENTIALS],
            "expected an https URL",
        ),
        (
            ["--transport", "http", "--issuer", ISSUER, "--jwks-url", "ftp://k", *CREDENTIALS],
            "--jwks-url",
        ),
    ],
)
def test_a_bad_configuration_stops_before_serving(args: list[str], message: str) -> None:
    code, output = run(*args)

    assert code == 1
    assert "Error:" in output
    assert message in output
    assert "Traceback" not in output


def test_options_can_come_from_the_environment() -> None:
    code, output = run(
        "--transport",
        "http",
        CARTAGENT_MCP_TOKEN="short",
        **{
            "CARTAGENT_PAYPAL_CLIENT_ID": "id",
            "CARTAGENT_PAYPAL_CLIENT_SECRET": "secret",
        },
    )

    assert code == 1
    assert "at least 16" in output


def test_a_token_from_the_environment_and_an_issuer_are_exclusive_too() -> None:
    code, output = run(
        "--transport", "http", "--issuer", ISSUER, *CREDENTIALS, CARTAGENT_MCP_TOKEN="x" * 16
    )

    assert code == 1
    assert "exclusive" in output


def test_base_urls_name_paypals_environments_or_any_url() -> None:
    assert resolve_base_url("live") == "https://api-m.paypal.com"
    assert resolve_base_url("Sandbox") == "https://api-m.sandbox.paypal.com"
    assert resolve_base_url("http://127.0.0.1:8765/") == "http://127.0.0.1:8765"
    with pytest.raises(ConfigurationError):
        resolve_base_url("localhost:8765")


def test_the_server_runs_with_the_startup_heap_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    frozen: list[int] = []

    async def serve_stdio(server: object) -> None:
        frozen.append(gc.get_freeze_count())

    monkeypatch.setattr("cartagent.mcp_transport.serve_stdio", serve_stdio)
    code, output = run(*CREDENTIALS)

    assert code == 0, output
    assert frozen and frozen[0] > 0
    assert gc.get_freeze_count() == 0
