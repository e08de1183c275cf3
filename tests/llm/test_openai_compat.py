"""OpenAICompatibleModel against a fake chat-completions server (in-process, and on a socket)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from cartagent.errors import ConfigurationError, ModelError
from cartagent.llm import Message, Model, ToolCall, ToolSpec, Usage
from cartagent.llm.openai_compat import OpenAICompatibleModel

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "search_query", "schema": SCHEMA, "strict": True},
}
LOOKUP = ToolSpec(
    "get_order",
    "Show an order.",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)


def _reply(
    message: dict[str, Any], usage: dict[str, int] | None = None, finish: str = "stop"
) -> JSONResponse:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return JSONResponse(body)


@dataclass
class FakeServer:
    """A chat-completions endpoint answering with ``replies`` in order, recording requests."""

    replies: list[Response] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    async def _chat(self, request: Request) -> Response:
        self.bodies.append(await request.json())
        self.headers.append(dict(request.headers))
        return self.replies.pop(0)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    def model(self, **options: Any) -> OpenAICompatibleModel:
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app()))
        return OpenAICompatibleModel("http://llm.test/v1/", "tiny", http_client=client, **options)


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


async def test_it_satisfies_the_model_protocol(server: FakeServer) -> None:
    assert isinstance(server.model(), Model)


async def test_the_request_carries_the_conversation_tools_and_schema_in_openai_wire_format(
    server: FakeServer,
) -> None:
    server.replies.append(_reply({"role": "assistant", "content": "done"}))
    model = server.model(api_key="sk-test", extra_body={"temperature": 0, "max_tokens": 64})
    conversation = [
        Message("system", "You are a shop assistant."),
        Message("user", "Where is order 7?"),
        Message("assistant", None, tool_calls=(ToolCall("call_1", "get_order", {"id": "7"}),)),
        Message("tool", '{"status": "shipped"}', tool_call_id="call_1"),
    ]

    await model.complete(conversation, tools=[LOOKUP], response_format=RESPONSE_FORMAT)

    assert server.bodies == [
        {
            "model": "tiny",
            "messages": [
                {"role": "system", "content": "You are a shop assistant."},
                {"role": "user", "content": "Where is order 7?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_order", "arguments": '{"id": "7"}'},
                        }
                    ],
                },
                {"role": "tool", "content": '{"status": "shipped"}', "tool_call_id": "call_1"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_order",
                        "description": "Show an order.",
                        "parameters": LOOKUP.parameters,
                    },
                }
            ],
            "response_format": RESPONSE_FORMAT,
            "temperature": 0,
            "max_tokens": 64,
        }
    ]
    assert server.headers[0]["authorization"] == "Bearer sk-test"


async def test_without_tools_or_schema_the_request_has_neither_key_nor_an_auth_header(
    server: FakeServer,
) -> None:
    server.replies.append(_reply({"role": "assistant", "content": "hi"}))

    await server.model().complete([Message("user", "hello")])

    assert server.bodies == [{"model": "tiny", "messages": [{"role": "user", "content": "hello"}]}]
    assert "authorization" not in server.headers[0]


async def test_the_json_object_style_rewrites_the_schema_the_way_llama_server_accepts(
    server: FakeServer,
) -> None:
    server.replies += [_reply({"role": "assistant", "content": "{}"}) for _ in range(2)]
    model = server.model(schema_style="json_object")

    await model.complete([Message("user", "jeans")], response_format=RESPONSE_FORMAT)
    await model.complete([Message("user", "jeans")], response_format={"type": "json_object"})

    assert [body["response_format"] for body in server.bodies] == [
        {"type": "json_object", "schema": SCHEMA},
        {"type": "json_object"},
    ]


async def test_the_reply_text_and_usage_come_back_as_a_completion(server: FakeServer) -> None:
    server.replies.append(
        _reply(
            {"role": "assistant", "content": '{"text": "jeans"}'},
            {"prompt_tokens": 31, "completion_tokens": 7, "total_tokens": 38},
        )
    )

    completion = await server.model().complete([Message("user", "jeans")])

    assert completion.message == Message("assistant", '{"text": "jeans"}')
    assert completion.usage == Usage(31, 7)


async def test_a_reply_cut_at_its_token_bound_says_so(server: FakeServer) -> None:
    server.replies.append(_reply({"role": "assistant", "content": "c=jea"}, finish="length"))
    server.replies.append(_reply({"role": "assistant", "content": "c=jeans"}))

    cut = await server.model().complete([Message("user", "jeans")])
    whole = await server.model().complete([Message("user", "jeans")])

    assert (cut.truncated, whole.truncated) == (True, False)


async def test_a_reply_without_usage_has_none(server: FakeServer) -> None:
    server.replies.append(_reply({"role": "assistant", "content": "ok"}))

    completion = await server.model().complete([Message("user", "hi")])

    assert completion.usage is None


async def test_tool_calls_in_the_reply_are_parsed_with_decoded_arguments(
    server: FakeServer,
) -> None:
    server.replies.append(
        _reply(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"id": "7"}'},
                    },
                    {"id": "call_10", "type": "function", "function": {"name": "list_orders"}},
                ],
            }
        )
    )

    completion = await server.model().complete([Message("user", "order 7?")], tools=[LOOKUP])

    assert completion.message == Message(
        "assistant",
        None,
        tool_calls=(
            ToolCall("call_9", "get_order", {"id": "7"}),
            ToolCall("call_10", "list_orders", {}),
        ),
    )


async def test_tool_call_arguments_that_are_not_json_are_a_model_error(
    server: FakeServer,
) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "get_order", "arguments": "{id"}}
    server.replies.append(_reply({"role": "assistant", "content": None, "tool_calls": [call]}))

    with pytest.raises(ModelError, match="not JSON"):
        await server.model().complete([Message("user", "order?")], tools=[LOOKUP])


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {"error": {"message": "Incorrect API key", "type": "auth"}}, "Incorrect API key"),
        (400, {"error": {"message": "bad schema", "code": 400}}, "bad schema"),
        (500, {"error": {"code": 500, "message": "json_schema unsupported"}}, "unsupported"),
        (503, {"error": "overloaded"}, "overloaded"),
    ],
)
async def test_http_error_answers_become_model_errors_with_the_servers_message(
    server: FakeServer, status: int, body: dict[str, Any], expected: str
) -> None:
    server.replies.append(JSONResponse(body, status_code=status))

    with pytest.raises(ModelError, match=expected) as caught:
        await server.model().complete([Message("user", "hi")])

    assert caught.value.http_status == status
    assert caught.value.body == body


async def test_an_error_answer_that_is_not_json_keeps_its_text(server: FakeServer) -> None:
    server.replies.append(PlainTextResponse("upstream gone", status_code=502))

    with pytest.raises(ModelError, match=r"HTTP 502.*upstream gone"):
        await server.model().complete([Message("user", "hi")])


@pytest.mark.parametrize(
    "reply",
    [
        JSONResponse({"choices": []}),
        JSONResponse({"object": "list"}),
        PlainTextResponse("not json"),
    ],
)
async def test_a_success_answer_without_a_message_is_a_model_error(
    server: FakeServer, reply: Response
) -> None:
    server.replies.append(reply)

    with pytest.raises(ModelError):
        await server.model().complete([Message("user", "hi")])


def test_an_unknown_schema_style_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="schema_style"):
        OpenAICompatibleModel("http://llm.test/v1", "tiny", schema_style="grammar")  # type: ignore[arg-type]


async def test_closing_leaves_a_caller_supplied_client_open() -> None:
    client = httpx.AsyncClient()
    async with OpenAICompatibleModel("http://llm.test/v1", "tiny", http_client=client):
        pass
    assert not client.is_closed
    await client.aclose()


# Real sockets: where the socket is the point (a server that never answers, one that is gone).


@pytest.fixture
def listening_socket() -> Iterator[socket.socket]:
    """Bound and listening on 127.0.0.1: the kernel accepts connections nobody reads."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    with sock:
        yield sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()
    return f"http://{host}:{port}/v1"


async def test_a_server_that_never_answers_times_out_as_a_model_error(
    listening_socket: socket.socket,
) -> None:
    async with OpenAICompatibleModel(_url(listening_socket), "tiny", timeout=0.2) as model:
        with pytest.raises(ModelError, match=r"did not answer within 0\.2 s") as caught:
            await model.complete([Message("user", "hi")])

    assert caught.value.http_status is None


async def test_a_refused_connection_is_a_model_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = _url(probe)  # closed again before the call: nothing listens there

    async with OpenAICompatibleModel(url, "tiny") as model:
        with pytest.raises(ModelError, match="could not reach") as caught:
            await model.complete([Message("user", "hi")])

    assert caught.value.http_status is None


async def test_a_completion_over_a_real_socket(
    server: FakeServer, listening_socket: socket.socket
) -> None:
    reply = {"role": "assistant", "content": json.dumps({"text": "jeans"})}
    server.replies.append(_reply(reply, {"prompt_tokens": 3, "completion_tokens": 4}))
    uvicorn_server = uvicorn.Server(uvicorn.Config(server.app(), log_level="warning"))
    # The socket already listens, so the request waits in the backlog until uvicorn accepts it.
    thread = threading.Thread(
        target=uvicorn_server.run, kwargs={"sockets": [listening_socket]}, daemon=True
    )
    thread.start()
    try:
        async with OpenAICompatibleModel(_url(listening_socket), "tiny") as model:
            completion = await model.complete(
                [Message("user", "jeans")], response_format=RESPONSE_FORMAT
            )
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=10)

    assert json.loads(completion.message.content or "") == {"text": "jeans"}
    assert completion.usage == Usage(3, 4)
    assert server.bodies[0]["response_format"] == RESPONSE_FORMAT
