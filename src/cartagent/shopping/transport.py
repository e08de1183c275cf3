"""How cartagent's protocol clients talk to a merchant: one transport for ACP and UCP.

A :class:`ProtocolTransport` holds an ``httpx.Client`` whose connections go only to public
addresses (:mod:`cartagent.outbound`, unless told otherwise), reads at most :data:`MAX_BODY`
bytes of any answer, and retries: transport errors with exponential back-off, and the answers
a protocol marks retryable (503, and 409 while the same idempotency key is still in flight)
after their ``Retry-After``, a bounded number of times. Each call keeps its ``Idempotency-Key``
across the tries (the caller builds the request once; ``prepare`` signs each try afresh), so a
retried payment is answered, never made twice. A destination the guarded transport refuses
(:class:`~cartagent.errors.DestinationRefused`) is never retried. What a refusal means is the
protocol's: each client passes its own ``refusal`` hook.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import httpx
import orjson

from ..errors import CheckoutError, DestinationRefused
from ..outbound import Resolver, guarded_transport, host_refusal, system_resolver

__all__ = [
    "IN_FLIGHT",
    "MAX_BODY",
    "MAX_FEED",
    "MAX_WAIT",
    "RETRY_STATUSES",
    "ClosingClient",
    "ProtocolTransport",
    "Reply",
    "backoff",
    "checked_merchant_url",
    "malformed",
    "read",
    "refused_destination",
]

MAX_BODY = 4 * 1024 * 1024
"""Bytes read from one answer; a longer one is refused as malformed."""
MAX_FEED = 64 * 1024 * 1024
"""Bytes read from a product feed (a whole catalog in one answer)."""
MAX_WAIT = 5.0
"""The longest wait between two tries, in seconds, whatever ``Retry-After`` says."""
RETRY_STATUSES = (409, 503)
IN_FLIGHT = ("idempotency_in_flight", "in_progress")
"""The codes of a 409 that mean "the same key is still being answered": worth a retry."""


def backoff(attempt: int) -> float:
    """Seconds before try ``attempt + 1`` after a transport error (0.2, 0.4, 0.8 ... at most 5)."""
    return float(min(MAX_WAIT, 0.2 * 2**attempt))


def refused_destination(error: DestinationRefused) -> CheckoutError:
    """The :class:`CheckoutError` (403, ``destination_refused``) a protocol client raises for a
    merchant URL at a non-public address (see :mod:`cartagent.outbound`)."""
    return CheckoutError(str(error), code="destination_refused", status=403)


def malformed(message: str, *, who: str = "the merchant") -> CheckoutError:
    """A 502 ``invalid_response``: ``who`` answered something this client cannot read."""
    return CheckoutError(
        f"{who} answered something malformed: {message}", code="invalid_response", status=502
    )


def checked_merchant_url(url: str, *, allow_private: bool) -> str:
    """``url`` if a protocol client may send to it, checked before httpx reads it (httpx
    refuses ``0177.0.0.1`` as malformed): :func:`refused_destination`'s error for a host spelled
    as a non-public address (unless ``allow_private``), ``invalid`` for no URL at all."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    reason = None if allow_private else host_refusal(host)
    if reason is not None:
        refused = DestinationRefused(f"refused to send to {url}: {reason}", url=url)
        raise refused_destination(refused)
    try:
        httpx.URL(url)
    except httpx.InvalidURL as error:
        raise CheckoutError(f"{url} is not a valid URL: {error}", code="invalid") from None
    return url


@dataclass(frozen=True)
class Reply:
    """One answer, read whole (at most :data:`MAX_BODY` bytes)."""

    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        """The body as JSON (``ValueError`` if it is not)."""
        return orjson.loads(self.body)

    def object(self) -> dict[str, Any] | None:
        """The body if it is a JSON object, else ``None``."""
        try:
            body = self.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def code(self) -> str:
        """The ``code`` of a JSON-object body (at most 128 characters), else ``""``."""
        body = self.object()
        return str(body.get("code", ""))[:128] if body is not None else ""

    def retry_after(self, attempt: int) -> float:
        """Seconds to wait before the next try: ``Retry-After``, else the back-off."""
        wait = backoff(attempt)
        with contextlib.suppress(ValueError):
            wait = float(self.headers.get("Retry-After", ""))
        return wait if math.isfinite(wait) else MAX_WAIT

    def retryable(self, attempt: int) -> float | None:
        """Seconds to wait before retrying, or ``None`` if this is the answer."""
        if self.status not in RETRY_STATUSES:
            return None
        if self.status == 409 and self.code() not in IN_FLIGHT:
            return None
        return self.retry_after(attempt)


class ProtocolTransport:
    """A merchant's base URL behind a guarded, bounded, retrying HTTP client.

    ``who`` names the other side in errors ("the merchant", "the business"); ``refusal`` turns
    an answer that is not 2xx into the protocol's :class:`CheckoutError`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        who: str,
        refusal: Callable[[Reply], CheckoutError],
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        attempts: int = 3,
        sleep: Callable[[float], None],
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.base_url = checked_merchant_url(base_url.rstrip("/"), allow_private=allow_private)
        self.who = who
        self._refusal = refusal
        guarded = guarded_transport(transport, allow_private=allow_private, resolver=resolver)
        self.http = httpx.Client(base_url=self.base_url, transport=guarded, timeout=timeout)
        self._attempts = max(1, attempts)
        self._sleep = sleep

    def send(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] = {},
        prepare: Callable[[httpx.Request], None] | None = None,
        attempts: int | None = None,
        limit: int = MAX_BODY,
        refusal: Callable[[Reply], CheckoutError] | None = None,
    ) -> Reply:
        """The 2xx answer to ``method path`` (at most ``limit`` bytes), after at most
        ``attempts`` tries (the transport's by default); the protocol's ``refusal`` (the
        transport's by default) for any other. ``prepare`` runs on each try's request before it
        is sent (a fresh signature)."""

        def one_try() -> Reply:
            request = self.http.build_request(method, path, content=content, headers=headers)
            if prepare is not None:
                prepare(request)
            return read(self.http, request, who=self.who, limit=limit)

        reply = self._with_retries(one_try, self._attempts if attempts is None else attempts)
        if not reply.ok:
            raise (refusal or self._refusal)(reply)
        return reply

    def _with_retries(self, one_try: Callable[[], Reply], tries: int) -> Reply:
        tries = max(1, tries)
        for attempt in range(tries):
            try:
                reply = one_try()
            except DestinationRefused as error:
                raise refused_destination(error) from error
            except httpx.TransportError as error:
                if attempt + 1 >= tries:
                    raise CheckoutError(
                        f"{self.who} cannot be reached: {error}", code="unreachable", status=503
                    ) from error
                self._sleep(backoff(attempt))
                continue
            wait = reply.retryable(attempt)
            if wait is None or attempt + 1 >= tries:
                return reply
            self._sleep(max(0.0, min(MAX_WAIT, wait)))
        raise AssertionError("unreachable: the last try returns or raises")

    def close(self) -> None:
        self.http.close()


class ClosingClient:
    """``close()`` and ``with`` for a protocol client holding a :class:`ProtocolTransport` as
    ``_transport``."""

    _transport: ProtocolTransport

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read(
    http: httpx.Client, request: httpx.Request, *, who: str = "the merchant", limit: int = MAX_BODY
) -> Reply:
    """Send ``request`` and read at most ``limit`` bytes of the answer (more is
    :func:`malformed`)."""
    response = http.send(request, stream=True)
    try:
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise malformed(f"an answer of more than {limit} bytes", who=who)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > limit:
                raise malformed(f"an answer of more than {limit} bytes", who=who)
            chunks.append(chunk)
    finally:
        response.close()
    return Reply(response.status_code, response.headers, b"".join(chunks))
