"""A turn's reply as Server-Sent Events.

Events, each ``event: <name>`` and one ``data:`` line of JSON:

- ``domain`` ``{"domain": "discovery"}`` (``null`` when the input was refused unrouted);
- ``delta`` ``{"text": "word "}``, in order: joined, they are the reply's text;
- ``card`` one product card per event, in rank order (the fields of the JSON reply's cards);
- ``done`` ``{"domain": ..., "timings": {...}, "data": {...}}``, last;
- ``error`` ``{"status": 409, "detail": "..."}`` instead of all of the above if the turn failed.

While the turn runs, a comment line (``: keep-alive``) goes out every ``keepalive`` seconds so
that proxies keep the connection open.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any

import orjson

from ..assistant import Reply
from .failures import failure
from .schemas import Card

__all__ = ["KEEPALIVE", "frame", "reply_events", "text_deltas"]

KEEPALIVE = b": keep-alive\n\n"

log = logging.getLogger("cartagent.web")

# A word with the spacing after it (and, for the first, before it); text of spaces alone is one.
_WORDS = re.compile(r"\s*\S+\s*|\s+")


def frame(event: str, data: Mapping[str, Any]) -> bytes:
    """One event; orjson never writes a newline, so the data fits the one ``data:`` line."""
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def text_deltas(text: str) -> list[str]:
    """``text`` in word-sized pieces that join back to exactly ``text``."""
    return _WORDS.findall(text)


async def reply_events(
    turn: Coroutine[Any, Any, Reply], *, keepalive: float = 15.0
) -> AsyncIterator[bytes]:
    """Run ``turn`` and stream its reply; if the client goes away, the turn is cancelled."""
    task = asyncio.ensure_future(turn)
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=keepalive)
            if not task.done():
                yield KEEPALIVE
        reply = task.result()
    except Exception as error:
        status, detail = failure(error)
        if status == 500:
            log.error("turn failed: %s", type(error).__name__, exc_info=error)
        yield frame("error", {"status": status, "detail": detail})
        return
    finally:
        task.cancel()
    domain = None if reply.domain is None else reply.domain.value
    yield frame("domain", {"domain": domain})
    for piece in text_deltas(reply.text):
        yield frame("delta", {"text": piece})
    for card in reply.cards:
        yield frame("card", Card.of(card).model_dump())
    done = {"domain": domain, "timings": dict(reply.timings), "data": dict(reply.data)}
    yield frame("done", done)
