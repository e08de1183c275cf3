"""The tool registry as an MCP server, over stdio or bearer-authenticated streamable HTTP
(a static token, or OAuth access tokens with ``oauth=oauth_resource(issuer=..., resource=...)``).
The transports themselves are :mod:`cartagent.mcp_transport`'s, re-exported here.

::

    toolkit = build_toolkit(client, actions={"orders": {"create": True}})
    server = build_server(toolkit)
    await serve_stdio(server)  # or: await serve_http(server, token=..., port=8811)
"""

from __future__ import annotations

from ..mcp_transport import (
    JwtTokenVerifier,
    OAuthResource,
    StaticTokenVerifier,
    http_app,
    oauth_resource,
    serve_http,
    serve_stdio,
)
from .policy import build_toolkit, load_actions, parse_limits, read_only_config
from .server import build_server, call_result, mcp_tool

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
