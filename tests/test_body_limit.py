"""The body limit every server but the sandbox shares: the limit and the credentials are
checked before the body is read, exactly at the limit a body passes, one byte over it does not."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Scope

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

    sent = await request(
        limited(refusal=refusal), "POST", "/echo", chunks=[b"x" * 2000], declare=True
    )
    assert (sent.status, sent.json()) == (413, {"code": "request_too_large", "path": "/echo"})
