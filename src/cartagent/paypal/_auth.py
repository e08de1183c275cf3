"""OAuth2 client-credentials tokens: the request, and a cache that knows when to refresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cartagent.errors import PayPalAuthError

__all__ = ["TOKEN_PATH", "AccessToken", "TokenCache"]

TOKEN_PATH = "/v1/oauth2/token"
# Refresh this long before expiry, so a token never dies between the check and PayPal's.
REFRESH_MARGIN = 60.0


class AccessToken:
    """One issued token. Compared by identity: PayPal may reissue the same string."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class TokenCache:
    """The current access token and when it must be replaced, by ``clock``'s reckoning."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._token: AccessToken | None = None
        self._refresh_at = 0.0

    def usable(self, stale: AccessToken | None = None) -> AccessToken | None:
        """The cached token if still fresh and not the one a 401 just rejected."""
        if self._token is None or self._token is stale or self._clock() >= self._refresh_at:
            return None
        return self._token

    def store(self, payload: Any) -> AccessToken:
        """Cache the token endpoint's JSON answer; return the access token."""
        if not isinstance(payload, dict) or not isinstance(payload.get("access_token"), str):
            raise PayPalAuthError("token endpoint answered without an access_token", name="")
        expires_in = float(payload.get("expires_in", 0) or 0)
        margin = min(REFRESH_MARGIN, expires_in / 2)
        self._token = AccessToken(payload["access_token"])
        self._refresh_at = self._clock() + expires_in - margin
        return self._token
