"""How cartagent's protocol clients retry a call: transport errors with exponential back-off,
and the answers a protocol marks retryable after their ``Retry-After``, a bounded number of
times. Each call keeps its ``Idempotency-Key`` across the tries (the caller builds the request
once), so a retried payment is answered, never made twice. A destination the client's guarded
transport refuses (:class:`~cartagent.errors.DestinationRefused`) is never retried."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Self, TypeVar
from urllib.parse import urlsplit

import httpx

from ..errors import CheckoutError, DestinationRefused
from ..outbound import host_refusal

__all__ = [
    "MAX_WAIT",
    "ClosingClient",
    "backoff",
    "checked_merchant_url",
    "refused_destination",
    "with_retries",
]

MAX_WAIT = 5.0
R = TypeVar("R")


def backoff(attempt: int) -> float:
    """Seconds before try ``attempt + 1`` after a transport error (0.2, 0.4, 0.8 ... at most 5)."""
    return float(min(MAX_WAIT, 0.2 * 2**attempt))


def refused_destination(error: DestinationRefused) -> CheckoutError:
    """The :class:`CheckoutError` (403, ``destination_refused``) a protocol client raises for a
    merchant URL at a non-public address (see :mod:`cartagent.outbound`)."""
    return CheckoutError(str(error), code="destination_refused", status=403)


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


def with_retries(
    send: Callable[[], R],
    *,
    attempts: int,
    sleep: Callable[[float], None],
    retry_after: Callable[[R, int], float | None],
    who: str,
) -> R:
    """``send()`` until it answers something ``retry_after`` does not mark retryable (it
    returns the seconds to wait, or ``None`` for a final answer), or ``attempts`` run out.

    A transport error on the last try raises :class:`CheckoutError` (503, ``unreachable``), a
    refused destination at once :func:`refused_destination`'s.
    """
    for attempt in range(attempts):
        try:
            reply = send()
        except DestinationRefused as error:
            raise refused_destination(error) from error
        except httpx.TransportError as error:
            if attempt + 1 >= attempts:
                raise CheckoutError(
                    f"the {who} cannot be reached: {error}", code="unreachable", status=503
                ) from error
            sleep(backoff(attempt))
            continue
        wait = retry_after(reply, attempt)
        if wait is None or attempt + 1 >= attempts:
            return reply
        sleep(max(0.0, min(MAX_WAIT, wait)))
    raise AssertionError("attempts must be at least 1")


class ClosingClient:
    """``with`` support for a client holding an ``httpx.Client`` as ``_http``."""

    _http: httpx.Client

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
