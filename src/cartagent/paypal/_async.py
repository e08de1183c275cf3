"""The asyncio client: the same flows as the blocking one, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack, cast

import httpx

from ._auth import AccessToken
from ._config import DEFAULT_RETRY, Credentials, Environment, RetryPolicy
from ._core import Authorize, CallOptions, Core, Flow, Send, Sleep
from ._paths import ORDER, ORDER_CAPTURE, ORDERS, api_path

__all__ = ["AsyncPayPalClient"]

T = TypeVar("T")


class AsyncPayPalClient:
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
        self._core = Core(
            Credentials(client_id, client_secret),
            base_url=base_url,
            retry=retry,
            timeout=timeout,
            clock=clock,
        )
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout)
        self._sleep = sleep
        self._token_lock = asyncio.Lock()

    @property
    def base_url(self) -> str:
        return self._core.base_url

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

    async def request_raw(
        self, method: str, path: str, **options: Unpack[CallOptions]
    ) -> httpx.Response:
        """Send one call and return the successful ``httpx.Response`` (e.g. a PNG)."""
        return await self._run(self._core.call_flow(method, path, **options))

    async def request(self, method: str, path: str, **options: Unpack[CallOptions]) -> Any:
        """Send one call; return its parsed JSON body (``None`` if empty)."""
        return await self._run(self._core.json_flow(method, path, **options))

    async def get(self, path: str, *, params: Mapping[str, Any] | None = None) -> Any:
        return await self.request("GET", path, params=params)

    async def post(
        self,
        path: str,
        json: Any = None,
        *,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        return await self.request(
            "POST", path, json=json, idempotency_key=idempotency_key, headers=headers
        )

    async def patch(self, path: str, json: Any) -> Any:
        return await self.request("PATCH", path, json=json)

    async def put(self, path: str, json: Any) -> Any:
        return await self.request("PUT", path, json=json)

    async def delete(self, path: str) -> Any:
        return await self.request("DELETE", path)

    async def create_order(
        self, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``POST /v2/checkout/orders``."""
        order: dict[str, Any] = await self.post(ORDERS, body, idempotency_key=idempotency_key)
        return order

    async def get_order(self, order_id: str) -> dict[str, Any]:
        order: dict[str, Any] = await self.get(api_path(ORDER, order_id))
        return order

    async def capture_order(
        self, order_id: str, *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Capture an approved order; pass ``idempotency_key`` to make a later retry safe."""
        path = api_path(ORDER_CAPTURE, order_id)
        order: dict[str, Any] = await self.post(path, idempotency_key=idempotency_key)
        return order

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
