"""The resource server's half of MCP authorization: JWT access tokens checked against the
issuer's key set, the issuer's metadata discovered, and options checked before serving."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from mcp.server import Server

from cartagent.errors import ConfigurationError
from cartagent.jwt import InvalidToken, JwksKeys, KeysUnavailable
from cartagent.mcp_transport import JwtTokenVerifier, OAuthResource, http_app, oauth_resource
from cartagent.mcp_transport.oauth import discovered_jwks
from tests.mcp.tokens import (
    Fetches,
    ec_key,
    flip_signature,
    jwk,
    rsa_key,
    sign,
    unsigned,
    with_claims,
)

pytestmark = pytest.mark.anyio
ISSUER = "https://as.example"
RESOURCE = "http://127.0.0.1:8811/mcp"
NOW = 1_800_000_000


def claims(**changes: Any) -> dict[str, Any]:
    base = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "MERCHANT1",
        "client_id": "client-1",
        "scope": "mcp:tools mcp:admin",
        "iat": NOW,
        "exp": NOW + 900,
    }
    return {key: value for key, value in {**base, **changes}.items() if value is not None}


def keys_of_the_issuer() -> Fetches:
    return Fetches(jwk(rsa_key(), "rsa-1"), jwk(ec_key(), "ec-1"))


def verifier(fetch: Callable[[], Any] | None = None, **options: Any) -> JwtTokenVerifier:
    keys = JwksKeys(fetch or keys_of_the_issuer(), clock=lambda: 0.0)
    settings: dict[str, Any] = {"issuer": ISSUER, "audience": RESOURCE, **options}
    return JwtTokenVerifier(keys, clock=lambda: NOW + 10.0, **settings)


def good(**changes: Any) -> str:
    return sign(claims(**changes), rsa_key(), kid="rsa-1")


# Verifying -----------------------------------------------------------------------------------


def test_a_good_token_becomes_the_sdks_access_token() -> None:
    token = good()
    found = verifier().verify(token)

    assert (found.token, found.client_id, found.subject) == (token, "client-1", "MERCHANT1")
    assert found.scopes == ["mcp:tools", "mcp:admin"]
    assert (found.expires_at, found.resource) == (NOW + 900, RESOURCE)
    assert found.claims is not None and found.claims["iss"] == ISSUER


def test_es256_lists_of_audiences_and_scp_lists_are_understood() -> None:
    es256 = sign(claims(aud=["https://other.example", RESOURCE]), ec_key(), kid="ec-1")
    assert verifier().verify(es256).resource == RESOURCE
    scp = good(scope=None, scp=["mcp:tools"], client_id=None, azp="app-2")
    found = verifier().verify(scp)
    assert (found.scopes, found.client_id) == (["mcp:tools"], "app-2")
    assert verifier(audience="api://cartagent").verify(good(aud="api://cartagent"))


def test_leeway_covers_small_clock_skew_and_no_more() -> None:
    assert verifier().verify(good(exp=NOW - 5, nbf=NOW + 20, iat=NOW + 20))
    with pytest.raises(InvalidToken, match="expired"):
        verifier(leeway=0).verify(good(exp=NOW - 5))


def _hs256_keyed_with_the_public_key() -> str:
    pem = (
        rsa_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return unsigned(claims(), kid="rsa-1", alg="HS256", secret=pem)


REFUSED: dict[str, tuple[Callable[[], str], str]] = {
    "expired": (lambda: good(exp=NOW - 60), "expired"),
    "no exp": (lambda: good(exp=None), "exp is missing"),
    "not yet valid": (lambda: good(nbf=NOW + 3600), "not valid yet"),
    "issued in the future": (lambda: good(iat=NOW + 3600), "not valid yet"),
    "another issuer": (lambda: good(iss="https://evil.example"), "another authorization"),
    "no issuer": (lambda: good(iss=None), "another authorization"),
    "another audience": (lambda: good(aud="http://127.0.0.1:9999/mcp"), "another resource"),
    "audiences without ours": (lambda: good(aud=["https://x.example"]), "another resource"),
    "no audience": (lambda: good(aud=None), "another resource"),
    "alg none": (lambda: unsigned(claims(), kid="rsa-1"), "alg must be"),
    "HS256 keyed with the public key": (_hs256_keyed_with_the_public_key, "alg must be"),
    "RS256 naming the EC key": (lambda: sign(claims(), rsa_key(), kid="ec-1"), "not signed"),
    "an unknown kid": (lambda: sign(claims(), rsa_key("other"), kid="rsa-2"), "not signed"),
    "another key under our kid": (
        lambda: sign(claims(), rsa_key("other"), kid="rsa-1"),
        "signature is invalid",
    ),
    "a flipped signature bit": (lambda: flip_signature(good()), "signature is invalid"),
    "claims changed after signing": (
        lambda: with_claims(good(), claims(scope="mcp:tools mcp:admin root")),
        "signature is invalid",
    ),
    "a crit header": (lambda: sign(claims(), rsa_key(), kid="rsa-1", crit=["exp"]), "critical"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_tokens_that_are_not_the_issuers_for_us_now_are_refused(case: str) -> None:
    make, reason = REFUSED[case]
    with pytest.raises(InvalidToken, match=reason):
        verifier().verify(make())


async def test_the_sdk_hook_answers_none_for_a_refused_token_or_unreachable_keys() -> None:
    assert await verifier().verify_token(good()) is not None
    assert await verifier().verify_token(good(aud="http://elsewhere.example")) is None

    def unreachable() -> dict[str, Any]:
        raise OSError("no route to the issuer")

    assert await verifier(unreachable).verify_token(good()) is None


def test_an_unknown_kid_refetches_the_keys_at_most_once_a_minute() -> None:
    fetch = keys_of_the_issuer()
    now = [0.0]
    check = JwtTokenVerifier(
        JwksKeys(fetch, clock=lambda: now[0]),
        issuer=ISSUER,
        audience=RESOURCE,
        clock=lambda: NOW,
    )
    check.verify(good())
    rotated = sign(claims(), rsa_key("rotated"), kid="rsa-2")
    fetch.keys.append(jwk(rsa_key("rotated"), "rsa-2"))
    for _ in range(5):  # a flood of unknown kids costs no fetch within the minute
        with pytest.raises(InvalidToken):
            check.verify(rotated)
    assert fetch.count == 1
    now[0] = 61.0
    assert check.verify(rotated)
    assert fetch.count == 2


# Discovery -------------------------------------------------------------------------------------


def issuer_transport(routes: dict[str, Any]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        body = routes.get(str(request.url))
        return httpx.Response(404) if body is None else httpx.Response(200, json=body)

    return httpx.MockTransport(handle)


JWKS = {"keys": [jwk(rsa_key(), "rsa-1")]}


@pytest.mark.parametrize(
    "metadata_url",
    [
        f"{ISSUER}/.well-known/oauth-authorization-server/tenant",  # RFC 8414 §3.1
        f"{ISSUER}/tenant/.well-known/openid-configuration",  # the fallback
    ],
)
def test_the_key_set_is_found_from_the_issuers_metadata(metadata_url: str) -> None:
    issuer = f"{ISSUER}/tenant"
    transport = issuer_transport(
        {metadata_url: {"issuer": issuer, "jwks_uri": f"{ISSUER}/keys"}, f"{ISSUER}/keys": JWKS}
    )
    keys = JwksKeys(discovered_jwks(issuer, transport=transport))
    check = JwtTokenVerifier(keys, issuer=issuer, audience=RESOURCE, clock=lambda: NOW)

    assert check.verify(good(iss=issuer))


@pytest.mark.parametrize(
    "metadata",
    [
        {"issuer": "https://evil.example", "jwks_uri": f"{ISSUER}/keys"},
        {"issuer": ISSUER},
        {"issuer": ISSUER, "jwks_uri": "http://keys.example/keys"},
    ],
)
def test_metadata_for_another_issuer_or_without_a_trusted_jwks_uri_gives_no_keys(
    metadata: dict[str, Any],
) -> None:
    transport = issuer_transport(
        {
            f"{ISSUER}/.well-known/oauth-authorization-server": metadata,
            f"{ISSUER}/keys": JWKS,
            "http://keys.example/keys": JWKS,
        }
    )
    with pytest.raises(KeysUnavailable):
        JwksKeys(discovered_jwks(ISSUER, transport=transport)).key("rsa-1")


def test_an_explicit_jwks_url_is_used_as_given() -> None:
    transport = issuer_transport({"https://keys.example/jwks": JWKS})
    resource = oauth_resource(
        issuer=ISSUER, resource=RESOURCE, jwks_url="https://keys.example/jwks", transport=transport
    )
    assert isinstance(resource.verifier, JwtTokenVerifier)
    assert resource.verifier.keys.key("rsa-1") is not None
    assert resource.verifier.audience == RESOURCE


# Options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"issuer": "http://as.example"}, "--issuer"),
        ({"issuer": "https://as.example?tenant=1"}, "--issuer"),
        ({"issuer": "as.example"}, "--issuer"),
        ({"jwks_url": "http://keys.example/jwks"}, "--jwks-url"),
        ({"resource": "ftp://127.0.0.1/mcp"}, "--resource-url"),
        ({"resource": "http://127.0.0.1:8811/mcp#x"}, "--resource-url"),
        ({"audience": 'api "cartagent"'}, "--audience"),
        ({"required_scopes": ("mcp:tools", 'x"y')}, "--required-scope"),
        ({"required_scopes": ("",)}, "--required-scope"),
    ],
)
def test_bad_options_are_configuration_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        oauth_resource(**{"issuer": ISSUER, "resource": RESOURCE, **options})


def test_loopback_issuers_may_use_plain_http() -> None:
    for issuer in ("http://127.0.0.1:8765", "http://localhost:8765", "http://[::1]:8765"):
        assert oauth_resource(issuer=issuer, resource=RESOURCE).issuer == issuer


def test_the_sdk_settings_name_the_issuer_and_resource_exactly() -> None:
    resource = OAuthResource(
        "http://127.0.0.1:8765", RESOURCE, verifier(), required_scopes=("mcp:tools",)
    )
    settings = resource.settings()

    assert str(settings.issuer_url) == "http://127.0.0.1:8765"  # no trailing slash added
    assert str(settings.resource_server_url) == RESOURCE
    assert settings.required_scopes == ["mcp:tools"]
    assert [r.path for r in resource.routes()] == ["/.well-known/oauth-protected-resource"]
    root = OAuthResource(ISSUER, "https://mcp.example/", verifier())
    assert root.routes() == []  # the SDK's own route is the root path already


def test_the_http_app_takes_a_static_token_or_oauth_not_both() -> None:
    oauth = OAuthResource(ISSUER, RESOURCE, verifier())
    with pytest.raises(ConfigurationError, match="exclusive"):
        http_app(Server("test"), token="t" * 16, oauth=oauth, host="127.0.0.1", port=8811)
    assert http_app(Server("test"), oauth=oauth, host="127.0.0.1", port=8811)
