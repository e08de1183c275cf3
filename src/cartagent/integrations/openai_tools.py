"""OpenAI function calling (Chat Completions): tool definitions and a tool-call dispatcher.

Needs no OpenAI package: ``tools_json`` is plain JSON for ``client.chat.completions.create(
tools=...)``, and ``dispatch`` accepts the SDK's tool-call objects or their dict form::

    reply = client.chat.completions.create(model=..., messages=messages, tools=tools_json(kit))
    for call in reply.choices[0].message.tool_calls or ():
        messages.append(await dispatch(kit, call))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..tools import Tool, Toolkit
from ._calls import bad_arguments, call_json
from ._schema import strict_compatible


def tool_definition(tool: Tool[Any]) -> dict[str, Any]:
    """One tool in the Chat Completions ``{"type": "function", "function": ...}`` shape."""
    schema = tool.input_schema()
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": schema,
    }
    if strict_compatible(schema):
        function["strict"] = True
    return {"type": "function", "function": function}


def tools_json(toolkit: Toolkit) -> list[dict[str, Any]]:
    """The toolkit's enabled tools as Chat Completions tool definitions."""
    return [tool_definition(t) for t in toolkit.tools]


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


async def dispatch(toolkit: Toolkit, tool_call: Any) -> dict[str, Any]:
    """Run one model ``tool_call`` and return the ``{"role": "tool", ...}`` message answering it.

    Unknown tools, malformed JSON and invalid arguments come back as error content for the
    model to correct, never as exceptions.
    """
    call_id = _field(tool_call, "id")
    function = _field(tool_call, "function")
    name = _field(function, "name") if function is not None else None
    if not isinstance(name, str):
        result = bad_arguments("only function tool calls can be dispatched")
    else:
        arguments = _field(function, "arguments")
        if isinstance(arguments, Mapping):  # some OpenAI-compatible servers send an object
            result = await toolkit.call(name, dict(arguments))
        else:
            result = await call_json(
                toolkit, name, arguments if isinstance(arguments, str) else None
            )
    return {"role": "tool", "tool_call_id": call_id, "content": result.text}
