"""An MCP server whose tools are a :class:`Toolkit`'s enabled tools, described by the registry."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from .. import __version__
from ..tools import Tool, Toolkit, ToolResult

log = logging.getLogger("cartagent.mcp")

INSTRUCTIONS = (
    "PayPal commerce tools. Results are compact JSON; on isError the JSON has 'error' and "
    "'message' (and 'field' when an argument was wrong): fix the call rather than retrying it."
)


def mcp_tool(tool: Tool[Any]) -> types.Tool:
    """The registry's tool as MCP lists it: name, description, input schema, annotations."""
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations.model_validate(tool.annotations.to_mcp()),
    )


def call_result(result: ToolResult) -> types.CallToolResult:
    """A toolkit answer as MCP returns it: the JSON as text, and as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(text=result.text)],
        structured_content=result.content,
        is_error=result.is_error,
    )


def build_server(
    toolkit: Toolkit, *, name: str = "cartagent", instructions: str = INSTRUCTIONS
) -> Server[Any]:
    """A low-level MCP server listing ``toolkit``'s tools and routing calls to ``toolkit.call``."""
    listed = [mcp_tool(t) for t in toolkit.tools]
    schemas = {t.name: t.input_schema for t in listed}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            result = await toolkit.call(params.name, params.arguments)
        except Exception:
            # Toolkit.call already turns failures into results; this guards the transport.
            log.exception("MCP call to %s failed", params.name)
            result = ToolResult(
                {"error": "internal", "message": f"{params.name} failed unexpectedly"}, True
            )
        return call_result(result)

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )
