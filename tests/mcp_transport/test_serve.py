"""The streamable HTTP app in-process: its body limit and its token come before the body is
read, and a message no text can hold is a parse error the server survives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from mcp.server.lowlevel import Server
from starlette.applications import Starlette

from cartagent.mcp_transport import MAX_BODY, http_app
from tests import asgi
from tests.asgi import megabytes

TOKEN = "test-token-0123456789abcdef"
PORT = 8811
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": f"Bearer {TOKEN}",
}


def initialize(name: str = "test") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": name, "version": "0"},
        },
    }


@pytest.fixture
def app() -> Starlette:
    return http_app(Server("limits"), token=TOKEN, host="127.0.0.1", port=PORT)


@pytest.fixture
def client(app: Starlette) -> Iterator[TestClient]:
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as http:
        yield http


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_exactly_at_the_limit_is_read_and_one_byte_more_is_413(
    client: TestClient, chunked: bool
) -> None:
    message = orjson.dumps(initialize())
    for size, status in ((MAX_BODY, 200), (MAX_BODY + 1, 413)):
        body = message + b" " * (size - len(message))  # trailing whitespace: still the message
        content = iter([body[:4096], body[4096:]]) if chunked else body
        response = client.post("/mcp", content=content, headers=HEADERS)
        assert response.status_code == status, size
    assert "1,048,576 bytes" in response.json()["detail"]


@pytest.mark.anyio
@pytest.mark.parametrize("token", [None, "not-the-token-0123456789"])
async def test_a_big_body_without_the_token_gets_401_and_is_never_read(
    app: Starlette, token: str | None
) -> None:
    headers = {k: v for k, v in HEADERS.items() if k != "Authorization"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    sent = await asgi.request(app, "POST", "/mcp", headers=headers, chunks=megabytes(64))
    assert sent.status == 401
    assert sent.pulled == 0


def test_a_lone_surrogate_is_a_parse_error_and_the_next_message_is_answered(
    client: TestClient,
) -> None:
    # Valid JSON, but "\ud800" decodes to a lone surrogate, which no UTF-8 text holds.
    broken = orjson.dumps(initialize("NAME")).replace(b"NAME", b"\\ud800")
    refused = client.post("/mcp", content=broken, headers=HEADERS)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("Parse error")
    assert "hex escape at line 1" in refused.json()["error"]["message"]  # the SDK's words
    answered = client.post("/mcp", json=initialize(), headers=HEADERS)
    assert answered.status_code == 200 and answered.json()["result"]["serverInfo"]
