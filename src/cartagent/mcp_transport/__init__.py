"""Serving any MCP server: over stdio, or over streamable HTTP at ``/mcp`` behind a bearer token
(a static one, OAuth access tokens, or a verifier of the caller's own).

The tool registry's server (:mod:`cartagent.mcp`) and the agentic-commerce protocols' MCP
bindings (:mod:`cartagent.commerce`) are both served through it; it knows neither.
"""

from __future__ import annotations

from .auth import StaticTokenVerifier, auth_settings
from .oauth import JwtTokenVerifier, OAuthResource, oauth_resource
from .serve import MAX_BODY, MCP_PATH, http_app, serve_http, serve_stdio

__all__ = [
    "MAX_BODY",
    "MCP_PATH",
    "JwtTokenVerifier",
    "OAuthResource",
    "StaticTokenVerifier",
    "auth_settings",
    "http_app",
    "oauth_resource",
    "serve_http",
    "serve_stdio",
]
