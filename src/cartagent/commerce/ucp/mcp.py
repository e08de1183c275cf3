"""UCP's MCP binding (``services/shopping/mcp.openrpc.json``): the shopping methods this
business serves, as MCP tools answered by the same :class:`UcpService` as REST.

Each tool takes ``meta`` (``ucp-agent: {profile}`` and ``idempotency-key``, the REST headers),
the resource ``id`` where there is one, and the REST body under the method's own name
(``checkout`` or ``catalog``). The binding's schemas are "logical pointers" whose shape depends
on the negotiated capabilities, so the tools' input schemas say only that much and the service
validates the payload against the negotiated shape, as over REST. Authentication is the MCP
server's (each agent's bearer token over HTTP); an agent that must sign signs the HTTP request
that carries the call, as signatures.md's "MCP Transport" says (its ``Content-Digest`` binds the
JSON-RPC body, ``meta`` included), and a call that reaches the binding any other way (stdio, in
memory) cannot carry that signature. The cart methods are not offered: this business
serves no UCP carts. A tool answers the JSON the REST call answers, with ``isError`` for 4xx/5xx
and for UCP's errors carried in a 200.
"""

from __future__ import annotations

import uuid
from functools import cache
from typing import Any

import mcp_types as types
import orjson
from mcp.server import Server
from starlette.applications import Starlette

from ...protocols.ucp.schema import spec_file
from ..agents import AgentKey
from ..mcp_binding import MCP_PATH, binding_app, binding_server, tool_result
from ..requests import HttpMessage
from .service import OPERATIONS, UcpCall, UcpService

__all__ = ["MCP_PATH", "ucp_mcp_app", "ucp_mcp_server", "ucp_tools"]

_PAYLOAD = {"checkout": "checkout", "catalog": "catalog"}
_READ_ONLY = {"get_checkout", "search_catalog", "lookup_catalog", "get_product", "get_order"}


@cache
def ucp_tools() -> tuple[types.Tool, ...]:
    """The OpenRPC methods this business serves, as tools."""
    document = spec_file("services/shopping/mcp.openrpc.json")
    meta = document["components"]["schemas"]["meta"]
    tools = []
    for method in document["methods"]:
        if method["name"] not in OPERATIONS:
            continue  # carts: not served here
        properties: dict[str, Any] = {}
        required: list[str] = []
        for param in method["params"]:
            name = param["name"]
            if name == "meta":
                properties[name] = meta
            elif name == "id":
                properties[name] = {"type": "string", "maxLength": 255}
            else:
                properties[name] = {
                    "type": "object",
                    "description": f"The REST request body ({param['schema'].get('$ref', '')} "
                    "as the negotiated capabilities shape it).",
                }
            if param.get("required"):
                required.append(name)
        read_only = method["name"] in _READ_ONLY
        tools.append(
            types.Tool(
                name=method["name"],
                description=str(method.get("description") or method.get("summary") or ""),
                input_schema={"type": "object", "properties": properties, "required": required},
                annotations=types.ToolAnnotations(
                    read_only_hint=read_only,
                    destructive_hint=method["name"] in ("complete_checkout", "cancel_checkout"),
                    idempotent_hint=read_only,
                    open_world_hint=True,
                ),
            )
        )
    return tuple(tools)


def _error(code: str, content: str) -> types.CallToolResult:
    body = {"messages": [{"type": "error", "code": code, "content": content}]}
    return types.CallToolResult(
        content=[types.TextContent(text=orjson.dumps(body).decode())],
        structured_content=body,
        is_error=True,
    )


def ucp_mcp_server(service: UcpService, *, local_agent: str | None = None) -> Server[Any]:
    """The MCP server. ``local_agent`` names the agent for a transport without authentication
    (stdio, in-memory); over HTTP the bearer token decides."""

    async def dispatch(
        agent: AgentKey, tool: str, arguments: dict[str, Any], message: HttpMessage | None
    ) -> types.CallToolResult:
        meta = arguments.get("meta")
        profile = meta.get("ucp-agent") if isinstance(meta, dict) else None
        url = profile.get("profile") if isinstance(profile, dict) else None
        if not isinstance(url, str) or not url or '"' in url or "\\" in url:
            return _error("invalid_profile_url", "meta.ucp-agent.profile must be a URL")
        headers = {
            "authorization": f"Bearer {agent.token}",
            "ucp-agent": f'profile="{url}"',
            "request-id": str(uuid.uuid4()),
        }
        key = meta.get("idempotency-key") if isinstance(meta, dict) else None
        if isinstance(key, str):
            headers["idempotency-key"] = key
        resource = arguments.get("id")
        if resource is not None and not isinstance(resource, str):
            return _error("invalid", "id must be a string")
        payload = next((arguments[k] for k in _PAYLOAD if k in arguments), None)
        body = None if payload is None else orjson.dumps(payload)
        call = UcpCall(OPERATIONS[tool], headers, body, resource, message=message)
        answer = await service.answer(call)
        result = answer.json()
        failed = answer.status >= 400 or (
            isinstance(result, dict) and (result.get("ucp") or {}).get("status") == "error"
        )
        return tool_result(answer.body, result, failed=failed)

    return binding_server(
        "cartagent-ucp",
        "UCP shopping (v2026-04-08): checkout sessions, catalog, orders.",
        ucp_tools(),
        service.agents,
        error=_error,
        dispatch=dispatch,
        local_agent=local_agent,
    )


def ucp_mcp_app(service: UcpService, *, host: str, port: int) -> Starlette:
    """The binding over streamable HTTP at ``/mcp``, each request with an agent's token."""
    return binding_app(ucp_mcp_server(service), service.agents, host=host, port=port)
