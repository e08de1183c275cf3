"""Through the OpenAI and LangChain adapters, an id that leaves its segment sends nothing."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cartagent.integrations.openai_tools import dispatch
from cartagent.tools import Tool
from tests.tools.ids import CASES, VALID, Wire, wire_toolkit

BAD = ["../../../v1/billing/plans", "%2e%2e/x", "A/B?c#d", "A" * 300]
ids = {"ids": lambda v: getattr(v, "name", None) or str(v)[:20]}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    text = orjson.dumps(arguments).decode()
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}


@pytest.mark.anyio
@pytest.mark.parametrize("bad", BAD, **ids)
@pytest.mark.parametrize(("tool", "field"), CASES, **ids)
async def test_openai_tool_calls_with_a_bad_id_are_refused(
    tool: Tool[Any], field: str, bad: str
) -> None:
    wire = Wire()
    answer = await dispatch(
        wire_toolkit(wire), tool_call(tool.name, {**VALID[tool.name], field: bad})
    )

    content = orjson.loads(answer["content"])
    assert content["error"] == "invalid_arguments"
    assert content["field"] == field
    assert wire.paths == []


@pytest.mark.parametrize("bad", BAD, **ids)
@pytest.mark.parametrize(("tool", "field"), CASES, **ids)
def test_langchain_tools_with_a_bad_id_are_refused(tool: Tool[Any], field: str, bad: str) -> None:
    pytest.importorskip("langchain_core")
    from cartagent.integrations.langchain import langchain_tools

    wire = Wire()
    tools = {t.name: t for t in langchain_tools(wire_toolkit(wire))}

    content = orjson.loads(tools[tool.name].invoke({**VALID[tool.name], field: bad}))

    assert content["error"] == "invalid_arguments"
    assert content["field"] == field
    assert wire.paths == []
