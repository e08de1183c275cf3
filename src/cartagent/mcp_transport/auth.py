"""Bearer-token checking for the HTTP transport: one shared secret, compared in constant time."""

from __future__ import annotations

import hmac

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from ..errors import ConfigurationError

MIN_TOKEN_LENGTH = 16
CLIENT_ID = "cartagent-mcp-client"


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for a single configured token (e.g. from a secret store)."""

    def __init__(self, token: str | None) -> None:
        if not token:
            raise ConfigurationError("the HTTP transport needs a bearer token; none was given")
        if len(token) < MIN_TOKEN_LENGTH:
            raise ConfigurationError(
                f"the bearer token must be at least {MIN_TOKEN_LENGTH} characters long"
            )
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id=CLIENT_ID, scopes=[])
        return None


def auth_settings(server_url: str) -> AuthSettings:
    """Settings that turn on bearer checking and nothing else.

    ``issuer_url`` is required by the SDK but only used to publish OAuth metadata, which this
    server (a plain resource server with a static token) does not do.
    """
    return AuthSettings(issuer_url=server_url, resource_server_url=None)  # type: ignore[arg-type]
