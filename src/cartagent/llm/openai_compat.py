"""A :class:`~cartagent.llm.Model` over any OpenAI-compatible ``/chat/completions`` endpoint.

OpenAI itself, vLLM, llama.cpp's ``llama-server``, Ollama and most hosted gateways speak this
wire format. They differ mainly in how they accept a JSON Schema for the reply, which
``schema_style`` selects.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Literal, Self

import httpx

from ..errors import ConfigurationError, ModelError
from .model import Completion, Message, ToolCall, ToolSpec, Usage

__all__ = ["OpenAICompatibleModel", "SchemaStyle"]

SchemaStyle = Literal["json_schema", "json_object"]
_SCHEMA_STYLES: tuple[SchemaStyle, ...] = ("json_schema", "json_object")


class OpenAICompatibleModel:
    """Chat completions over HTTP; ``complete`` sends one ``POST {base_url}/chat/completions``.

    ``schema_style="json_schema"`` passes OpenAI's ``response_format`` through unchanged (OpenAI,
    vLLM); ``"json_object"`` rewrites it to ``{"type": "json_object", "schema": ...}``, the form
    llama.cpp's server accepts. ``extra_body`` is merged into every request (``temperature``,
    ``max_tokens``, ``seed``...). A caller-supplied ``http_client`` is used but not closed.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        schema_style: SchemaStyle = "json_schema",
        extra_body: dict[str, Any] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not base_url:
            raise ConfigurationError("base_url is empty; give the server's /v1 URL")
        if schema_style not in _SCHEMA_STYLES:
            raise ConfigurationError(
                f"schema_style must be one of {', '.join(_SCHEMA_STYLES)}, not {schema_style!r}"
            )
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be positive, not {timeout}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.schema_style = schema_style
        self._timeout = timeout
        self._extra_body = dict(extra_body or {})
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._owns_client = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient()

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Completion:
        body = self._request_body(messages, tools=tools, response_format=response_format)
        url = f"{self.base_url}/chat/completions"
        try:
            response = await self._http.post(
                url, json=body, headers=self._headers, timeout=self._timeout
            )
        except httpx.TimeoutException as exc:
            raise ModelError(f"{url} did not answer within {self._timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise ModelError(f"could not reach {url}: {exc}") from exc
        if response.is_error:
            raise _http_error(response)
        try:
            payload = response.json()
        except ValueError as exc:
            raise ModelError(
                f"{url} answered HTTP {response.status_code} without JSON",
                http_status=response.status_code,
                body=response.text,
            ) from exc
        return _completion(payload)

    def _request_body(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None,
        response_format: dict[str, Any] | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_wire_message(m) for m in messages],
        }
        if tools:
            body["tools"] = [_wire_tool(t) for t in tools]
        if response_format is not None:
            body["response_format"] = (
                _as_json_object(response_format)
                if self.schema_style == "json_object"
                else response_format
            )
        return {**body, **self._extra_body}

    async def aclose(self) -> None:
        """Close the HTTP client, unless the caller supplied it."""
        if self._owns_client:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _as_json_object(response_format: dict[str, Any]) -> dict[str, Any]:
    if response_format.get("type") != "json_schema":
        return response_format
    schema = response_format.get("json_schema", {}).get("schema")
    if schema is None:
        return {"type": "json_object"}
    return {"type": "json_object", "schema": schema}


def _wire_message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def _wire_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _http_error(response: httpx.Response) -> ModelError:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    # OpenAI, vLLM and llama.cpp all answer {"error": {"message": ...}}; some gateways a string.
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        detail = str(error.get("message") or error)
    elif error:
        detail = str(error)
    else:
        detail = (str(body) if body else response.reason_phrase)[:500]
    return ModelError(
        f"HTTP {response.status_code} from {response.request.url}: {detail}",
        http_status=response.status_code,
        body=body,
    )


def _tool_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    name = function.get("name")
    if not name:
        raise ModelError(f"a tool call without a function name: {raw!r}", body=raw)
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise ModelError(
                f"tool call {name!r} has arguments that are not JSON: {arguments!r}", body=raw
            ) from exc
    if not isinstance(arguments, dict):
        raise ModelError(f"tool call {name!r} has arguments that are not an object", body=raw)
    return ToolCall(id=str(raw.get("id") or ""), name=str(name), arguments=arguments)


def _completion(payload: Any) -> Completion:
    try:
        choice = payload["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelError("the reply has no choices[0].message", body=payload) from exc
    calls = tuple(_tool_call(raw) for raw in message.get("tool_calls") or ())
    usage = payload.get("usage")
    return Completion(
        Message("assistant", message.get("content"), tool_calls=calls),
        Usage(int(usage["prompt_tokens"]), int(usage.get("completion_tokens", 0)))
        if isinstance(usage, dict) and "prompt_tokens" in usage
        else None,
        truncated=isinstance(choice, dict) and choice.get("finish_reason") == "length",
    )
