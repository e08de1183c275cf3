"""ACP's MCP binding (``openrpc.agentic_checkout.json``): five tools that map one to one to the
REST checkout operations, answered by the same :class:`AcpService`.

Each tool takes ``meta`` (the REST headers: ``api_version``, ``idempotency_key``, ``request_id``,
``signature``, ``timestamp``), the session ``id`` where there is one, and ``payload`` (the REST
body). Authentication is the MCP server's: over HTTP each agent's bearer token, and the agent
it belongs to owns the sessions. The idempotency key is recommended, not required, here (the
binding says so); with one, replays and conflicts behave exactly as over REST. A tool answers the
session JSON, or the ACP ``Error`` with ``isError`` set.
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import Any

import mcp_types as types
import orjson
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from starlette.applications import Starlette

from ... import __version__
from ...mcp.auth import auth_settings
from ..agents import AgentKey, Agents
from .schema import definitions, spec_file
from .service import OPERATIONS, AcpCall, AcpService

__all__ = ["AgentTokenVerifier", "acp_mcp_app", "acp_mcp_server", "acp_tools"]

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
_TOOL_OPERATION = {
    "create_checkout_session": "create",
    "get_checkout_session": "get",
    "update_checkout_session": "update",
    "complete_checkout_session": "complete",
    "cancel_checkout_session": "cancel",
}
_META_HEADERS = {
    "api_version": "api-version",
    "idempotency_key": "idempotency-key",
    "request_id": "request-id",
    "user_agent": "user-agent",
    "accept_language": "accept-language",
    "signature": "signature",
    "timestamp": "timestamp",
}
_REF = re.compile(r"^.*#/\$defs/")


def _local_refs(node: Any, used: set[str]) -> Any:
    """``node`` with the OpenRPC file's references into the JSON Schema bundle made local,
    collecting every definition it needs (transitively) in ``used``."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and "#/$defs/" in value:
                name = _REF.sub("", value)
                out[key] = f"#/$defs/{name}"
                if name not in used:
                    used.add(name)
                    _local_refs(definitions()[name], used)
            else:
                out[key] = _local_refs(value, used)
        return out
    if isinstance(node, list):
        return [_local_refs(item, used) for item in node]
    return node


@cache
def acp_tools() -> tuple[types.Tool, ...]:
    """The binding's tools, their input schemas self-contained (only the definitions used)."""
    document = spec_file("openrpc.agentic_checkout.json")
    meta = document["components"]["schemas"]["meta"]
    tools = []
    for method in document["methods"]:
        used: set[str] = set()
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in method["params"]:
            schema = param["schema"]
            if schema.get("$ref") == "#/components/schemas/meta":
                schema = meta
            properties[param["name"]] = _local_refs(schema, used)
            if param.get("required"):
                required.append(param["name"])
        defs = {name: _local_refs(definitions()[name], set()) for name in sorted(used)}
        schema = {"type": "object", "properties": properties, "required": required}
        if defs:
            schema["$defs"] = defs
        tools.append(
            types.Tool(
                name=method["name"],
                description=f"{method['summary']}. {method.get('description', '')}".strip(),
                input_schema=schema,
                annotations=types.ToolAnnotations(
                    read_only_hint=method["name"] == "get_checkout_session",
                    destructive_hint=method["name"]
                    in ("complete_checkout_session", "cancel_checkout_session"),
                    idempotent_hint=method["name"] == "get_checkout_session",
                    open_world_hint=True,
                ),
            )
        )
    return tuple(tools)


def _error(code: str, message: str) -> types.CallToolResult:
    body = {"type": "invalid_request", "code": code, "message": message}
    return types.CallToolResult(
        content=[types.TextContent(text=orjson.dumps(body).decode())],
        structured_content=body,
        is_error=True,
    )


def acp_mcp_server(service: AcpService, *, local_agent: str | None = None) -> Server[Any]:
    """The MCP server. ``local_agent`` names the agent for a transport without authentication
    (stdio, in-memory); over HTTP the bearer token decides."""
    listed = list(acp_tools())
    schemas = {tool.name: tool.input_schema for tool in listed}

    def caller() -> AgentKey | None:
        token = get_access_token()
        name = token.client_id if token is not None else local_agent
        return None if name is None else service.agents.named(name)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        operation = _TOOL_OPERATION.get(params.name)
        if operation is None:
            return _error("unknown_tool", f"no tool named {params.name!r}")
        agent = caller()
        if agent is None:
            return _error("unauthorized", "no agent is authenticated")
        arguments = params.arguments or {}
        meta = arguments.get("meta")
        if not isinstance(meta, dict):
            return _error("missing", "meta (with api_version) is required")
        headers = {
            header: str(meta[key])
            for key, header in _META_HEADERS.items()
            if isinstance(meta.get(key), str | int)
        }
        session_id = arguments.get("id")
        if session_id is not None and not isinstance(session_id, str):
            return _error("invalid", "id must be a string")
        payload = arguments.get("payload")
        call = AcpCall(
            OPERATIONS[operation],
            headers,
            None if payload is None and operation == "get" else orjson.dumps(payload or {}),
            session_id,
            agent=agent,
            key_required=False,
        )
        try:
            answer = await service.answer(call)
        except Exception:  # guards the transport; the service already answers its failures
            log.exception("ACP MCP %s failed", params.name)
            return _error("internal_error", f"{params.name} failed unexpectedly")
        body = answer.json()
        return types.CallToolResult(
            content=[types.TextContent(text=answer.body.decode())],
            structured_content=body,
            is_error=answer.status >= 400,
        )

    return Server(
        "cartagent-acp",
        version=__version__,
        instructions="ACP checkout sessions (2026-04-17): create, update, get, complete, cancel.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


class AgentTokenVerifier:
    """The SDK's ``TokenVerifier`` over the merchant's agents: the token names the agent."""

    def __init__(self, agents: Agents) -> None:
        self.agents = agents

    async def verify_token(self, token: str) -> AccessToken | None:
        agent = self.agents.by_token(token)
        if agent is None:
            return None
        return AccessToken(token=token, client_id=agent.name, scopes=[])


def acp_mcp_app(service: AcpService, *, host: str, port: int) -> Starlette:
    """The binding over streamable HTTP at ``/mcp``, each request with an agent's token."""
    return acp_mcp_server(service).streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        host=host,
        auth=auth_settings(f"http://{host}:{port}"),
        token_verifier=AgentTokenVerifier(service.agents),
    )
