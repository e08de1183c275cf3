"""Where platform profiles come from: a registry of known platforms, or fetched from the URL
the ``UCP-Agent`` header names (overview.md, "Profile Requirements: Fetching").

:class:`KnownProfiles` holds pre-approved platforms' profiles given inline (the registry the spec
recommends, and what tests use). :class:`FetchedProfiles` fetches over HTTPS, never following
redirects, with connect/read timeouts and a size cap; profiles are cached in a bounded LRU for
the origin's ``max-age`` (at least the spec's 60 s floor, at most a day) and a failed fetch is
remembered briefly so a dead or hostile endpoint is not hammered. A profile URL is someone
else's say-so: it is fetched through :func:`~cartagent.outbound.guarded_transport`, so a host
spelled as, or resolving to, a loopback, private, link-local, multicast or reserved address is
refused (unless ``allow_private``, for local development).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
import orjson

from ...errors import DestinationRefused
from ...outbound import Resolver, guarded_transport, host_refusal, system_resolver
from ...protocols.ucp.profile import ProfileMalformed

__all__ = ["FetchedProfiles", "KnownProfiles", "PlatformProfiles", "ProfileUnreachable"]


class ProfileUnreachable(Exception):
    """The profile could not be fetched (timeout, refused, non-2xx, redirect)."""


class PlatformProfiles(Protocol):
    def document(self, url: str) -> dict[str, Any]:
        """The JSON document at ``url``; raises :class:`ProfileUnreachable`, or
        :class:`~cartagent.protocols.ucp.profile.ProfileMalformed` if it is not a JSON object."""
        ...


class KnownProfiles:
    """Profiles of platforms known in advance, by URL; others go to ``fallback`` if given."""

    def __init__(
        self,
        profiles: Mapping[str, Mapping[str, Any]],
        *,
        fallback: PlatformProfiles | None = None,
    ) -> None:
        self._profiles = {url: dict(profile) for url, profile in profiles.items()}
        self._fallback = fallback

    def document(self, url: str) -> dict[str, Any]:
        known = self._profiles.get(url)
        if known is not None:
            return known
        if self._fallback is None:
            raise ProfileUnreachable(f"{url} is not a known platform profile")
        return self._fallback.document(url)


def _now() -> datetime:
    return datetime.now(UTC)


_Failure = tuple[type[ProfileUnreachable | ProfileMalformed], str]
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d{1,9})", re.IGNORECASE)


class FetchedProfiles:
    """Fetches platform profiles over HTTPS and caches them; ``allow_private`` lets them come
    from loopback and private addresses, over plain http too (local development only),
    ``resolver`` resolves hosts (tests pass one)."""

    FLOOR = timedelta(seconds=60)
    CEILING = timedelta(days=1)
    DEFAULT_TTL = timedelta(minutes=5)
    FAILURE_TTL = timedelta(seconds=30)

    def __init__(
        self,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 5.0,
        max_bytes: int = 256 * 1024,
        capacity: int = 512,
        clock: Callable[[], datetime] = _now,
        allow_private: bool = False,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.allow_private = allow_private
        self._http = httpx.Client(
            transport=guarded_transport(transport, allow_private=allow_private, resolver=resolver),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 3.0)),
            follow_redirects=False,
            headers={"Accept": "application/json"},
        )
        self.max_bytes = max_bytes
        self.capacity = capacity
        self.clock = clock
        # url -> (good until, the document or the failure's type and message)
        self._cache: OrderedDict[str, tuple[datetime, dict[str, Any] | _Failure]] = OrderedDict()
        self._lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def document(self, url: str) -> dict[str, Any]:
        now = self.clock()
        with self._lock:
            cached = self._cache.get(url)
            if cached is not None and cached[0] > now:
                self._cache.move_to_end(url)
                found = cached[1]
                if isinstance(found, tuple):
                    kind, message = found
                    raise kind(message)
                return found
        try:
            document, ttl = self._fetch(url)
        except (ProfileUnreachable, ProfileMalformed) as error:
            self._remember(url, now + self.FAILURE_TTL, (type(error), str(error)))
            raise
        self._remember(url, now + ttl, document)
        return document

    def _remember(self, url: str, until: datetime, found: dict[str, Any] | _Failure) -> None:
        with self._lock:
            self._cache[url] = (until, found)
            self._cache.move_to_end(url)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)

    def _fetch(self, url: str) -> tuple[dict[str, Any], timedelta]:
        parts = urlsplit(url)
        schemes = ("https", "http") if self.allow_private else ("https",)
        if parts.scheme not in schemes or not parts.hostname:
            raise ProfileUnreachable("profiles are only fetched over https")
        refusal = None if self.allow_private else host_refusal(parts.hostname)
        if refusal is not None:
            raise ProfileUnreachable(f"profiles are not fetched from {parts.hostname}: {refusal}")
        try:
            with self._http.stream("GET", url) as response:
                if response.is_redirect:
                    raise ProfileUnreachable(
                        "the profile URL redirects; redirects are not followed"
                    )
                if not response.is_success:
                    raise ProfileUnreachable(
                        f"the profile URL answered HTTP {response.status_code}"
                    )
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw += chunk
                    if len(raw) > self.max_bytes:
                        raise ProfileMalformed(f"the profile is larger than {self.max_bytes} bytes")
                cache_control = response.headers.get("cache-control", "")
        except httpx.HTTPError as error:
            raise ProfileUnreachable(
                f"the profile could not be fetched: {type(error).__name__}"
            ) from None
        except DestinationRefused as error:
            raise ProfileUnreachable(f"the profile was not fetched: {error}") from None
        except httpx.InvalidURL:
            raise ProfileUnreachable("the profile URL is not a valid URL") from None
        try:
            document = orjson.loads(bytes(raw))
        except orjson.JSONDecodeError:
            raise ProfileMalformed("the profile is not JSON") from None
        if not isinstance(document, dict):
            raise ProfileMalformed("the profile is not a JSON object")
        return document, self._ttl(cache_control)

    def _ttl(self, cache_control: str) -> timedelta:
        found = _MAX_AGE.search(cache_control)
        ttl = timedelta(seconds=int(found.group(1))) if found else self.DEFAULT_TTL
        return min(max(ttl, self.FLOOR), self.CEILING)
