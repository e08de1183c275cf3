"""``serve_together`` serves with the startup heap frozen and unfreezes it after."""

from __future__ import annotations

import asyncio
import gc

import pytest
import uvicorn

from cartagent.web import server


async def _app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("never called")


def test_servers_run_with_the_heap_frozen_and_it_is_unfrozen_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[int] = []

    async def serve(self: uvicorn.Server, sockets: object = None) -> None:
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(server._Server, "serve", serve)
    config = uvicorn.Config(_app, host="127.0.0.1", port=0)
    asyncio.run(server.serve_together([config, config]))
    assert len(seen) == 2 and all(count > 0 for count in seen)
    assert gc.get_freeze_count() == 0
