"""The ports a command is about to serve on, checked before it starts: a taken one is a clear
error rather than uvicorn's log line after a slow start. The local sandbox a server starts
beside itself is used instead when one already answers on its port."""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..settings import SandboxSettings


def ensure_free(host: str, port: int, *, hint: str, choose: str = "--port") -> None:
    """Raise :class:`click.ClickException` unless ``host:port`` can be bound now (the port is
    released at once); ``hint`` guesses who holds it, ``choose`` says how to pick another."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As uvicorn binds: a port a stopped server left connections on (TIME_WAIT) is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
            if error.errno == errno.EADDRINUSE:
                raise click.ClickException(
                    f"{where} is already in use ({hint}); stop it or choose another {choose}"
                ) from None
            raise click.ClickException(f"cannot serve on {where}: {error.strerror}") from None


def sandbox_running(local: SandboxSettings) -> bool:
    """Whether a cartagent sandbox already answers at ``local``'s address, to be used instead
    of starting one (said in one line); ``False`` when its port is free for one to start.
    Anything else on the port is a :class:`click.ClickException`."""
    if _answers_as_sandbox(local.base_url):
        click.echo(f"using the sandbox already running at {local.base_url}", err=True)
        return True
    ensure_free(
        local.host,
        local.port,
        hint="not by a cartagent sandbox",
        choose="port for the sandbox with CARTAGENT_SANDBOX_PORT",
    )
    return False


def _answers_as_sandbox(base_url: str) -> bool:
    """Whether ``base_url`` serves the sandbox's OAuth metadata (RFC 8414): no credentials
    needed, and no password hash checked."""
    import httpx

    from ..sandbox.identity.authorization_server import TOKEN_PATH

    try:
        response = httpx.get(f"{base_url}/.well-known/oauth-authorization-server", timeout=2)
        metadata = response.json()
    except (httpx.HTTPError, ValueError):
        return False
    return (
        response.status_code == 200
        and isinstance(metadata, dict)
        and str(metadata.get("token_endpoint", "")).endswith(TOKEN_PATH)
    )
