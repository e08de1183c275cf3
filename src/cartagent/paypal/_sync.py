"""The blocking client."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TypeVar, cast

import httpx

from ._auth import AccessToken
from ._config import DEFAULT_RETRY, Environment, RetryPolicy
from ._core import Authorize, Flow, Send, Sleep
from ._operations import SyncClient

__all__ = ["PayPalClient"]

T = TypeVar("T")


class PayPalClient(SyncClient):
    """A PayPal REST client: OAuth2, ``PayPal-Request-Id``, retries, typed errors."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        base_url: str = Environment.SANDBOX,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(
            client_id, client_secret, base_url=base_url, retry=retry, timeout=timeout, clock=clock
        )
        self._http = httpx.Client(transport=transport, timeout=timeout)
        self._sleep = sleep
        self._token_lock = threading.Lock()

    def _run(self, flow: Flow[T]) -> T:
        outcome: Any = None
        try:
            while True:
                step = flow.send(outcome)
                if isinstance(step, Send):
                    try:
                        outcome = self._http.send(step.request)
                    except httpx.TransportError as exc:
                        outcome = exc
                elif isinstance(step, Sleep):
                    self._sleep(step.seconds)
                    outcome = None
                else:
                    outcome = self._access_token(step)
        except StopIteration as stop:
            return cast(T, stop.value)
        finally:
            flow.close()

    def _access_token(self, step: Authorize) -> AccessToken:
        token = self._core.tokens.usable(step.stale)
        if token is not None:
            return token
        with self._token_lock:
            # Another thread may have refreshed while this one waited.
            token = self._core.tokens.usable(step.stale)
            return token if token is not None else self._run(self._core.token_flow())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
