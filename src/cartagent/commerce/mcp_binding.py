"""What ACP's and UCP's MCP bindings share: tools that each stand for one protocol operation,
called by an authenticated agent, answered by the protocol's service as over REST.

A binding gives its tools, its error shape and a ``dispatch`` that turns one tool call into a
service call; :func:`binding_server` does the rest (listing, the agent, unknown tools, a failure
that escapes the service) and :func:`binding_app` serves it over streamable HTTP
(:mod:`cartagent.mcp_transport`) with each agent's bearer token. ``dispatch`` also gets the HTTP
request that carried the call (``None`` over stdio or in memory): a protocol whose message
signatures cover that request (UCP) verifies them there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from starlette.applications import Starlette
from starlette.requests import Request

from .. import __version__
from ..mcp_transport import MCP_PATH, http_app
from .agents import AgentKey, Agents
from .requests import HttpMessage, http_message

__all__ = [
    "MCP_PATH",
    "AgentTokenVerifier",
    "Dispatch",
    "ErrorResult",
    "binding_app",
    "binding_server",
    "tool_result",
]

log = logging.getLogger(__name__)

ErrorResult = Callable[[str, str], types.CallToolResult]
"""A refusal in the protocol's error shape, from a code and a message."""
Dispatch = Callable[
    [AgentKey, str, dict[str, Any], HttpMessage | None], Awaitable[types.CallToolResult]
]
"""One tool call (the agent, the tool's name, its arguments, the HTTP request that carried it)
answered by the service."""


def tool_result(body: bytes, structured: Any, *, failed: bool) -> types.CallToolResult:
    """The service's JSON answer as a tool result (``isError`` when ``failed``)."""
    return types.CallToolResult(
        content=[types.TextContent(text=body.decode())],
        structured_content=structured if isinstance(structured, dict) else None,
        is_error=failed,
    )


def binding_server(
    name: str,
    instructions: str,
    tools: Sequence[types.Tool],
    agents: Agents,
    *,
    error: ErrorResult,
    dispatch: Dispatch,
    local_agent: str | None = None,
) -> Server[Any]:
    """The MCP server. ``local_agent`` names the agent for a transport without authentication
    (stdio, in-memory); over HTTP the bearer token decides."""
    listed = list(tools)
    schemas = {tool.name: tool.input_schema for tool in listed}

    def caller() -> AgentKey | None:
        token = get_access_token()
        agent = token.client_id if token is not None else local_agent
        return None if agent is None else agents.named(agent)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in schemas:
            return error("unknown_tool", f"no tool named {params.name!r}")
        agent = caller()
        if agent is None:
            return error("unauthorized", "no agent is authenticated")
        try:
            message = await _http_message(ctx)
            return await dispatch(agent, params.name, params.arguments or {}, message)
        except Exception:  # guards the transport; the services answer their own failures
            log.exception("%s: %s failed", name, params.name)
            return error("internal_error", f"{params.name} failed unexpectedly")

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


async def _http_message(ctx: ServerRequestContext[Any]) -> HttpMessage | None:
    """The streamable HTTP request the call came in (its body is the JSON-RPC message, which
    the transport has read already), or ``None`` over another transport."""
    request = ctx.request
    if not isinstance(request, Request):
        return None
    return http_message(request, await request.body())


class AgentTokenVerifier:
    """The SDK's ``TokenVerifier`` over the merchant's agents: the token names the agent."""

    def __init__(self, agents: Agents) -> None:
        self.agents = agents

    async def verify_token(self, token: str) -> AccessToken | None:
        agent = self.agents.by_token(token)
        if agent is None:
            return None
        return AccessToken(token=token, client_id=agent.name, scopes=[])


def binding_app(server: Server[Any], agents: Agents, *, host: str, port: int) -> Starlette:
    """``server`` over streamable HTTP at ``/mcp``, each request with an agent's token."""
    return http_app(server, verifier=AgentTokenVerifier(agents), host=host, port=port)
