"""Calling a toolkit tool with arguments as a model sent them: a JSON string."""

from __future__ import annotations

from typing import Any

import orjson

from ..tools import Toolkit, ToolResult


def bad_arguments(message: str) -> ToolResult:
    return ToolResult({"error": "invalid_arguments", "message": message}, True)


async def call_json(toolkit: Toolkit, name: str, arguments: str | None) -> ToolResult:
    """``toolkit.call`` with JSON-text arguments; malformed JSON is an error result too."""
    try:
        parsed: Any = orjson.loads(arguments) if arguments and arguments.strip() else {}
    except orjson.JSONDecodeError as error:
        return bad_arguments(f"arguments are not valid JSON: {error}")
    if not isinstance(parsed, dict):
        return bad_arguments("arguments must be a JSON object of named arguments")
    return await toolkit.call(name, parsed)
