"""The body limit every server but the sandbox shares: the limit and the credentials are
checked before the body is read, exactly at the limit a body passes, one byte over it does not."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Message, Scope

from cartagent.body_limit import Admits, BodyLimit, Refusal, carries_body
from tests.asgi import megabytes, request

pytestmark = pytest.mark.anyio
LIMIT = 1000


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"read": len(await request.body())})


async def swallowing(request: Request) -> JSONResponse:
    try:
        await request.body()
    except Exception:
        return JSONResponse({"detail": "could not read the body"}, status_code=400)
    return JSONResponse({"read": "all"})


def limited(admits: Admits | None = None, refusal: Refusal | None = None) -> BodyLimit:
    routes = [
        Route("/echo", echo, methods=["POST"]),
        Route("/swallow", swallowing, methods=["POST"]),
    ]
    return BodyLimit(Starlette(routes=routes), max_bytes=LIMIT, admits=admits, refusal=refusal)


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "chunked"])
async def test_a_body_exactly_at_the_limit_is_read(declare: bool) -> None:
    chunks = [b"x" * 400, b"x" * 400, b"x" * 200]
    sent = await request(limited(), "POST", "/echo", chunks=chunks, declare=declare)
    assert (sent.status, sent.json()) == (200, {"read": LIMIT})


async def test_a_declared_body_one_byte_over_the_limit_is_413_and_never_read() -> None:
    sent = await request(limited(), "POST", "/echo", chunks=[b"x" * (LIMIT + 1)], declare=True)
    assert sent.status == 413
    assert sent.json() == {"detail": "the request body is larger than 1,000 bytes"}
    assert sent.headers["connection"] == "close"
    assert sent.pulled == 0


async def test_a_chunked_body_one_byte_over_the_limit_is_413_as_soon_as_it_passes() -> None:
    chunks = [b"x" * 500, b"x" * 500, b"x", *megabytes(8)]
    sent = await request(limited(), "POST", "/echo", chunks=chunks)
    assert sent.status == 413 and "1,000 bytes" in sent.json()["detail"]
    assert sent.pulled == LIMIT + 1  # not one chunk past the one that crossed the limit


async def test_an_app_that_makes_something_else_of_the_refused_read_still_answers_413() -> None:
    sent = await request(limited(), "POST", "/swallow", chunks=[b"x" * 600, b"x" * 600])
    assert sent.status == 413 and "1,000 bytes" in sent.json()["detail"]


async def test_a_body_of_a_caller_admits_refuses_reaches_the_app_empty_and_unread() -> None:
    seen: list[str] = []

    def admits(scope: Scope) -> bool:
        seen.append(scope["path"])
        return False

    for declare, chunks in ((False, megabytes(64)), (True, [b"x" * 900])):
        sent = await request(
            limited(admits=admits), "POST", "/echo", chunks=chunks, declare=declare
        )
        assert (sent.status, sent.json()) == (200, {"read": 0})
        assert sent.pulled == 0
        assert sent.headers["connection"] == "close"  # the server drops the rest, unread
    assert seen == ["/echo", "/echo"]


async def test_a_body_of_a_caller_admits_accepts_is_read() -> None:
    sent = await request(limited(admits=lambda scope: True), "POST", "/echo", chunks=[b"x" * 10])
    assert (sent.status, sent.json()) == (200, {"read": 10})
    assert "connection" not in sent.headers


def test_only_a_declared_length_or_a_transfer_encoding_carries_a_body() -> None:
    def scope(*headers: tuple[bytes, bytes]) -> Scope:
        return {"type": "http", "headers": list(headers)}

    assert carries_body(scope((b"content-length", b"12")))
    assert carries_body(scope((b"transfer-encoding", b"chunked")))
    assert not carries_body(scope((b"content-length", b"0")))
    assert not carries_body(scope())


async def test_the_refusal_gives_the_413_the_servers_own_error_shape() -> None:
    def refusal(scope: Scope, message: str) -> bytes:
        return b'{"code": "request_too_large", "path": "' + scope["path"].encode() + b'"}'

    for declare in (True, False):
        sent = await request(
            limited(refusal=refusal), "POST", "/echo", chunks=[b"x" * 2000], declare=declare
        )
        assert (sent.status, sent.json()) == (413, {"code": "request_too_large", "path": "/echo"})


# --- what the middleware sends and what the app receives, message by message ---------------


def _scope(*headers: tuple[bytes, bytes], path: str = "/raw") -> Scope:
    return {"type": "http", "method": "POST", "path": path, "headers": list(headers)}


async def _exchange(
    app: BodyLimit, scope: Scope, body: list[bytes]
) -> tuple[list[Message], list[Message]]:
    """What ``app`` sent, and what the client still had unread (its body, then a disconnect)."""
    incoming: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": n < len(body) - 1}
        for n, chunk in enumerate(body)
    ] + [{"type": "http.disconnect"}]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent, incoming


def _refuser_seeing(received: list[Message], *, start: list[tuple[bytes, bytes]] | None) -> Any:
    """A raw app that reads twice, then answers with ``start``'s headers (no ``headers`` key
    at all when ``None``)."""

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        received.append(await receive())
        received.append(await receive())
        message: Message = {"type": "http.response.start", "status": 401}
        if start is not None:
            message["headers"] = start
        await send(message)
        await send({"type": "http.response.body", "body": b""})

    return app


async def test_a_refused_callers_app_reads_an_empty_body_then_only_the_disconnect() -> None:
    received: list[Message] = []
    keep_alive = [(b"content-type", b"text/plain"), (b"Connection", b"keep-alive")]
    app = BodyLimit(
        _refuser_seeing(received, start=keep_alive), max_bytes=LIMIT, admits=lambda s: False
    )
    sent, unread = await _exchange(app, _scope((b"transfer-encoding", b"chunked")), [b"a", b"b"])
    assert received == [
        {"type": "http.request", "body": b"", "more_body": False},
        {"type": "http.disconnect"},
    ]
    assert unread == []  # the body chunks were pulled only to reach the disconnect, and dropped
    assert sent[0]["headers"] == [(b"content-type", b"text/plain"), (b"connection", b"close")]


async def test_a_refused_callers_app_may_answer_without_headers() -> None:
    app = BodyLimit(_refuser_seeing([], start=None), max_bytes=LIMIT, admits=lambda s: False)
    sent, _ = await _exchange(app, _scope((b"content-length", b"3")), [b"abc"])
    assert sent[0] == {
        "type": "http.response.start",
        "status": 401,
        "headers": [(b"connection", b"close")],
    }


async def test_the_413_is_json_of_its_length_closing_the_connection() -> None:
    sent, _ = await _exchange(
        limited(), _scope((b"content-length", b"1001"), path="/echo"), [b"x" * 1001]
    )
    body = b'{"detail":"the request body is larger than 1,000 bytes"}'
    assert sent == [
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        },
        {"type": "http.response.body", "body": body},
    ]


async def test_a_refusal_may_add_headers_to_the_413() -> None:
    def refusal(scope: Scope, message: str) -> tuple[bytes, dict[str, str]]:
        return b'{"name": "TOO_LARGE"}', {"PayPal-Debug-Id": "dbg-1"}

    sent, _ = await _exchange(
        limited(refusal=refusal), _scope((b"content-length", b"5000"), path="/echo"), [b"x"]
    )
    assert sent[0]["headers"][-1] == (b"paypal-debug-id", b"dbg-1")
    assert sent[1] == {"type": "http.response.body", "body": b'{"name": "TOO_LARGE"}'}


async def test_an_answer_already_started_is_not_turned_into_a_413() -> None:
    async def streaming(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        while (await receive()).get("more_body"):
            pass

    app = BodyLimit(streaming, max_bytes=LIMIT)
    sent, _ = await _exchange(app, _scope((b"transfer-encoding", b"chunked")), [b"x" * 600] * 2)
    assert sent == [{"type": "http.response.start", "status": 200, "headers": []}]


async def test_an_app_that_answers_nothing_gets_nothing_added() -> None:
    async def silent(scope: Scope, receive: Any, send: Any) -> None:
        await receive()

    sent, _ = await _exchange(BodyLimit(silent, max_bytes=LIMIT), _scope(), [b"x"])
    assert sent == []


def test_an_empty_declared_length_carries_no_body() -> None:
    assert not carries_body(_scope((b"content-length", b"")))
    assert not carries_body(_scope((b"content-length", b" 0 ")))
