"""UCP discovery and negotiation: the business profile, the ``UCP-Agent`` header, fetching
platform profiles (never over the network: through ``httpx.MockTransport``), version and
capability negotiation, and the request shapes derived from the release's annotations."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.ucp import (
    UCP_VERSION,
    FetchedProfiles,
    KnownProfiles,
    ProfileMalformed,
    ProfileUnreachable,
    negotiate,
)
from cartagent.protocols.ucp.agent_header import profile_url, structured_dictionary
from cartagent.protocols.ucp.payment import handlers
from cartagent.protocols.ucp.profile import (
    BUYER_CONSENT,
    CHECKOUT,
    DISCOUNT,
    FULFILLMENT,
    LOOKUP,
    ORDER,
    SEARCH,
)
from cartagent.protocols.ucp.profile import (
    platform_profile as read_profile,
)
from cartagent.protocols.ucp.schema import BASE, request_problem
from tests.commerce.conftest import in_stock
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PAYPAL,
    PLATFORM,
    UcpClient,
    conforms,
    lines,
    platform_profile,
    serve,
)

OLD = "https://old.test/.well-known/ucp"
NEWER = "https://newer.test/.well-known/ucp"
BROWSER = "https://browser.test/.well-known/ucp"
STALE_CHECKOUT = "https://stale.test/.well-known/ucp"
BROKEN = "https://broken.test/.well-known/ucp"


def _stale_checkout() -> dict[str, Any]:
    """Search at this version, checkout (and so fulfillment) only at an older one."""
    profile = platform_profile((CHECKOUT, FULFILLMENT, SEARCH))
    for name in (CHECKOUT, FULFILLMENT):
        profile["ucp"]["capabilities"][name][0]["version"] = "2026-01-23"
    return profile


PROFILES = KnownProfiles(
    {
        PLATFORM: platform_profile(),
        OLD: platform_profile(version="2026-01-23", capability_version="2026-01-23"),
        NEWER: platform_profile(version="2026-09-01"),
        BROWSER: platform_profile((SEARCH, LOOKUP)),
        STALE_CHECKOUT: _stale_checkout(),
        BROKEN: {"ucp": {"version": UCP_VERSION, "services": {}}},
    }
)


@pytest.fixture
def business(merchant: Merchant, agents: Agents) -> Iterator[Any]:
    bound = {agents.keys[1].name: frozenset({"https://b.test/.well-known/ucp"})}
    with serve(merchant, agents, PROFILES, agent_profiles=bound) as client:
        yield client


def client_for(business: Any, token: str, profile: str = PLATFORM) -> UcpClient:
    return UcpClient(business, token, profile)


def test_the_business_profile(business: Any) -> None:
    response = business.get("/.well-known/ucp")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=300"
    document = response.json()
    conforms("profile", document)
    ucp = document["ucp"]
    assert ucp["version"] == UCP_VERSION
    # The older release's own profile, where the spec says to look for it.
    assert ucp["supported_versions"] == {"2026-01-11": f"{BASE_URL}/.well-known/ucp/2026-01-11"}
    [rest] = ucp["services"]["dev.ucp.shopping"]
    assert (rest["transport"], rest["endpoint"]) == ("rest", BASE_URL)
    assert set(ucp["capabilities"]) == {
        CHECKOUT,
        FULFILLMENT,
        DISCOUNT,
        BUYER_CONSENT,
        SEARCH,
        LOOKUP,
        ORDER,
    }
    for extension in (FULFILLMENT, DISCOUNT, BUYER_CONSENT):
        assert ucp["capabilities"][extension][0]["extends"] == CHECKOUT
    for name, [entry] in ucp["capabilities"].items():
        assert entry["spec"].startswith("https://ucp.dev/"), name  # namespace authority
    [paypal] = ucp["payment_handlers"][PAYPAL]
    assert paypal["id"] == "paypal"
    [key] = document["signing_keys"]  # the key order webhooks are signed with
    assert (key["kty"], key["crv"], key["alg"], key["use"]) == ("EC", "P-256", "ES256", "sig")
    assert {"kid", "x", "y"} <= set(key) and "d" not in key  # public half only


def test_the_endpoint_follows_the_api_prefix(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    with serve(merchant, agents, PROFILES, api_prefix="/ucp") as http:
        [rest] = http.get("/.well-known/ucp").json()["ucp"]["services"]["dev.ucp.shopping"]
        assert rest["endpoint"] == f"{BASE_URL}/ucp"
        client = UcpClient(http, agent_token)
        assert (
            client.post("/ucp/checkout-sessions", {"line_items": lines(in_stock()[0])}).status_code
            == 201
        )
        assert client.post("/checkout-sessions", {"line_items": []}).status_code == 404


@pytest.mark.parametrize(
    "header",
    [
        "",
        "profile=https://platform.test/p",  # a token, not a string
        'profile="http://platform.test/p"',
        'profile="https://user:pw@platform.test/p"',
        'agent="https://platform.test/p"',
        'profile="https://platform.test/p",',
        'profile="https://platform.test/p' + "x" * 5000 + '"',
    ],
)
def test_a_missing_or_malformed_ucp_agent_is_400(
    business: Any, agent_token: str, header: str
) -> None:
    response = client_for(business, agent_token).get(
        "/checkout-sessions/cs_x", {"UCP-Agent": header}
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_profile_url")
    assert response.json()["continue_url"] == f"{BASE_URL}/shop"


def test_the_ucp_agent_header_is_an_rfc_8941_dictionary() -> None:
    parsed = structured_dictionary(
        'a=1, profile="https://p.test/x?q=\\"1\\"";v=2, flag, list=("x" y);z, b=?0, n=-1.5'
    )
    assert parsed == {
        "a": 1,
        "profile": 'https://p.test/x?q="1"',
        "flag": True,
        "list": ["x", "y"],
        "b": False,
        "n": -1.5,
    }
    assert profile_url('profile="https://p.test/ucp"') == "https://p.test/ucp"
    for broken in ('profile="open', "Profile=1", "a=1 b=2", 'a="\\x"', "a=(1"):
        with pytest.raises(ValueError):
            structured_dictionary(broken)


def test_profile_failures_are_424_and_422(business: Any, agent_token: str) -> None:
    unknown = client_for(business, agent_token, "https://stranger.test/ucp").get("/orders/x")
    assert (unknown.status_code, unknown.json()["code"]) == (424, "profile_unreachable")
    broken = client_for(business, agent_token, BROKEN).get("/orders/x")
    assert (broken.status_code, broken.json()["code"]) == (422, "profile_malformed")


@pytest.mark.parametrize("profile", [OLD, NEWER])
def test_another_protocol_version_is_version_unsupported(
    business: Any, agent_token: str, merchant: Merchant, profile: str
) -> None:
    client = client_for(business, agent_token, profile)
    response = client.post("/checkout-sessions", {"line_items": lines(in_stock()[0])})
    assert (response.status_code, response.json()["code"]) == (422, "version_unsupported")
    assert UCP_VERSION in response.json()["content"]


def test_an_operation_outside_the_negotiated_capabilities_is_incompatible(
    business: Any, agent_token: str
) -> None:
    for profile in (BROWSER, STALE_CHECKOUT):
        client = client_for(business, agent_token, profile)
        response = client.post("/checkout-sessions", {"line_items": lines(in_stock()[0])})
        assert response.status_code == 200
        body = response.json()
        conforms("checkout", body)
        assert body["ucp"] == {"version": UCP_VERSION, "status": "error", "capabilities": {}}
        [message] = body["messages"]
        assert (message["code"], message["severity"]) == (
            "capabilities_incompatible",
            "unrecoverable",
        )
        assert body["continue_url"] == f"{BASE_URL}/shop"
    # A browsing platform still searches, and the answer names only that capability.
    found = client_for(business, agent_token, BROWSER).search({"query": "t-shirt"}).json()
    assert found["ucp"]["capabilities"] == {SEARCH: [{"version": UCP_VERSION}]}
    stale = client_for(business, agent_token, STALE_CHECKOUT).search({"query": "t-shirt"}).json()
    assert list(stale["ucp"]["capabilities"]) == [SEARCH]


def test_an_agent_bound_to_profiles_may_present_only_those(business: Any, agent_token: str) -> None:
    bound = client_for(business, agent_token + "-b")
    response = bound.get("/checkout-sessions/cs_x")
    assert (response.status_code, response.json()["code"]) == (403, "profile_not_allowed")


def _platform(document: dict[str, Any]) -> Any:
    return read_profile(PLATFORM, document)


def test_the_intersection_prunes_orphaned_extensions_and_narrows_instruments() -> None:
    orphan = negotiate(_platform(platform_profile((FULFILLMENT, ORDER))), handlers("sandbox"))
    assert dict(orphan.capabilities) == {ORDER: UCP_VERSION}
    both = platform_profile(
        (CHECKOUT, FULFILLMENT),
        handlers={
            PAYPAL: [
                {
                    "id": "p",
                    "version": UCP_VERSION,
                    "spec": "https://developer.paypal.com/x",
                    "schema": "https://platform.test/x.json",
                    "available_instruments": [{"type": "card"}],
                }
            ]
        },
    )
    narrowed = negotiate(_platform(both), handlers("sandbox"))
    assert set(narrowed.capabilities) == {CHECKOUT, FULFILLMENT}
    assert dict(narrowed.payment_handlers) == {}  # the platform takes no PayPal instrument
    plain = negotiate(_platform(platform_profile()), handlers("sandbox"))
    [entry] = plain.payment_handlers[PAYPAL]
    assert "spec" not in entry and entry["available_instruments"] == [{"type": "paypal"}]
    assert plain.envelope(ORDER) == {
        "version": UCP_VERSION,
        "status": "success",
        "capabilities": {ORDER: [{"version": UCP_VERSION}]},
    }


def test_a_platform_profile_must_follow_the_schema() -> None:
    with pytest.raises(ProfileMalformed):
        _platform({"ucp": {"version": UCP_VERSION, "services": {}}})  # no payment_handlers
    missing_spec = platform_profile()
    del missing_spec["ucp"]["capabilities"][CHECKOUT][0]["spec"]
    with pytest.raises(ProfileMalformed):
        _platform(missing_spec)
    with pytest.raises(ProfileMalformed):
        _platform({"ucp": {"version": "latest"}})


def test_request_shapes_follow_the_ucp_request_annotations() -> None:
    checkout = BASE + "shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout"
    item = {"line_items": lines("x")}
    assert request_problem(checkout, "create", item) is None
    # Response-only fields are not required of a request: no id, status, totals, ucp...
    assert request_problem(checkout, "update", {}) is not None  # line_items stay required
    method = {"type": "shipping", "destinations": [{"street_address": "1 Way"}]}
    assert (
        request_problem(checkout, "create", {**item, "fulfillment": {"methods": [method]}}) is None
    )
    update = request_problem(checkout, "update", {**item, "fulfillment": {"methods": [method]}})
    assert update is not None and update.param == ("fulfillment", "methods", 0, "line_item_ids")
    complete = request_problem(checkout, "complete", {})
    assert complete is not None and complete.param == ("payment",)
    assert request_problem(checkout, "complete", {"payment": {}}) is None


# ---------------------------------------------------------------- fetched profiles


class Origin:
    """Answers profile fetches with ``handler``, counting them."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.handler = handler
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        return self.handler(request)


def fetched(origin: Origin, now: list[datetime]) -> FetchedProfiles:
    return FetchedProfiles(transport=httpx.MockTransport(origin), clock=lambda: now[0])


def test_fetched_profiles_are_cached_for_their_max_age_with_a_floor() -> None:
    document = platform_profile()
    origin = Origin(
        lambda _r: httpx.Response(
            200, content=orjson.dumps(document), headers={"Cache-Control": "public, max-age=5"}
        )
    )
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    profiles = fetched(origin, now)
    assert profiles.document(PLATFORM) == document
    now[0] += timedelta(seconds=59)  # max-age=5 is raised to the 60 s floor
    assert profiles.document(PLATFORM) == document
    assert origin.calls == 1
    now[0] += timedelta(seconds=2)
    profiles.document(PLATFORM)
    assert origin.calls == 2


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (httpx.Response(302, headers={"Location": "https://elsewhere.test/"}), ProfileUnreachable),
        (httpx.Response(500), ProfileUnreachable),
        (httpx.Response(200, content=b"<html>"), ProfileMalformed),
        (httpx.Response(200, content=b"[]"), ProfileMalformed),
        (httpx.Response(200, content=b" " * (256 * 1024 + 1)), ProfileMalformed),
    ],
)
def test_fetch_failures_are_reported_and_remembered(
    answer: httpx.Response, error: type[Exception]
) -> None:
    origin = Origin(lambda _r: answer)
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    profiles = fetched(origin, now)
    for _ in range(2):
        with pytest.raises(error):
            profiles.document(PLATFORM)
    assert origin.calls == 1  # the failure is remembered for a while
    now[0] += timedelta(seconds=31)
    with pytest.raises(error):
        profiles.document(PLATFORM)
    assert origin.calls == 2


def test_unreachable_and_refused_hosts() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    origin = Origin(refuse)
    profiles = fetched(origin, [datetime(2026, 1, 1, tzinfo=UTC)])
    with pytest.raises(ProfileUnreachable):
        profiles.document(PLATFORM)
    for url in (
        "http://platform.test/ucp",
        "https://127.0.0.1/ucp",
        "https://[::1]/ucp",
        "https://10.0.0.8/ucp",
        "https://localhost/ucp",
        *REFUSED_PROFILE_URLS,
    ):
        with pytest.raises(ProfileUnreachable):
            profiles.document(url)
    assert origin.calls == 1


REFUSED_PROFILE_URLS = (
    "https://localhost./ucp",
    "https://foo.localhost/ucp",
    "https://127.1/ucp",
    "https://2130706433/ucp",
    "https://0x7f000001/ucp",
    "https://0177.0.0.1/ucp",
    "https://[::ffff:127.0.0.1]/ucp",
    "https://0.0.0.0/ucp",
    "https://100.64.0.1/ucp",
    "https://169.254.169.254/ucp",
    "https://[fe80::1]/ucp",
    "https://[fc00::1]/ucp",
    "https://224.0.0.1/ucp",
    "https://240.0.0.1/ucp",
)


@pytest.mark.parametrize("url", REFUSED_PROFILE_URLS)
def test_no_spelling_of_a_non_public_host_is_fetched(url: str) -> None:
    origin = Origin(lambda _r: httpx.Response(200, content=orjson.dumps(platform_profile())))
    with pytest.raises(ProfileUnreachable, match="not fetched"):
        fetched(origin, [datetime(2026, 1, 1, tzinfo=UTC)]).document(url)
    assert origin.calls == 0


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.8", "100.64.0.1", "::1", "fd00::1"])
def test_a_profile_host_that_resolves_to_a_non_public_address_is_not_fetched(
    address: str,
) -> None:
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return [address]

    profiles = FetchedProfiles(resolver=resolve)  # the real transport: it stops before connecting
    try:
        with pytest.raises(ProfileUnreachable, match="resolves to"):
            profiles.document("https://platform.test/.well-known/ucp")
    finally:
        profiles.close()
    assert asked == ["platform.test"]


def test_profiles_on_this_machine_are_fetched_with_the_opt_in() -> None:
    origin = Origin(lambda _r: httpx.Response(200, content=orjson.dumps(platform_profile())))
    profiles = FetchedProfiles(transport=httpx.MockTransport(origin), allow_private=True)
    assert profiles.document("https://127.0.0.1:8443/ucp") == platform_profile()


def test_a_platform_known_only_by_url_is_fetched_through_the_fallback(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    origin = Origin(lambda _r: httpx.Response(200, content=orjson.dumps(platform_profile())))
    remote = "https://remote.test/.well-known/ucp"
    profiles = KnownProfiles({}, fallback=fetched(origin, [datetime(2026, 1, 1, tzinfo=UTC)]))
    with serve(merchant, agents, profiles) as http:
        client = UcpClient(http, agent_token, remote)
        for _ in range(2):
            assert client.search({"query": "shoes"}).status_code == 200
    assert origin.calls == 1
