"""Serving an MCP server over stdio, or over streamable HTTP behind a bearer token."""

from __future__ import annotations

from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.auth.provider import TokenVerifier
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette
from starlette.routing import Route

from ..body_limit import BodyLimit
from ..errors import ConfigurationError
from .auth import StaticTokenVerifier, auth_settings
from .oauth import OAuthResource

MCP_PATH = "/mcp"
MAX_BODY = 1024 * 1024
"""The largest request body (a JSON-RPC message) the HTTP transport reads."""


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(
    server: Server[Any],
    *,
    token: str | None = None,
    oauth: OAuthResource | None = None,
    verifier: TokenVerifier | None = None,
    host: str,
    port: int,
) -> Starlette:
    """The streamable HTTP app at ``/mcp``; every request needs ``Authorization: Bearer ...``:
    ``token`` itself, with ``oauth`` an access token its authorization server issued, or one
    that ``verifier`` accepts (e.g. each agent's own token).

    A missing or wrong token gets 401 with ``WWW-Authenticate: Bearer`` (naming the protected
    resource metadata with ``oauth``); a token without a required scope, 403. Requests whose
    Host or Origin is not loopback are refused when bound to loopback (DNS rebinding
    protection). A body over :data:`MAX_BODY` gets 413 before it is read; the token is checked
    before the body is read (by the SDK's authentication middleware, inside the limit).
    """
    if sum(given is not None for given in (token, oauth, verifier)) > 1:
        raise ConfigurationError(
            "a static bearer token, OAuth access tokens and a token verifier are exclusive: "
            "give one of token, oauth or verifier"
        )
    routes: list[Route] = []
    if oauth is not None:
        auth, verifier, routes = oauth.settings(), oauth.verifier, oauth.routes()
    else:
        auth = auth_settings(f"http://{host}:{port}")
        verifier = verifier or StaticTokenVerifier(token)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # Plain JSON answers: this server never streams progress or asks the client anything.
        json_response=True,
        host=host,
        auth=auth,
        token_verifier=verifier,
        custom_starlette_routes=routes,
    )
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY)  # outermost of the app's own middleware
    return app


async def serve_http(
    server: Server[Any],
    *,
    token: str | None = None,
    oauth: OAuthResource | None = None,
    host: str = "127.0.0.1",
    port: int = 8811,
) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted."""
    app = http_app(server, token=token, oauth=oauth, host=host, port=port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
