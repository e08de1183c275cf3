"""cartagent's UCP client against cartagent's UCP business (in-process, paying through the
in-process PayPal sandbox): discovery, the catalog, whole checkouts, retries and refusals; and
against scripted businesses (``httpx.MockTransport``) for what this one never answers."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Address, Agents, Contact, Merchant
from cartagent.commerce.ucp import UCP_VERSION, KnownProfiles, business_profile
from cartagent.errors import CheckoutError, ConfigurationError
from cartagent.paypal import PayPalClient
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
from cartagent.protocols.ucp.signatures import SigningKey
from cartagent.shopping import transport
from cartagent.shopping import ucp as ucp_client
from cartagent.shopping.ucp import UcpClient, parse_json_path
from tests.commerce.conftest import ADDRESS, PayPalFaults, in_stock, out_of_stock, tau_products
from tests.commerce.test_ucp_checkout import BASE_URL, PLATFORM, platform_profile, serve
from tests.paypal.conftest import TestClientTransport

HOME = Address(**ADDRESS)
ADA = Contact(name="Ada Lovelace", email="ada@example.com")


class Recording(httpx.BaseTransport):
    """Passes requests on, keeping them."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return self.inner.handle_request(request)


@pytest.fixture
def business(merchant: Merchant, agents: Agents) -> Iterator[TestClient]:
    with serve(merchant, agents) as http:
        yield http


@pytest.fixture
def wire(business: TestClient) -> Recording:
    return Recording(TestClientTransport(business))


@pytest.fixture
def shop(wire: Recording, agent_token: str) -> UcpClient:
    return UcpClient.discover(
        BASE_URL, agent_token, profile_url=PLATFORM, transport=wire, sleep=lambda _: None
    )


def owner(agents: Agents, token: str) -> str:
    agent = agents.by_token(token)
    assert agent is not None
    return agent.name


# ---------------------------------------------------------------- against the business


def test_discovery_takes_the_endpoint_the_capabilities_and_the_paypal_handler(
    shop: UcpClient, wire: Recording
) -> None:
    assert shop.base_url == BASE_URL
    assert shop.capabilities == {
        CHECKOUT,
        FULFILLMENT,
        DISCOUNT,
        BUYER_CONSENT,
        SEARCH,
        LOOKUP,
        ORDER,
    }
    assert shop.payment_handler == "paypal"
    assert [str(r.url) for r in wire.sent] == [f"{BASE_URL}/.well-known/ucp"]


def test_calls_go_to_the_profiles_endpoint(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    with serve(merchant, agents, api_prefix="/ucp") as http:
        shop = UcpClient.discover(
            BASE_URL, agent_token, profile_url=PLATFORM, transport=TestClientTransport(http)
        )
        assert shop.base_url == f"{BASE_URL}/ucp"
        assert shop.create([(in_stock()[0], 1)]).status == "incomplete"


def test_the_catalog_is_the_tau_store(shop: UcpClient) -> None:
    products = shop.products()
    assert [p.id for p in products] == [p.id for p in shop.products(page_size=7)]
    assert {p.id for p in products} == {p.id for p in tau_products()}

    def facts(catalog: Any) -> dict[str, Any]:
        return {
            p.id: (p.title, p.category, p.brand, p.attributes, p.rating, p.rating_count)
            for p in catalog
        }

    def offers(catalog: Any) -> dict[str, Any]:
        return {
            v.id: (v.price, v.currency, v.available, v.options) for p in catalog for v in p.variants
        }

    assert facts(products) == facts(tau_products())
    assert offers(products) == offers(tau_products())


def test_a_whole_checkout_through_the_client(
    shop: UcpClient,
    wire: Recording,
    agents: Agents,
    agent_token: str,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    item = in_stock()[0]
    session = shop.create([(item, 2)], contact=ADA)
    assert (session.status, session.ready) == ("incomplete", False)
    assert session.problems == ["a shipping address is needed"]
    assert session.continue_url == f"{BASE_URL}/shop/checkout-sessions/{session.id}"
    assert session.raw["buyer"] == {
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
    }
    session = shop.update(session.id, address=HOME, shipping_option="standard")
    assert (session.status, session.ready, session.problems) == ("ready_for_complete", True, [])
    assert [(line.item_id, line.quantity) for line in session.lines] == [(item, 2)]
    line = session.lines[0]
    assert line.total == line.unit_price * 2 + session.totals["tax"]
    assert (
        session.total
        == session.totals["subtotal"] + session.totals["tax"] + session.totals["fulfillment"]
    )
    paid = shop.complete(session.id, "BA-CLIENT", buyer={"email": "ada@example.com"})
    assert paid.status == "completed" and paid.order is not None and paid.continue_url is None
    assert paid.order["order_number"] == paid.order["label"]
    assert paid.order["permalink_url"] == f"{BASE_URL}/shop/orders/{paid.order['id']}"
    assert paid.total == session.total
    assert shop.get(session.id).status == "completed"

    checkout = merchant.get(owner(agents, agent_token), session.id)
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1
    [complete] = [r for r in wire.sent if r.url.path.endswith("/complete")]
    instrument = orjson.loads(complete.content)["payment"]["instruments"][0]
    assert (instrument["handler_id"], instrument["credential"]) == (
        "paypal",
        {"type": "paypal_payment_token", "token": "BA-CLIENT"},
    )
    for request in wire.sent[1:]:
        assert request.headers["Authorization"] == f"Bearer {agent_token}"
        assert request.headers["UCP-Agent"] == f'profile="{PLATFORM}"'
        assert request.headers["Request-Id"]
        keyed = request.method != "GET"
        assert ("Idempotency-Key" in request.headers) == keyed


def test_with_the_secret_the_client_signs_and_pays_where_signing_is_required(
    wire: Recording, agent_token: str, merchant: Merchant, agents: Agents
) -> None:
    token = agent_token + "-s"  # the agent that must sign (secret "s3cret")
    unsigned = UcpClient.discover(BASE_URL, token, profile_url=PLATFORM, transport=wire)
    with pytest.raises(CheckoutError) as caught:
        unsigned.create([(in_stock()[0], 1)], address=HOME, contact=ADA)
    assert (caught.value.code, caught.value.status) == ("signature_missing", 401)
    shop = UcpClient.discover(
        BASE_URL, token, profile_url=PLATFORM, transport=wire, signing_secret="s3cret"
    )
    session = shop.create([(in_stock()[0], 1)], address=HOME, contact=ADA)
    assert shop.products()
    paid = shop.complete(session.id, "BA-SIGNED")
    assert paid.status == "completed" and shop.get(session.id).status == "completed"
    signed = [r for r in wire.sent if "Signature" in r.headers]
    assert {r.method for r in signed} == {"GET", "POST"}
    for request in signed:
        covered = request.headers["Signature-Input"]
        assert '"ucp-agent"' in covered
        if request.content:
            assert '"content-digest" "content-type"' in covered
    with pytest.raises(ConfigurationError):
        UcpClient(
            BASE_URL,
            token,
            profile_url=PLATFORM,
            signing_secret="s3cret",
            signing_key=SigningKey.generate(),
        )


def test_an_update_keeps_what_it_is_not_given(shop: UcpClient) -> None:
    first, second = in_stock(2)
    session = shop.create([(first, 1), (first, 2)], address=HOME)
    assert [(line.item_id, line.quantity) for line in session.lines] == [(first, 3)]
    session = shop.update(session.id, contact=ADA)  # the lines are read and sent back
    assert [(line.item_id, line.quantity) for line in session.lines] == [(first, 3)]
    assert session.raw["buyer"]["email"] == "ada@example.com" and session.ready
    session = shop.update(session.id, items=[(second, 1)], shipping_option="standard")
    assert [line.item_id for line in session.lines] == [second]
    assert session.raw["buyer"]["first_name"] == "Ada" and session.ready


def test_refused_changes_raise_with_the_code_and_field(shop: UcpClient) -> None:
    with pytest.raises(CheckoutError) as caught:
        shop.create([(in_stock()[0], 1), ("no-such-item", 1)])  # an error_response, HTTP 200
    assert (caught.value.code, caught.value.param, caught.value.status) == (
        "not_found",
        ("line_items", 1, "item", "id"),
        200,
    )
    with pytest.raises(CheckoutError) as caught:
        shop.create([(in_stock()[0], 0)])  # breaks the request schema: HTTP 400
    assert (caught.value.code, caught.value.param, caught.value.status) == (
        "invalid",
        ("line_items", 0, "quantity"),
        400,
    )
    session = shop.create([(in_stock()[0], 1)], address=HOME)
    # The business answers the session as it stands with the reason: the client raises.
    with pytest.raises(CheckoutError) as caught:
        shop.update(session.id, items=[("no-such-item", 1)])
    assert (caught.value.code, caught.value.param) == ("not_found", ("line_items", 0, "item", "id"))
    with pytest.raises(CheckoutError) as caught:
        shop.update(session.id, shipping_option="teleport")
    assert caught.value.param == ("fulfillment", "methods", 0, "groups", 0, "selected_option_id")
    assert shop.get(session.id).lines == session.lines
    # A first address and an option: the options exist once the address does (a second PUT).
    bare = shop.create([(in_stock()[0], 1)])
    with pytest.raises(CheckoutError) as caught:
        shop.update(bare.id, address=HOME, shipping_option="teleport")
    assert caught.value.param == ("fulfillment", "methods", 0, "groups", 0, "selected_option_id")
    assert shop.get(bare.id).ready  # the address was taken, the option was not
    with pytest.raises(CheckoutError) as caught:
        shop.get("cs_missing")
    assert caught.value.code == "not_found"


def test_a_completion_that_meets_an_outage_is_retried_once_paid(
    shop: UcpClient, wire: Recording, paypal_faults: PayPalFaults
) -> None:
    session = shop.create([(in_stock()[0], 1)], address=HOME, contact=ADA)
    paypal_faults.outages = 1
    paid = shop.complete(session.id, "BA-RETRY")
    assert paid.status == "completed"
    captures = [r for r in paypal_faults.sent if r.url.path.endswith("/capture")]
    assert len(captures) == 2  # the failed try and the retry, with one PayPal-Request-Id
    assert len({r.headers["PayPal-Request-Id"] for r in captures}) == 1
    completes = [r for r in wire.sent if r.url.path.endswith("/complete")]
    assert len(completes) == 2  # 503 payment_unavailable, then the same call again
    assert len({r.headers["Idempotency-Key"] for r in completes}) == 1
    assert len({r.headers["Request-Id"] for r in completes}) == 2


def test_a_completion_that_cannot_complete_raises(
    shop: UcpClient, paypal_faults: PayPalFaults
) -> None:
    sold_out = shop.create([(out_of_stock(), 1)], address=HOME, contact=ADA)
    assert not sold_out.ready and sold_out.problems
    with pytest.raises(CheckoutError) as caught:
        shop.complete(sold_out.id, "BA-X")
    assert (caught.value.code, caught.value.param) == ("out_of_stock", ("line_items", 0))
    session = shop.create([(in_stock()[0], 1)], address=HOME, contact=ADA)
    paypal_faults.declines = 1
    with pytest.raises(CheckoutError) as caught:
        shop.complete(session.id, "BA-DECLINED")
    assert caught.value.code == "payment_failed"
    assert shop.complete(session.id, "BA-OK").status == "completed"
    with pytest.raises(CheckoutError) as caught:
        shop.complete(session.id, "BA-AGAIN")  # a new call: the session is already completed
    assert caught.value.code == "invalid_state"


def test_cancel_then_nothing_changes_it(shop: UcpClient) -> None:
    session = shop.create([(in_stock()[0], 1)], address=HOME)
    assert shop.cancel(session.id).status == "canceled"
    for call in (
        lambda: shop.cancel(session.id),
        lambda: shop.complete(session.id, "BA-X"),
        lambda: shop.update(session.id, items=[(in_stock()[0], 2)]),
    ):
        with pytest.raises(CheckoutError) as caught:
            call()
        assert caught.value.code == "invalid_state"


def test_a_capability_the_platform_did_not_negotiate_raises(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    profiles = KnownProfiles({PLATFORM: platform_profile((SEARCH, LOOKUP))})
    with serve(merchant, agents, profiles) as http:
        shop = UcpClient.discover(
            BASE_URL, agent_token, profile_url=PLATFORM, transport=TestClientTransport(http)
        )
        assert len(shop.products()) == len(tau_products())
        with pytest.raises(CheckoutError) as caught:
            shop.create([(in_stock()[0], 1)])  # answered 200 with ucp.status "error"
    assert (caught.value.code, caught.value.status) == ("capabilities_incompatible", 200)


# ---------------------------------------------------------------- against scripted businesses

ENDPOINT = "https://b.test/api"


def profile(**changes: Any) -> dict[str, Any]:
    document = business_profile(ENDPOINT, handlers("sandbox"))
    document["ucp"].update(changes)
    return document


def discover(answer: Callable[[httpx.Request], httpx.Response]) -> UcpClient:
    return UcpClient.discover(
        "https://b.test", "t", profile_url=PLATFORM, transport=httpx.MockTransport(answer)
    )


def refused(answer: Callable[[httpx.Request], httpx.Response]) -> CheckoutError:
    with pytest.raises(CheckoutError) as caught:
        discover(answer)
    return caught.value


def test_discovery_refuses_a_business_on_another_version() -> None:
    old = profile(version="2026-01-23")
    assert refused(lambda _: httpx.Response(200, json=old)).code == "version_unsupported"

    linked = profile(version="2026-09-01")
    linked["ucp"]["supported_versions"] = {UCP_VERSION: "https://b.test/profiles/2026-04-08"}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/ucp":
            return httpx.Response(200, json=linked)
        return httpx.Response(200, json=profile())

    assert discover(answer).base_url == ENDPOINT  # the profile it links for this release


def test_discovery_refuses_a_business_without_checkout_or_rest() -> None:
    no_checkout = profile()
    del no_checkout["ucp"]["capabilities"][CHECKOUT]
    del no_checkout["ucp"]["capabilities"][FULFILLMENT]
    assert (
        refused(lambda _: httpx.Response(200, json=no_checkout)).code == "capabilities_incompatible"
    )
    old_checkout = profile()
    old_checkout["ucp"]["capabilities"][CHECKOUT][0]["version"] = "2026-01-23"
    assert refused(lambda _: httpx.Response(200, json=old_checkout)).code == (
        "capabilities_incompatible"
    )
    mcp_only = profile()
    mcp_only["ucp"]["services"]["dev.ucp.shopping"][0]["transport"] = "mcp"
    assert refused(lambda _: httpx.Response(200, json=mcp_only)).code == "transport_unsupported"


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (lambda _: httpx.Response(404, json={}), "not_found"),
        (lambda _: httpx.Response(200, content=b"<html>"), "invalid_response"),
        (
            lambda _: httpx.Response(200, json={"ucp": {"version": UCP_VERSION}}),
            "profile_malformed",
        ),
        (lambda r: (_ for _ in ()).throw(httpx.ConnectError("down", request=r)), "unreachable"),
    ],
)
def test_discovery_refuses_what_is_no_profile(
    answer: Callable[[httpx.Request], httpx.Response], code: str
) -> None:
    assert refused(answer).code == code


def test_an_endpoint_that_is_no_url_is_refused() -> None:
    bad = profile()
    bad["ucp"]["services"]["dev.ucp.shopping"][0]["endpoint"] = "ftp://b.test/api"
    assert refused(lambda _: httpx.Response(200, json=bad)).code == "invalid_response"


@pytest.mark.parametrize(
    "url",
    ["https://127.1", "https://0177.0.0.1", "https://localhost.", "https://[::ffff:10.0.0.1]"],
)
def test_a_business_at_a_non_public_address_is_refused_unasked(url: str) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=profile())

    with pytest.raises(CheckoutError) as caught:
        UcpClient.discover(url, "t", profile_url=PLATFORM, transport=httpx.MockTransport(answer))
    assert (caught.value.code, caught.value.status) == ("destination_refused", 403)
    assert sent == []


@pytest.mark.parametrize("endpoint", ["https://10.0.0.9/api", "https://[::1]/api"])
def test_a_profile_whose_endpoint_is_not_public_is_refused(endpoint: str) -> None:
    inward = profile()
    inward["ucp"]["services"]["dev.ucp.shopping"][0]["endpoint"] = endpoint
    assert refused(lambda _: httpx.Response(200, json=inward)).code == "destination_refused"


def test_a_business_whose_name_resolves_to_this_machine_is_refused() -> None:
    with pytest.raises(CheckoutError) as caught:
        UcpClient.discover(
            "https://b.test", "t", profile_url=PLATFORM, resolver=lambda host, port: ["127.0.0.1"]
        )
    assert caught.value.code == "destination_refused" and "b.test" in caught.value.message


def test_a_business_on_this_machine_is_reached_with_the_opt_in() -> None:
    local = business_profile("http://127.0.0.1:8780/ucp", handlers("sandbox"))
    shop = UcpClient.discover(
        "http://127.0.0.1:8780",
        "t",
        profile_url=PLATFORM,
        transport=httpx.MockTransport(lambda _: httpx.Response(200, json=local)),
        allow_private=True,
    )
    assert shop.base_url == "http://127.0.0.1:8780/ucp"


def test_the_profile_url_must_be_one_the_business_accepts() -> None:
    for url in ("http://platform.test/.well-known/ucp", "https://u:p@platform.test/p", "x"):
        with pytest.raises(ConfigurationError):
            UcpClient(ENDPOINT, "t", profile_url=url)
    quoted = UcpClient(ENDPOINT, "t", profile_url='https://p.test/a"b')
    assert quoted._agent == 'profile="https://p.test/a\\"b"'


def scripted(
    answers: list[httpx.Response], sleeps: list[float] | None = None
) -> tuple[UcpClient, list[httpx.Request]]:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answers.pop(0)

    client = UcpClient(
        ENDPOINT,
        "t",
        profile_url=PLATFORM,
        transport=httpx.MockTransport(answer),
        sleep=(sleeps if sleeps is not None else []).append,
    )
    return client, sent


SESSION: dict[str, Any] = {
    "ucp": {"version": UCP_VERSION, "status": "success"},
    "id": "cs_1",
    "status": "ready_for_complete",
    "currency": "USD",
    "line_items": [
        {"id": "li_1", "item": {"id": "sku", "title": "Thing", "price": 1250}, "quantity": 2}
    ],
    "totals": [{"type": "subtotal", "amount": 2500}, {"type": "total", "amount": 2700}],
    "messages": [],
}


def test_retries_keep_the_key_and_honor_retry_after_within_bounds() -> None:
    sleeps: list[float] = []
    client, sent = scripted(
        [
            httpx.Response(503, headers={"Retry-After": "-3"}, json={"code": "x"}),
            httpx.Response(
                409, headers={"Retry-After": "30"}, json={"code": "idempotency_in_flight"}
            ),
            httpx.Response(201, json=SESSION),
        ],
        sleeps,
    )
    view = client.create([("sku", 2)])
    assert view.ready and view.total.minor_units == 2700 and view.lines[0].total.minor_units == 2500
    assert sleeps == [0.0, 5.0]
    assert len({r.headers["Idempotency-Key"] for r in sent}) == 1
    assert len({r.headers["Request-Id"] for r in sent}) == 3
    assert sent[0].url == f"{ENDPOINT}/checkout-sessions"

    client, sent = scripted(
        [httpx.Response(409, json={"code": "idempotency_conflict", "content": "no"})]
    )
    with pytest.raises(CheckoutError) as caught:
        client.create([("sku", 1)])
    assert (caught.value.code, caught.value.status, len(sent)) == ("idempotency_conflict", 409, 1)


def broken(session: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(session)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, content=b"not json"),
        httpx.Response(200, json=[SESSION]),
        httpx.Response(200, json={k: v for k, v in SESSION.items() if k != "ucp"}),
        httpx.Response(200, json=broken(SESSION, ("line_items", 0, "item", "price"), "12.50")),
        httpx.Response(200, json=broken(SESSION, ("line_items", 0, "quantity"), True)),
        httpx.Response(200, json=broken(SESSION, ("totals", 0, "amount"), 10**18)),
        httpx.Response(200, json=broken(SESSION, ("currency",), "XXX")),
        httpx.Response(200, json=broken(SESSION, ("messages",), [{"type": "x"}] * 101)),
        httpx.Response(200, content=b" " * (transport.MAX_BODY + 1)),
    ],
)
def test_malformed_answers_raise(answer: httpx.Response) -> None:
    client, _ = scripted([answer])
    with pytest.raises(CheckoutError) as caught:
        client.get("cs_1")
    assert (caught.value.code, caught.value.status) == ("invalid_response", 502)


def page(start: int, count: int, cursor: str | None) -> dict[str, Any]:
    products = [
        {
            "id": f"p{n}",
            "title": f"Product {n}",
            "description": {"html": "<script>x</script>"},
            "price_range": {},
            "variants": [
                {
                    "id": f"v{n}",
                    "title": "V",
                    "description": {"plain": "v"},
                    "price": {"amount": 199, "currency": "USD"},
                    "options": [{"name": "size", "label": "M"}],
                }
            ],
        }
        for n in range(start, start + count)
    ]
    pagination: dict[str, Any] = {"has_next_page": cursor is not None}
    if cursor is not None:
        pagination["cursor"] = cursor
    return {"ucp": {"version": UCP_VERSION, "status": "success"}, "products": products,
            "pagination": pagination}  # fmt: skip


def test_the_catalog_is_read_to_its_end_and_no_further(monkeypatch: pytest.MonkeyPatch) -> None:
    client, sent = scripted(
        [httpx.Response(200, json=page(0, 2, "c1")), httpx.Response(200, json=page(2, 1, None))]
    )
    products = client.products()
    assert [p.id for p in products] == ["p0", "p1", "p2"]
    assert products[0].description == "" and products[0].variants[0].price == Decimal("1.99")
    assert products[0].variants[0].options == {"size": "M"} and products[0].available
    assert orjson.loads(sent[1].content)["pagination"]["cursor"] == "c1"

    monkeypatch.setattr(ucp_client, "MAX_PRODUCTS", 5)
    endless = [httpx.Response(200, json=page(3 * n, 3, f"c{n}")) for n in range(3)]
    client, _ = scripted(endless)
    with pytest.raises(CheckoutError) as caught:
        client.products()
    assert caught.value.code == "catalog_too_large"

    client, _ = scripted([httpx.Response(200, json=page(0, 1, "same"))] * 2)
    with pytest.raises(CheckoutError) as caught:
        client.products()
    assert caught.value.code == "invalid_response"


def test_json_paths_parse_into_keys_and_indexes() -> None:
    assert parse_json_path("$.line_items[10].item.id") == ("line_items", 10, "item", "id")
    assert parse_json_path("$['buyer'].email") == ("buyer", "email")
    assert parse_json_path("$") == () and parse_json_path(None) == ()
    assert parse_json_path("$.a[?(@.x)]") == () and parse_json_path("line_items") == ()
