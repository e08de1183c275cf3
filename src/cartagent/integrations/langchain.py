"""LangChain: the toolkit's tools as ``StructuredTool`` objects (needs ``langchain-core``).

::

    tools = langchain_tools(kit)
    agent = create_agent(model, tools)

Each tool has the registry's name, description and JSON Schema; LangChain passes the
arguments through unvalidated and the toolkit validates them. Error results (bad arguments,
refused approvals, PayPal errors) come back as the tool's output, marked ``status="error"``
on the ``ToolMessage``, never as exceptions. Both ``invoke`` and ``ainvoke`` work; use
``ainvoke`` inside a running event loop (``invoke`` runs its own).
"""

from __future__ import annotations

from typing import Any

from ..tools import Tool, Toolkit, ToolResult

try:
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "cartagent.integrations.langchain needs langchain-core: pip install 'cartagent[langchain]'"
    ) from error


def _output(result: ToolResult) -> str:
    if result.is_error:
        # Handled by the tool (handle_tool_error): the text becomes an error-status output.
        raise ToolException(result.text)
    return result.text


def langchain_tool(toolkit: Toolkit, tool: Tool[Any]) -> StructuredTool:
    name = tool.name

    async def coroutine(**arguments: Any) -> str:
        return _output(await toolkit.call(name, arguments))

    def func(**arguments: Any) -> str:
        return _output(toolkit.call_sync(name, arguments))

    return StructuredTool(
        name=name,
        description=tool.description,
        args_schema=tool.input_schema(),
        func=func,
        coroutine=coroutine,
        handle_tool_error=True,
    )


def langchain_tools(toolkit: Toolkit) -> list[StructuredTool]:
    """One ``StructuredTool`` per enabled tool, calling it through ``toolkit``."""
    return [langchain_tool(toolkit, t) for t in toolkit.tools]
