"""The HTTP transport as an OAuth 2.1 resource server, as MCP's authorization spec has it.

Clients get access tokens from an authorization server and send them as bearer tokens; the
server verifies them as JWTs (RFC 9068: signature by the issuer's JWK Set, ``iss``, ``aud``,
``exp``/``nbf``) and publishes where to get them, as OAuth 2.0 Protected Resource Metadata
(RFC 9728). The SDK serves that document at ``/.well-known/oauth-protected-resource/mcp`` and
names it in every 401's ``WWW-Authenticate``; :meth:`OAuthResource.routes` adds the root form
``/.well-known/oauth-protected-resource`` that clients fall back to.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
import httpx
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from starlette.routing import Route

from ..errors import ConfigurationError
from ..jwt import (
    InvalidToken,
    JwksFetcher,
    JwksKeys,
    KeysUnavailable,
    audiences,
    check_lifetime,
    get_json,
    http_jwks,
    scopes,
    verify_signed,
)

__all__ = ["JwtTokenVerifier", "OAuthResource", "discovered_jwks", "oauth_resource"]

log = logging.getLogger("cartagent.mcp")

ALGORITHMS = ("RS256", "ES256")
ROOT_METADATA_PATH = "/.well-known/oauth-protected-resource"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_URL = 2048
# RFC 6749 §3.3 scope-token; it also keeps '"' and '\' out of WWW-Authenticate.
_SCOPE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,128}$")
_AUDIENCE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,2048}$")


class JwtTokenVerifier:
    """The SDK's ``TokenVerifier`` for JWT access tokens issued by ``issuer`` for ``audience``,
    signed RS256 or ES256 with a key of ``keys``, valid now (``clock``) give or take
    ``leeway`` seconds."""

    def __init__(
        self,
        keys: JwksKeys,
        *,
        issuer: str,
        audience: str,
        leeway: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.clock = clock

    def verify(self, token: str) -> AccessToken:
        """The token's grant; :class:`InvalidToken` or :class:`KeysUnavailable` otherwise."""
        claims = verify_signed(token, self.keys, algorithms=ALGORITHMS)
        expires = check_lifetime(claims, now=self.clock(), leeway=self.leeway, require_iat=False)
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        if self.audience not in audiences(claims.get("aud")):
            raise InvalidToken("the token is for another resource")
        client = next(
            (v for k in ("client_id", "azp", "sub") if isinstance(v := claims.get(k), str)), ""
        )
        subject = claims.get("sub")
        return AccessToken(
            token=token,
            client_id=client,
            # ``scp`` (a list) is where some authorization servers put what RFC 9068 calls scope.
            scopes=list(scopes(claims.get("scope", claims.get("scp")))),
            expires_at=int(expires),
            resource=self.audience,
            subject=subject if isinstance(subject, str) else None,
            claims=claims,
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            # A worker thread: an unknown kid may fetch the key set, which blocks.
            return await anyio.to_thread.run_sync(self.verify, token)
        except InvalidToken as error:
            log.info("refused an MCP access token: %s", error.reason)
        except KeysUnavailable as error:
            log.warning("no MCP access token can be checked now: %s", error)
        return None


def _metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 §3.1 (well-known before the issuer's path), then OpenID Connect Discovery."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def discovered_jwks(
    issuer: str, *, timeout: float = 5.0, transport: httpx.BaseTransport | None = None
) -> JwksFetcher:
    """A fetcher for the key set named by ``issuer``'s metadata (``jwks_uri``), found on first
    use; the metadata must name ``issuer`` as its issuer (RFC 8414 §3.3)."""
    found: list[str] = []

    def jwks_uri() -> str:
        errors = []
        for url in _metadata_urls(issuer):
            try:
                metadata = get_json(
                    url, timeout=timeout, transport=transport, what="server metadata"
                )
            except (httpx.HTTPError, ValueError) as error:
                errors.append(f"{url}: {error}")
                continue
            uri = metadata.get("jwks_uri")
            if metadata.get("issuer") != issuer or not isinstance(uri, str):
                errors.append(f"{url}: not {issuer}'s metadata with a jwks_uri")
                continue
            return _trusted_url(uri, "the discovered jwks_uri", error=ValueError)
        raise ValueError("; ".join(errors))

    def fetch() -> Mapping[str, Any]:
        if not found:
            found.append(jwks_uri())
        return http_jwks(found[0], timeout=timeout, transport=transport)()

    return fetch


def _trusted_url(value: str, what: str, *, error: type[Exception] = ConfigurationError) -> str:
    """``value`` if it is https, or http to this machine: keys fetched over plain HTTP from
    elsewhere could be anyone's."""
    parts = urlsplit(value)
    local = parts.scheme == "http" and parts.hostname in LOOPBACK
    if len(value) > MAX_URL or not (parts.scheme == "https" or local) or not parts.hostname:
        raise error(f"{what} {value!r}: expected an https URL (or http to 127.0.0.1/localhost)")
    return value


@dataclass(frozen=True)
class OAuthResource:
    """``/mcp`` as a resource (``resource``, its URL) that ``issuer``'s tokens grant access to,
    checked by ``verifier``; ``required_scopes``: what every token must hold."""

    issuer: str
    resource: str
    verifier: TokenVerifier
    required_scopes: tuple[str, ...] = ()

    def settings(self) -> AuthSettings:
        # From plain strings, so the model keeps a path-less issuer without a trailing slash.
        return AuthSettings.model_validate(
            {
                "issuer_url": self.issuer,
                "resource_server_url": self.resource,
                "required_scopes": list(self.required_scopes) or None,
                "validate_token_resource": False,  # the verifier checks ``aud`` itself
            }
        )

    def routes(self) -> list[Route]:
        """The metadata at the root well-known path too, when the resource has a path."""
        settings = self.settings()
        resource = settings.resource_server_url
        if resource is None or not urlsplit(self.resource).path.strip("/"):
            return []  # without a path, the SDK's own route is the root path already
        [route] = create_protected_resource_routes(
            resource_url=resource,
            authorization_servers=[settings.issuer_url],
            scopes_supported=settings.required_scopes,
        )
        return [Route(ROOT_METADATA_PATH, endpoint=route.endpoint, methods=["GET", "OPTIONS"])]


def oauth_resource(
    *,
    issuer: str,
    resource: str,
    jwks_url: str | None = None,
    audience: str | None = None,
    required_scopes: tuple[str, ...] = (),
    transport: httpx.BaseTransport | None = None,
) -> OAuthResource:
    """The resource server for checked options; :class:`ConfigurationError` for bad ones.

    ``jwks_url`` defaults to the ``jwks_uri`` of the issuer's metadata, ``audience`` to
    ``resource``.
    """
    _trusted_url(issuer, "--issuer")
    if urlsplit(issuer).query or urlsplit(issuer).fragment:  # RFC 8414 §2
        raise ConfigurationError(f"--issuer {issuer!r}: expected no query or fragment")
    parts = urlsplit(resource)
    if len(resource) > MAX_URL or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"--resource-url {resource!r}: expected an http(s) URL")
    if parts.query or parts.fragment:
        raise ConfigurationError(f"--resource-url {resource!r}: expected no query or fragment")
    if audience is not None and not _AUDIENCE.match(audience):
        raise ConfigurationError(f"--audience {audience!r}: expected printable ASCII, no quotes")
    for scope in required_scopes:
        if not _SCOPE.match(scope):
            raise ConfigurationError(f"--required-scope {scope!r}: not an OAuth scope token")
    fetch = (
        http_jwks(_trusted_url(jwks_url, "--jwks-url"), transport=transport)
        if jwks_url is not None
        else discovered_jwks(issuer, transport=transport)
    )
    verifier = JwtTokenVerifier(JwksKeys(fetch), issuer=issuer, audience=audience or resource)
    return OAuthResource(issuer, resource, verifier, required_scopes)
