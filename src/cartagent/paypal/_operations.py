"""Every operation of the two clients, written once.

An operation is a method that builds a flow (see :mod:`._core`). :class:`operation` makes it a
method of both clients: :class:`~._sync.PayPalClient` runs the flow and returns its result,
:class:`~._async.AsyncPayPalClient` is a coroutine function that does. A new endpoint is
therefore one method on :class:`Client`, whatever the client; the subclasses only say how a
flow's steps are carried out (blocking or awaited).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, Unpack, overload

import httpx

from ._config import Credentials, RetryPolicy
from ._core import CallOptions, Core, Flow
from ._paths import ORDER, ORDER_CAPTURE, ORDERS, api_path

__all__ = ["AsyncClient", "SyncClient"]

P = ParamSpec("P")
T = TypeVar("T")


class operation(Generic[P, T]):  # noqa: N801 - used as a decorator, like property
    """A client method from a method that builds its flow: run (sync) or awaited (async)."""

    def __init__(self, build: Callable[Concatenate[Client, P], Flow[T]]) -> None:
        self._build = build
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, client: None, owner: type[Client]) -> Self: ...

    @overload
    def __get__(self, client: SyncClient, owner: type[Client]) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, client: AsyncClient, owner: type[Client]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: Client | None, owner: type[Client]) -> Any:
        if client is None:
            return self
        flow = self._build.__get__(client, owner)  # the builder as a bound method
        if isinstance(client, AsyncClient):
            return _awaited(client, flow)
        if isinstance(client, SyncClient):
            return _blocking(client, flow)
        raise TypeError(f"{owner.__name__} is neither a sync nor an async client")


def _blocking(client: SyncClient, flow: Callable[..., Flow[Any]]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return client._run(flow(*args, **kwargs))

    return functools.update_wrapper(call, flow)


def _awaited(client: AsyncClient, flow: Callable[..., Flow[Any]]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await client._run(flow(*args, **kwargs))

    return functools.update_wrapper(call, flow)


class Client:
    """What both clients are: a :class:`~._core.Core` and the operations below."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        base_url: str,
        retry: RetryPolicy,
        timeout: float,
        clock: Callable[[], float],
    ) -> None:
        self._core = Core(
            Credentials(client_id, client_secret),
            base_url=base_url,
            retry=retry,
            timeout=timeout,
            clock=clock,
        )

    @property
    def base_url(self) -> str:
        return self._core.base_url

    @operation
    def request_raw(
        self, method: str, path: str, **options: Unpack[CallOptions]
    ) -> Flow[httpx.Response]:
        """Send one call and return the successful ``httpx.Response`` (e.g. a PNG)."""
        return self._core.call_flow(method, path, **options)

    @operation
    def request(self, method: str, path: str, **options: Unpack[CallOptions]) -> Flow[Any]:
        """Send one call; return its parsed JSON body (``None`` if empty)."""
        return self._core.json_flow(method, path, **options)

    @operation
    def get(self, path: str, *, params: Mapping[str, Any] | None = None) -> Flow[Any]:
        return self._core.json_flow("GET", path, params=params)

    @operation
    def post(
        self,
        path: str,
        json: Any = None,
        *,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Flow[Any]:
        return self._core.json_flow(
            "POST", path, json=json, idempotency_key=idempotency_key, headers=headers
        )

    @operation
    def patch(self, path: str, json: Any) -> Flow[Any]:
        return self._core.json_flow("PATCH", path, json=json)

    @operation
    def put(self, path: str, json: Any) -> Flow[Any]:
        return self._core.json_flow("PUT", path, json=json)

    @operation
    def delete(self, path: str) -> Flow[Any]:
        return self._core.json_flow("DELETE", path)

    @operation
    def create_order(
        self, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> Flow[dict[str, Any]]:
        """``POST /v2/checkout/orders``."""
        return self._core.json_flow("POST", ORDERS, json=body, idempotency_key=idempotency_key)

    @operation
    def get_order(self, order_id: str) -> Flow[dict[str, Any]]:
        return self._core.json_flow("GET", api_path(ORDER, order_id))

    @operation
    def capture_order(
        self, order_id: str, *, idempotency_key: str | None = None
    ) -> Flow[dict[str, Any]]:
        """Capture an approved order; pass ``idempotency_key`` to make a later retry safe."""
        path = api_path(ORDER_CAPTURE, order_id)
        return self._core.json_flow("POST", path, idempotency_key=idempotency_key)


class SyncClient(Client, ABC):
    """A client whose operations block until their flow is done."""

    @abstractmethod
    def _run(self, flow: Flow[T]) -> T:
        """Carry out ``flow``'s steps; its result."""


class AsyncClient(Client, ABC):
    """A client whose operations are coroutine functions."""

    @abstractmethod
    async def _run(self, flow: Flow[T]) -> T:
        """Carry out ``flow``'s steps; its result."""
