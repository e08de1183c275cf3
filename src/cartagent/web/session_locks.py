"""One lock per session, so that turns on one session run one after the other in-process."""

from __future__ import annotations

import asyncio
from weakref import WeakValueDictionary

__all__ = ["SessionLocks"]


class SessionLocks:
    """An :class:`asyncio.Lock` per session id, kept only while a turn holds or awaits it.

    Weak values bound the table by the turns in flight: a session nobody is answering has
    no entry. Without the lock, a quick double submit would make the second turn fail with a
    conflict instead of waiting for the first.
    """

    def __init__(self) -> None:
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()

    def lock(self, session_id: str) -> asyncio.Lock:
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        return len(self._locks)
