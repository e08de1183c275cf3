"""The tool registry as an MCP server, over stdio or bearer-authenticated streamable HTTP
(a static token, or OAuth access tokens with ``oauth=oauth_resource(issuer=..., resource=...)``).

::

    toolkit = build_toolkit(client, actions={"orders": {"create": True}})
    server = build_server(toolkit)
    await serve_stdio(server)  # or: await serve_http(server, token=..., port=8811)
"""

from __future__ import annotations

from .auth import StaticTokenVerifier
from .oauth import JwtTokenVerifier, OAuthResource, oauth_resource
from .policy import build_toolkit, load_actions, parse_limits, read_only_config
from .server import build_server, call_result, mcp_tool
from .transports import http_app, serve_http, serve_stdio

__all__ = [
    "JwtTokenVerifier",
    "OAuthResource",
    "StaticTokenVerifier",
    "build_server",
    "build_toolkit",
    "call_result",
    "http_app",
    "load_actions",
    "mcp_tool",
    "oauth_resource",
    "parse_limits",
    "read_only_config",
    "serve_http",
    "serve_stdio",
]
