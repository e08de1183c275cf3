"""The request logic both clients share, written once as generators (sans-I/O).

A flow yields steps (send this request, sleep this long, give me a token) and receives
their outcomes; the sync and async clients only differ in how they carry the steps out.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, TypeVar, Unpack

import httpx

from ._auth import TOKEN_PATH, AccessToken, TokenCache
from ._config import Credentials, RetryPolicy
from ._errors import api_error, debug_id_of, oauth_error, transport_failure

__all__ = ["Authorize", "CallOptions", "Core", "Flow", "Send", "Sleep", "Step", "parse_body"]

logger = logging.getLogger("cartagent.paypal")

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
USER_AGENT = "cartagent-paypal/0.1"


@dataclass(frozen=True)
class Send:
    """Send ``request``; the outcome is an ``httpx.Response`` or the ``httpx.TransportError``."""

    request: httpx.Request


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Authorize:
    """Get a usable access token, other than ``stale`` (the one a 401 just rejected)."""

    stale: AccessToken | None = None


Step = Send | Sleep | Authorize
Flow = Generator[Step, Any, T]


class CallOptions(TypedDict, total=False):
    """What a call carries besides its method and path (see :meth:`Core.call_flow`)."""

    json: Any
    params: Mapping[str, Any] | None
    headers: Mapping[str, str] | None
    idempotency_key: str | None


def parse_body(response: httpx.Response) -> Any:
    """Parsed JSON, ``None`` for an empty body, the text if it is not JSON."""
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta or HTTP date), or ``None``."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _debug_id(response: httpx.Response) -> str | None:
    return debug_id_of(response, parse_body(response) if response.is_error else None)


class Core:
    """Builds requests, runs the retry loop, maps answers to results or typed errors."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        base_url: str,
        retry: RetryPolicy,
        timeout: float,
        clock: Callable[[], float],
    ) -> None:
        self.credentials = credentials
        self.base_url = str(base_url).rstrip("/")
        self.retry = retry
        self.timeout = httpx.Timeout(timeout)
        self.clock = clock
        self.tokens = TokenCache(clock)
        self.random: Callable[[], float] = random.random

    def url(self, path: str) -> str:
        # Absolute URLs (HATEOAS links from a response) are followed as given.
        if path.startswith(("https://", "http://")):
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        request = httpx.Request(method, url, **kwargs)
        request.extensions["timeout"] = self.timeout.as_dict()
        return request

    def token_flow(self) -> Flow[AccessToken]:
        """Fetch a fresh access token and cache it."""

        def build() -> httpx.Request:
            return self._request(
                "POST",
                self.url(TOKEN_PATH),
                data={"grant_type": "client_credentials"},
                headers={
                    "Authorization": self.credentials.basic_authorization(),
                    "Accept": "application/json",
                    "User-Agent": USER_AGENT,
                },
            )

        response = yield from self._exchange(build, retryable=True, request_id=None)
        if response.is_error:
            raise oauth_error(response)
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return self.tokens.store(payload)

    def call_flow(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Flow[httpx.Response]:
        """One API call: authorize, send with retries, refresh once on 401, map errors."""
        method = method.upper()
        merged = httpx.Headers(headers or {})
        request_id = idempotency_key or merged.get("paypal-request-id")
        if request_id is None and method not in SAFE_METHODS:
            request_id = str(uuid.uuid4())
        if request_id is not None:
            merged["PayPal-Request-Id"] = request_id
        merged.setdefault("Accept", "application/json")
        merged.setdefault("User-Agent", USER_AGENT)
        # A write without a key might be applied twice; with one, PayPal replays the first answer.
        retryable = method in SAFE_METHODS or request_id is not None
        url = self.url(path)
        token: AccessToken = yield Authorize()

        def build() -> httpx.Request:
            return self._request(
                method,
                url,
                json=json,
                params=params,
                headers={**merged, "Authorization": f"Bearer {token.value}"},
            )

        response = yield from self._exchange(build, retryable=retryable, request_id=request_id)
        if response.status_code == 401:
            token = yield Authorize(stale=token)
            response = yield from self._exchange(build, retryable=retryable, request_id=request_id)
        if response.is_error:
            raise api_error(response, request_id)
        return response

    def json_flow(self, method: str, path: str, **options: Unpack[CallOptions]) -> Flow[Any]:
        """:meth:`call_flow`, answering the parsed JSON body (``None`` if empty)."""
        return parse_body((yield from self.call_flow(method, path, **options)))

    def _exchange(
        self, build: Callable[[], httpx.Request], *, retryable: bool, request_id: str | None
    ) -> Flow[httpx.Response]:
        """Send until an answer that is not worth retrying, or the attempts run out."""
        attempt = 1
        while True:
            request = build()
            started = self.clock()
            outcome = yield Send(request)
            elapsed_ms = (self.clock() - started) * 1000
            last = not retryable or attempt >= self.retry.max_attempts
            if isinstance(outcome, httpx.TransportError):
                logger.debug(
                    "%s %s -> %s after %.0f ms (attempt %d)",
                    request.method, request.url.path, type(outcome).__name__, elapsed_ms, attempt,
                )  # fmt: skip
                if last:
                    raise transport_failure(outcome, request_id) from outcome
                delay = self.retry.backoff(attempt, self.random())
            else:
                response: httpx.Response = outcome
                logger.debug(
                    "%s %s -> %d debug_id=%s in %.0f ms (attempt %d)",
                    request.method, request.url.path, response.status_code,
                    _debug_id(response), elapsed_ms, attempt,
                )  # fmt: skip
                if last or response.status_code not in RETRY_STATUSES:
                    return response
                asked = retry_after(response)
                if asked is not None and asked > self.retry.max_retry_after:
                    return response
                delay = self.retry.backoff(attempt, self.random()) if asked is None else asked
            yield Sleep(delay)
            attempt += 1
