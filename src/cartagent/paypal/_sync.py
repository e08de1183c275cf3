"""The blocking client."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack, cast

import httpx

from ._auth import AccessToken
from ._config import DEFAULT_RETRY, Credentials, Environment, RetryPolicy
from ._core import Authorize, CallOptions, Core, Flow, Send, Sleep
from ._paths import ORDER, ORDER_CAPTURE, ORDERS, api_path

__all__ = ["PayPalClient"]

T = TypeVar("T")


class PayPalClient:
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
        self._core = Core(
            Credentials(client_id, client_secret),
            base_url=base_url,
            retry=retry,
            timeout=timeout,
            clock=clock,
        )
        self._http = httpx.Client(transport=transport, timeout=timeout)
        self._sleep = sleep
        self._token_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self._core.base_url

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

    def request_raw(self, method: str, path: str, **options: Unpack[CallOptions]) -> httpx.Response:
        """Send one call and return the successful ``httpx.Response`` (e.g. a PNG)."""
        return self._run(self._core.call_flow(method, path, **options))

    def request(self, method: str, path: str, **options: Unpack[CallOptions]) -> Any:
        """Send one call; return its parsed JSON body (``None`` if empty)."""
        return self._run(self._core.json_flow(method, path, **options))

    def get(self, path: str, *, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(
        self,
        path: str,
        json: Any = None,
        *,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        return self.request(
            "POST", path, json=json, idempotency_key=idempotency_key, headers=headers
        )

    def patch(self, path: str, json: Any) -> Any:
        return self.request("PATCH", path, json=json)

    def put(self, path: str, json: Any) -> Any:
        return self.request("PUT", path, json=json)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def create_order(
        self, body: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``POST /v2/checkout/orders``."""
        order: dict[str, Any] = self.post(ORDERS, body, idempotency_key=idempotency_key)
        return order

    def get_order(self, order_id: str) -> dict[str, Any]:
        order: dict[str, Any] = self.get(api_path(ORDER, order_id))
        return order

    def capture_order(self, order_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        """Capture an approved order; pass ``idempotency_key`` to make a later retry safe."""
        path = api_path(ORDER_CAPTURE, order_id)
        order: dict[str, Any] = self.post(path, idempotency_key=idempotency_key)
        return order

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
