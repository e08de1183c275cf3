"""The sandbox as an OAuth authorization server: its metadata, and JWT access tokens for a
requested resource and scope, verifiable with the key set the metadata names."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from cartagent.jwt import JwksKeys, http_jwks
from cartagent.mcp import JwtTokenVerifier
from cartagent.sandbox import Sandbox, ensure_merchant
from tests.paypal.conftest import TestClientTransport

ISSUER = "http://sandbox.test"
TOKEN = "/v1/sandbox/oauth2/token"
RESOURCE = "http://127.0.0.1:8811/mcp"
CLIENT = ("as-test-client", "as-test-secret")


@pytest.fixture
def merchant_id(sandbox: Sandbox) -> str:
    return ensure_merchant(sandbox, *CLIENT)


def request_token(http: TestClient, form: Any, auth: tuple[str, str] = CLIENT) -> Any:
    basic = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    headers = {"Authorization": f"Basic {basic}"}
    if isinstance(form, bytes):
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return http.post(TOKEN, content=form, headers=headers)
    return http.post(TOKEN, data=form, headers=headers)


def test_the_metadata_names_the_issuer_its_token_endpoint_and_key_set(http: TestClient) -> None:
    response = http.get("/.well-known/oauth-authorization-server")

    assert response.status_code == 200
    metadata = response.json()
    assert metadata["issuer"] == ISSUER
    assert metadata["token_endpoint"] == ISSUER + TOKEN
    assert metadata["jwks_uri"] == ISSUER + "/v1/agentic-commerce/jwks"
    assert metadata["grant_types_supported"] == ["client_credentials"]
    assert metadata["token_endpoint_auth_methods_supported"] == ["client_secret_basic"]
    assert http.get(metadata["jwks_uri"]).json()["keys"]


def _header(token: str) -> dict[str, Any]:
    head = token.split(".")[0]
    loaded: dict[str, Any] = orjson.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return loaded


def test_a_client_credentials_token_is_a_jwt_for_the_requested_resource_and_scope(
    http: TestClient, merchant_id: str
) -> None:
    form = {"grant_type": "client_credentials", "resource": RESOURCE, "scope": "mcp:tools b"}
    response = request_token(http, form)

    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert (body["token_type"], body["expires_in"], body["scope"]) == ("Bearer", 900, "mcp:tools b")
    assert _header(body["access_token"])["typ"] == "at+jwt"
    jwks = http_jwks(f"{ISSUER}/v1/agentic-commerce/jwks", transport=TestClientTransport(http))
    verifier = JwtTokenVerifier(JwksKeys(jwks), issuer=ISSUER, audience=RESOURCE)
    granted = verifier.verify(body["access_token"])
    assert granted.scopes == ["mcp:tools", "b"]
    assert (granted.subject, granted.client_id) == (merchant_id, CLIENT[0])
    assert granted.claims is not None and granted.claims["jti"]


def test_without_a_scope_the_token_grants_none(http: TestClient, merchant_id: str) -> None:
    response = request_token(http, {"grant_type": "client_credentials", "resource": RESOURCE})

    assert response.status_code == 200
    assert "scope" not in response.json()


GOOD = {"grant_type": "client_credentials", "resource": RESOURCE}


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"resource": RESOURCE}, "unsupported_grant_type"),
        ({**GOOD, "grant_type": "authorization_code"}, "unsupported_grant_type"),
        ({"grant_type": "client_credentials"}, "invalid_target"),
        ({**GOOD, "resource": "ftp://127.0.0.1/mcp"}, "invalid_target"),
        ({**GOOD, "resource": "/mcp"}, "invalid_target"),
        ({**GOOD, "resource": "http://127.0.0.1/mcp#top"}, "invalid_target"),
        ({**GOOD, "resource": "http://127.0.0.1/a b"}, "invalid_target"),
        ({**GOOD, "resource": "http://127.0.0.1/" + "a" * 2048}, "invalid_target"),
        ({**GOOD, "scope": 'mcp:tools "admin"'}, "invalid_scope"),
        ({**GOOD, "scope": "a  b"}, "invalid_scope"),
        ({**GOOD, "scope": " ".join(f"s{i}" for i in range(21))}, "invalid_scope"),
        (b"grant_type=client_credentials&resource=a&resource=b", "invalid_request"),
        (b"grant_type=client_credentials&resource=" + b"a" * 5000, "invalid_request"),
        (b"grant_type=client_credentials&resource=\xff", "invalid_request"),
    ],
)
def test_bad_requests_are_oauth_errors(
    http: TestClient, merchant_id: str, form: Any, error: str
) -> None:
    response = request_token(http, form)

    assert response.status_code == 400
    assert response.json()["error"] == error
    assert response.json()["error_description"]


def test_the_client_must_authenticate(http: TestClient, merchant_id: str) -> None:
    assert request_token(http, GOOD).status_code == 200  # the same request, authenticated
    for auth in ((CLIENT[0], "wrong"), ("nobody", CLIENT[1])):
        response = request_token(http, GOOD, auth)
        assert response.status_code == 401
        assert response.json()["error"] == "invalid_client"
    assert http.post(TOKEN, data=GOOD).status_code == 401
