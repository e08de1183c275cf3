"""``cartagent mcp`` as a child process, for end-to-end tests and benchmarks."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import httpx

from ..child_process import ServerProcess


def mcp_command() -> list[str]:
    """The argv prefix that runs ``cartagent mcp`` with this interpreter."""
    return [sys.executable, "-m", "cartagent", "mcp"]


def mcp_args(
    *,
    base_url: str,
    client_id: str,
    client_secret: str,
    actions: Mapping[str, Any] | None = None,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """Command-line arguments pointing ``cartagent mcp`` at a PayPal (or a sandbox)."""
    args = ["--base-url", base_url, "--client-id", client_id, "--client-secret", client_secret]
    if actions:
        args += ["--actions", json.dumps(actions)]
    return [*args, *extra]


class McpHttpProcess(ServerProcess):
    """``cartagent mcp --transport http`` on 127.0.0.1; ``with`` waits until it answers.

    ``token`` is the static bearer token; ``None`` for OAuth (``--issuer`` in ``args``).
    """

    name = "cartagent mcp"

    def __init__(
        self,
        args: list[str],
        *,
        token: str | None,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        super().__init__(host=host, port=port, startup_timeout=startup_timeout)
        self.args = args
        self.token = token

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def command(self) -> list[str]:
        transport = ["--transport", "http", "--host", self.host, "--port", str(self.port)]
        return [*mcp_command(), *transport, *self.args]

    def environment(self) -> dict[str, str]:
        environment = super().environment()
        environment.pop("CARTAGENT_MCP_TOKEN", None)
        if self.token is not None:
            environment["CARTAGENT_MCP_TOKEN"] = self.token
        return environment

    def probe(self) -> None:
        # Unauthenticated on purpose: a 401 is the sign that the server is up.
        httpx.post(self.url, timeout=2)
