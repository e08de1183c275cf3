"""``cartagent mcp --transport http --issuer`` in a subprocess, the sandbox (another one) as its
authorization server: metadata discovery, access tokens from the sandbox, and every refusal."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from cartagent.child_process import SandboxProcess
from cartagent.mcp.process import McpHttpProcess, mcp_args
from cartagent.sandbox import open_sandbox
from cartagent.sandbox.agentic.cart_api import SigningKey, issue, signing_key
from tests.mcp.test_http import INITIALIZE, MCP_HEADERS
from tests.mcp.tokens import flip_signature, rsa_key, sign, unsigned, with_claims

pytestmark = pytest.mark.anyio
SCOPE = "mcp:tools"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-oauth") / "sandbox.db"


@pytest.fixture(scope="module")
def paypal(database: Path) -> Iterator[SandboxProcess]:
    with SandboxProcess(f"sqlite:///{database}") as server:
        yield server


@pytest.fixture(scope="module")
def server(paypal: SandboxProcess) -> Iterator[McpHttpProcess]:
    oauth = ("--issuer", paypal.base_url, "--required-scope", SCOPE)  # keys found by discovery
    args = mcp_args(
        base_url=paypal.base_url,
        client_id=paypal.client_id,
        client_secret=paypal.client_secret,
        extra=oauth,
    )
    with McpHttpProcess(args, token=None) as process:
        yield process


@pytest.fixture(scope="module")
def sandbox_key(database: Path, paypal: SandboxProcess) -> Iterator[SigningKey]:
    """The key the sandbox process signs with (it belongs to the database)."""
    sandbox = open_sandbox(f"sqlite:///{database}")
    try:
        yield signing_key(sandbox.store)
    finally:
        sandbox.store.engine.dispose()


def access_token(paypal: SandboxProcess, resource: str, scope: str | None = SCOPE) -> str:
    form = {"grant_type": "client_credentials", "resource": resource}
    response = httpx.post(
        f"{paypal.base_url}/v1/sandbox/oauth2/token",
        data={**form, **({"scope": scope} if scope else {})},
        auth=(paypal.client_id, paypal.client_secret),
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def post(server: McpHttpProcess, token: str | None) -> httpx.Response:
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(server.url, json=INITIALIZE, headers=headers, timeout=10)


def metadata_url(server: McpHttpProcess) -> str:
    return f"{server.base_url}/.well-known/oauth-protected-resource/mcp"


def test_the_protected_resource_metadata_is_served_at_both_well_known_paths(
    server: McpHttpProcess, paypal: SandboxProcess
) -> None:
    expected = {
        "resource": server.url,
        "authorization_servers": [paypal.base_url],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
    }
    for url in (metadata_url(server), f"{server.base_url}/.well-known/oauth-protected-resource"):
        response = httpx.get(url, timeout=10)
        assert response.status_code == 200, url
        assert response.json() == expected, url


async def test_a_sandbox_token_for_this_server_lists_and_calls_tools(
    server: McpHttpProcess, paypal: SandboxProcess
) -> None:
    headers = {"Authorization": f"Bearer {access_token(paypal, server.url)}"}
    with anyio.fail_after(30):
        async with (
            httpx2.AsyncClient(headers=headers, timeout=10) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            names = {t.name for t in (await client.list_tools()).tools}
            missing = await client.call_tool("get_order", {"order_id": "0NOSUCHORDER00000"})

    assert "get_order" in names
    assert missing.is_error  # PayPal answered: the tool ran behind the token


def test_no_token_is_401_naming_the_metadata(server: McpHttpProcess) -> None:
    response = post(server, None)

    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{metadata_url(server)}"' in challenge


def crafted(paypal: SandboxProcess, server: McpHttpProcess, **changes: Any) -> dict[str, Any]:
    """Claims of a good access token for ``server``, with ``changes``."""
    now = int(time.time())
    claims = {
        "iss": paypal.base_url,
        "aud": server.url,
        "sub": "MERCHANT1",
        "client_id": paypal.client_id,
        "scope": SCOPE,
        "iat": now,
        "exp": now + 600,
    }
    return {**claims, **changes}


Maker = Callable[[SandboxProcess, McpHttpProcess, SigningKey], str]
BAD: dict[str, Maker] = {
    "expired": lambda p, s, k: issue(
        k, crafted(p, s, iat=int(time.time()) - 4000, exp=int(time.time()) - 3600)
    ),
    "for another resource": lambda p, s, k: access_token(p, "http://127.0.0.1:9/mcp"),
    "from another issuer": lambda p, s, k: issue(k, crafted(p, s, iss="http://127.0.0.1:9")),
    "alg none": lambda p, s, k: unsigned(crafted(p, s), kid=k.kid),
    "an unknown kid": lambda p, s, k: sign(crafted(p, s), rsa_key(), kid="not-the-sandboxs"),
    "a tampered signature": lambda p, s, k: flip_signature(issue(k, crafted(p, s))),
    "claims changed after signing": lambda p, s, k: with_claims(
        issue(k, crafted(p, s, aud="http://127.0.0.1:9/mcp")), crafted(p, s)
    ),
}


def test_the_crafted_baseline_token_is_accepted(
    server: McpHttpProcess, paypal: SandboxProcess, sandbox_key: SigningKey
) -> None:
    # So each refusal below is down to the one thing it changes.
    assert post(server, issue(sandbox_key, crafted(paypal, server))).status_code == 200


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_token_is_401_invalid_token_naming_the_metadata(
    server: McpHttpProcess, paypal: SandboxProcess, sandbox_key: SigningKey, case: str
) -> None:
    response = post(server, BAD[case](paypal, server, sandbox_key))

    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert f'resource_metadata="{metadata_url(server)}"' in challenge


def test_a_token_without_the_required_scope_is_403_insufficient_scope(
    server: McpHttpProcess, paypal: SandboxProcess
) -> None:
    for scope in (None, "mcp:read"):
        response = post(server, access_token(paypal, server.url, scope))

        assert response.status_code == 403
        challenge = response.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge
        assert f'resource_metadata="{metadata_url(server)}"' in challenge
