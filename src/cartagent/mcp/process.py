"""``cartagent mcp`` as a child process, for end-to-end tests and benchmarks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx

from ..sandbox.process import free_port


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


class McpHttpProcess:
    """``cartagent mcp --transport http`` on 127.0.0.1; ``with`` waits until it answers."""

    def __init__(
        self,
        args: list[str],
        *,
        token: str,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.args = args
        self.token = token
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    def start(self) -> McpHttpProcess:
        command = [
            *mcp_command(),
            "--transport",
            "http",
            "--host",
            self.host,
            "--port",
            str(self.port),
            *self.args,
        ]
        env = {**os.environ, "CARTAGENT_MCP_TOKEN": self.token}
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                error = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"cartagent mcp exited with {self.proc.returncode}: {error}")
            try:
                # Unauthenticated on purpose: a 401 is the sign that the server is up.
                httpx.post(self.url, timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"cartagent mcp did not answer on {self.url} in {self.startup_timeout}s")

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def __enter__(self) -> McpHttpProcess:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
