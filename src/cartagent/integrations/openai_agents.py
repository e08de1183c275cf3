"""OpenAI Agents SDK: the toolkit's tools as ``FunctionTool`` objects (needs ``openai-agents``).

::

    agent = Agent(name="shop", instructions=..., tools=agents_tools(kit))

Schemas are the registry's; ``strict_json_schema`` is on only for schemas strict mode takes
unchanged (the SDK would otherwise rewrite optional arguments into required ones). Approval
and spend limits stay with the toolkit, so the SDK's own ``needs_approval`` is left off.
"""

from __future__ import annotations

from typing import Any

from ..tools import Tool, Toolkit
from ._calls import call_json
from ._schema import strict_compatible

try:
    from agents import FunctionTool
    from agents.tool_context import ToolContext
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "cartagent.integrations.openai_agents needs openai-agents: "
        "pip install 'cartagent[openai-agents]'"
    ) from error


def agents_tool(toolkit: Toolkit, tool: Tool[Any]) -> FunctionTool:
    name = tool.name

    async def on_invoke_tool(context: ToolContext[Any], arguments: str) -> str:
        return (await call_json(toolkit, name, arguments)).text

    schema = tool.input_schema()
    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=schema,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=strict_compatible(schema),
    )


def agents_tools(toolkit: Toolkit) -> list[FunctionTool]:
    """One ``FunctionTool`` per enabled tool, calling it through ``toolkit``."""
    return [agents_tool(toolkit, t) for t in toolkit.tools]
