"""UCP v2026-08-25 platforms, answered in their release by the business built on v2026-04-08:
its profile (``keys``, the release's versions and documents, the older releases listed when it
is the root), typed destinations and option descriptions as objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Address, Agents, Merchant
from cartagent.commerce.ucp import KnownProfiles, UcpPolicy
from cartagent.errors import ConfigurationError
from cartagent.shopping.ucp import UcpClient as Shop
from tests.commerce.conftest import in_stock
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PAYMENT,
    PLATFORM,
    UcpClient,
    lines,
    platform_profile,
    serve,
)
from tests.commerce.test_ucp_checkout import DESTINATION as CURRENT_DESTINATION
from tests.paypal.conftest import TestClientTransport

V0825 = "2026-08-25"
NEW = "https://new-platform.test/.well-known/ucp"
PROFILES = KnownProfiles(
    {
        NEW: platform_profile(version=V0825, capability_version=V0825),
        PLATFORM: platform_profile(),
    }
)
DESTINATION = {**CURRENT_DESTINATION, "type": "shipping_address"}


@pytest.fixture
def business(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    with serve(merchant, agents, PROFILES, policy=UcpPolicy(version=V0825)) as http:
        yield http


def test_as_the_root_it_lists_the_older_releases(business: TestClient) -> None:
    profile = business.get("/.well-known/ucp").json()
    ucp = profile["ucp"]
    assert ucp["version"] == V0825
    assert ucp["supported_versions"] == {
        "2026-04-08": f"{BASE_URL}/.well-known/ucp/2026-04-08",
        "2026-01-11": f"{BASE_URL}/.well-known/ucp/2026-01-11",
    }
    assert "signing_keys" not in profile and profile["keys"][0]["kty"] == "EC"
    for entries in ucp["capabilities"].values():
        assert entries[0]["version"] == V0825
        assert entries[0]["spec"].startswith(f"https://ucp.dev/{V0825}/")
    older = business.get("/.well-known/ucp/2026-04-08").json()["ucp"]
    assert older["version"] == "2026-04-08" and "supported_versions" not in older


def test_a_new_platform_checks_out_in_its_release(business: TestClient, agent_token: str) -> None:
    platform = UcpClient(business, agent_token, NEW)
    body: dict[str, Any] = {
        "line_items": lines(in_stock()[0]),
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [DESTINATION]}]},
    }
    created = platform.post("/checkout-sessions", body)
    assert created.status_code == 201, created.text
    session = created.json()
    assert session["ucp"]["version"] == V0825
    assert session["status"] == "ready_for_complete", session["messages"]
    [method] = session["fulfillment"]["methods"]
    assert method["destinations"][0]["type"] == "shipping_address"
    option = method["groups"][0]["options"][0]
    assert option["description"]["plain"].startswith("Arrives between")
    [handler] = session["ucp"]["payment_handlers"]["com.paypal.checkout"]
    assert handler["version"] == V0825
    done = platform.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert done.status_code == 200 and done.json()["status"] == "completed", done.text


def test_a_release_not_served_is_unsupported(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    profiles = KnownProfiles({NEW: platform_profile(version="2027-01-01")})
    with serve(merchant, agents, profiles) as http:
        refused = UcpClient(http, agent_token, NEW).post("/checkout-sessions", {"line_items": []})
    assert refused.status_code == 422
    assert "2026-08-25, 2026-04-08, 2026-01-11" in refused.json()["content"]


def test_the_client_speaks_the_release_its_profile_declares(
    business: TestClient, agent_token: str
) -> None:
    transport = TestClientTransport(business)
    home = Address("Ada Lovelace", "1 Analytical Way", "San Francisco", "CA", "US", "94102")
    with Shop.discover(
        BASE_URL, agent_token, profile_url=NEW, transport=transport, version=V0825
    ) as shop:
        session = shop.create([(in_stock()[0], 1)], address=home)
        assert session.status == "ready_for_complete"
        assert session.raw["ucp"]["version"] == V0825
        paid = shop.complete(session.id, "BA-TEST-TOKEN-1")
        assert paid.status == "completed"
    # A client at v2026-04-08 finds that release's profile through supported_versions.
    with Shop.discover(BASE_URL, agent_token, profile_url=PLATFORM, transport=transport) as shop:
        assert shop.version == "2026-04-08" and shop.base_url == BASE_URL
        session = shop.create([(in_stock()[0], 1)], address=home)
        assert session.raw["ucp"]["version"] == "2026-04-08"
    with pytest.raises(ConfigurationError, match="speaks UCP"):
        Shop(BASE_URL, agent_token, profile_url=NEW, version="2025-10-01")
