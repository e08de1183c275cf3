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

import re
from functools import cache
from typing import Any

import mcp_types as types
import orjson
from mcp.server import Server
from starlette.applications import Starlette

from ...protocols.acp.schema import definitions, spec_file
from ..agents import AgentKey
from ..mcp_binding import MCP_PATH, binding_app, binding_server, tool_result
from ..requests import HttpMessage
from .service import OPERATIONS, AcpCall, AcpService

__all__ = ["MCP_PATH", "acp_mcp_app", "acp_mcp_server", "acp_tools"]

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

    async def dispatch(
        agent: AgentKey, tool: str, arguments: dict[str, Any], _message: HttpMessage | None
    ) -> types.CallToolResult:
        # ACP's signature travels in ``meta`` (signature, timestamp), not in the HTTP request.
        operation = _TOOL_OPERATION[tool]
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
        answer = await service.answer(call)
        return tool_result(answer.body, answer.json(), failed=answer.status >= 400)

    return binding_server(
        "cartagent-acp",
        "ACP checkout sessions (2026-04-17): create, update, get, complete, cancel.",
        acp_tools(),
        service.agents,
        error=_error,
        dispatch=dispatch,
        local_agent=local_agent,
    )


def acp_mcp_app(service: AcpService, *, host: str, port: int) -> Starlette:
    """The binding over streamable HTTP at ``/mcp``, each request with an agent's token."""
    return binding_app(acp_mcp_server(service), service.agents, host=host, port=port)
