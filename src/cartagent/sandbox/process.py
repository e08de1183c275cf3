"""A sandbox server in a child process on a real socket, for benchmarks and fault tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from types import TracebackType

import httpx


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class SandboxProcess:
    """``cartagent sandbox`` as a child process; ``with`` starts it and waits until it answers."""

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
        startup_timeout: float = 30.0,
    ) -> None:
        self.db_url = db_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.host = host
        self.port = port or free_port(host)
        self.workers = workers
        self.seed = seed
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SandboxProcess:
        command = [
            sys.executable,
            "-m",
            "cartagent",
            "sandbox",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--db",
            self.db_url,
            "--client-id",
            self.client_id,
            "--client-secret",
            self.client_secret,
            "--workers",
            str(self.workers),
            "--seed" if self.seed else "--no-seed",
        ]
        self.proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                error = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"sandbox exited with {self.proc.returncode}: {error[-2000:]}")
            try:
                self.token()
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"sandbox did not answer on {self.base_url} in {self.startup_timeout}s")

    def token(self) -> str:
        response = httpx.post(
            f"{self.base_url}/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            auth=(self.client_id, self.client_secret),
            timeout=5,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the server (and its workers): no shutdown code runs."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
