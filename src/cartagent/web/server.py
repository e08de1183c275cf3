"""Running several ASGI apps under uvicorn in one process and one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Generator

import uvicorn

from ..heap import frozen_heap

__all__ = ["serve_together"]


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to :func:`serve_together`.

    Each uvicorn server would install its own handlers, the second replacing the first's;
    one handler for the process stops them all.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def serve_together(configs: list[uvicorn.Config]) -> None:
    """Serve every config until SIGINT/SIGTERM, or until one server stops (e.g. its port was
    taken); then stop the others. Requests in flight are answered first; a second Ctrl-C
    stops waiting for them."""
    servers = [_Server(config) for config in configs]
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        for server in servers:
            server.force_exit = server.should_exit
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        # What was loaded before serving (catalog, indexes, models) stays: see cartagent.heap.
        with frozen_heap():
            tasks = [asyncio.create_task(server.serve()) for server in servers]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for server in servers:
                server.should_exit = True
            await asyncio.gather(*tasks)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
