"""Servers in child processes on real sockets (127.0.0.1), for end-to-end tests and benchmarks.

:class:`ServerProcess` starts a command in its own session, waits until the server answers,
and stops it (SIGTERM, then SIGKILL) or kills it outright, with every worker it forked.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Self

import httpx

_handed_out: set[int] = set()


def _ephemeral_ports() -> range:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on, for a server started a moment later.

    Not one the kernel would pick for ``bind(0)``: those are also the source ports of outgoing
    connections, so one could be taken by any client between this call and the server's bind
    (a CI run lost a merchant server that way). Nor one this process handed out before, which a
    server it started may not have bound yet.
    """
    ephemeral = _ephemeral_ports()
    low, high = (10000, ephemeral.start) if ephemeral.start > 11000 else (ephemeral.stop, 65536)
    for _ in range(200):
        port = random.randrange(low, high)
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port on {host} between {low} and {high}")


class ServerProcess:
    """A server command as a child process; ``with`` starts it and waits until it answers."""

    name = "server"

    def __init__(
        self, *, host: str = "127.0.0.1", port: int | None = None, startup_timeout: float = 30.0
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    def probe(self) -> None:
        """Return once the server answers; raise ``httpx.TransportError`` until then."""
        raise NotImplementedError

    def start(self) -> Self:
        # A file, not a pipe: a chatty server (llama.cpp logs every layer it loads) would block
        # once a pipe nobody reads is full.
        stderr = self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=self.environment(),
            start_new_session=True,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                stderr.seek(0)
                error = stderr.read().decode(errors="replace")
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}: {error[-2000:]}"
                )
            try:
                self.probe()
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.kill()
        raise RuntimeError(
            f"{self.name} did not answer on {self.base_url} in {self.startup_timeout}s"
        )

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close_log()

    def kill(self) -> None:
        """SIGKILL the server and its workers: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._close_log()

    def _close_log(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class SandboxProcess(ServerProcess):
    """``cartagent sandbox`` with its own merchant credentials."""

    name = "cartagent sandbox"

    def __init__(
        self,
        db_url: str,
        *,
        client_id: str = "bench-client",
        client_secret: str = "bench-secret",
        host: str = "127.0.0.1",
        port: int | None = None,
        workers: int = 1,
        seed: bool = False,
        db_calls: str = "auto",
        startup_timeout: float = 30.0,
    ) -> None:
        super().__init__(host=host, port=port, startup_timeout=startup_timeout)
        self.db_url = db_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.workers = workers
        self.seed = seed
        self.db_calls = db_calls

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "cartagent", "sandbox", "--host", self.host,
            "--port", str(self.port), "--db", self.db_url, "--client-id", self.client_id,
            "--client-secret", self.client_secret, "--workers", str(self.workers),
            "--seed" if self.seed else "--no-seed", "--db-calls", self.db_calls,
        ]  # fmt: skip

    def probe(self) -> None:
        self.token()

    def token(self) -> str:
        response = httpx.post(
            f"{self.base_url}/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            auth=(self.client_id, self.client_secret),
            timeout=5,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])
