"""The asyncio client: the same flows as the blocking one, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self, TypeVar, cast

import httpx

from ._auth import AccessToken
from ._config import DEFAULT_RETRY, Environment, RetryPolicy
from ._core import Authorize, Flow, Send, Sleep
from ._operations import AsyncClient

__all__ = ["AsyncPayPalClient"]

T = TypeVar("T")


class AsyncPayPalClient(AsyncClient):
    """The async PayPal REST client; concurrent callers share one token refresh."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        base_url: str = Environment.SANDBOX,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(
            client_id, client_secret, base_url=base_url, retry=retry, timeout=timeout, clock=clock
        )
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout)
        self._sleep = sleep
        self._token_lock = asyncio.Lock()

    async def _run(self, flow: Flow[T]) -> T:
        outcome: Any = None
        try:
            while True:
                step = flow.send(outcome)
                if isinstance(step, Send):
                    try:
                        outcome = await self._http.send(step.request)
                    except httpx.TransportError as exc:
                        outcome = exc
                elif isinstance(step, Sleep):
                    await self._sleep(step.seconds)
                    outcome = None
                else:
                    outcome = await self._access_token(step)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            flow.close()

    async def _access_token(self, step: Authorize) -> AccessToken:
        token = self._core.tokens.usable(step.stale)
        if token is not None:
            return token
        async with self._token_lock:
            # Whoever held the lock before may have refreshed already: one refresh for all.
            token = self._core.tokens.usable(step.stale)
            return token if token is not None else await self._run(self._core.token_flow())

    async def close(self) -> None:
        await self._http.aclose()

    aclose = close

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
