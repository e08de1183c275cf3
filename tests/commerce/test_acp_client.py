"""cartagent's ACP client against cartagent's merchant: discovery, the feed, a whole checkout."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from cartagent.commerce import Address, Agents, Merchant
from cartagent.errors import CheckoutError
from cartagent.paypal import PayPalClient
from cartagent.protocols.acp.schema import API_VERSION, spec_file
from cartagent.shopping.acp import AcpClient, parse_json_path
from tests.commerce.conftest import ADDRESS, BASE_URL, PayPalFaults, in_stock, tau_products
from tests.paypal.conftest import TestClientTransport

HOME = Address(**ADDRESS)


@pytest.fixture
def shop(merchant_http: TestClient, agent_token: str) -> AcpClient:
    return AcpClient.discover(
        BASE_URL, agent_token, transport=TestClientTransport(merchant_http), sleep=lambda _: None
    )


def test_discovery_finds_the_api_base(shop: AcpClient) -> None:
    assert shop.base_url == BASE_URL


def test_the_feed_holds_every_variant_at_its_price(shop: AcpClient) -> None:
    products = shop.products()
    assert {p.id for p in products} == {p.id for p in tau_products()}
    expected = {v.id: (v.price, v.available) for p in tau_products() for v in p.variants}
    assert {v.id: (v.price, v.available) for p in products for v in p.variants} == expected


def test_feed_rows_conform_to_the_feed_schema(merchant_http: TestClient) -> None:
    schema = spec_file("schema.feed.json")
    validator = Draft202012Validator({**schema, "$ref": "#/$defs/Product"})
    lines = merchant_http.get("/feed/products.jsonl").text.splitlines()
    assert len(lines) == len(tau_products())
    for line in lines:
        assert not list(validator.iter_errors(json.loads(line)))
    metadata = merchant_http.get("/feed/metadata.json").json()
    assert not list(
        Draft202012Validator({**schema, "$ref": "#/$defs/FeedMetadata"}).iter_errors(metadata)
    )


def test_a_whole_checkout_through_the_client(
    shop: AcpClient,
    agents: Agents,
    agent_token: str,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    item = in_stock()[0]
    session = shop.create([(item, 2)])
    assert not session.ready and session.problems == ["a shipping address is needed"]
    session = shop.update(session.id, address=HOME, shipping_option="standard")
    assert session.ready
    assert session.lines[0].quantity == 2
    assert (
        session.total
        == session.totals["subtotal"] + session.totals["tax"] + session.totals["fulfillment"]
    )
    paid = shop.complete(session.id, "BA-CLIENT", buyer={"email": "ada@example.com"})
    assert paid.status == "completed" and paid.order is not None
    assert shop.get(session.id).status == "completed"
    agent = agents.by_token(agent_token)
    assert agent is not None
    checkout = merchant.get(agent.name, session.id)
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


def test_a_completion_that_meets_an_outage_is_retried_once_paid(
    shop: AcpClient, paypal_faults: PayPalFaults
) -> None:
    session = shop.create([(in_stock()[0], 1)], address=HOME)
    paypal_faults.outages = 1
    paid = shop.complete(session.id, "BA-RETRY")
    assert paid.status == "completed"
    completes = [r for r in paypal_faults.sent if r.url.path.endswith("/capture")]
    assert len(completes) == 2  # the failed try and the retry, with one PayPal-Request-Id
    assert len({r.headers["PayPal-Request-Id"] for r in completes}) == 1


def test_a_refusal_raises_with_the_merchant_code_and_field(shop: AcpClient) -> None:
    with pytest.raises(CheckoutError) as caught:
        shop.create([(in_stock()[0], 1), ("no-such-item", 1)])
    assert (caught.value.code, caught.value.param, caught.value.status) == (
        "not_found",
        ("line_items", 1, "id"),
        400,
    )


def test_a_signing_agent_signs_every_call(merchant_http: TestClient, agent_token: str) -> None:
    signer = AcpClient(
        BASE_URL,
        agent_token + "-s",
        signing_secret="s3cret",
        transport=TestClientTransport(merchant_http),
    )
    session = signer.create([(in_stock()[0], 1)])
    assert signer.get(session.id).id == session.id
    wrong = AcpClient(
        BASE_URL,
        agent_token + "-s",
        signing_secret="nope",
        transport=TestClientTransport(merchant_http),
    )
    with pytest.raises(CheckoutError) as caught:
        wrong.get(session.id)
    assert caught.value.code == "invalid_signature"


def test_discovery_refuses_a_merchant_on_another_version() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={"protocol": {"name": "acp", "version": "2025-09-29",
                               "supported_versions": ["2025-09-29"]},
                  "api_base_url": "http://x", "transports": ["rest"],
                  "capabilities": {"services": ["checkout"]}},
        )  # fmt: skip

    with pytest.raises(CheckoutError) as caught:
        AcpClient.discover("http://x", "t", transport=httpx.MockTransport(answer))
    assert caught.value.code == "unsupported_api_version"


def discovery(api_base_url: str) -> dict[str, Any]:
    return {"protocol": {"name": "acp", "version": API_VERSION,
                         "supported_versions": [API_VERSION]},
            "api_base_url": api_base_url, "transports": ["rest"],
            "capabilities": {"services": ["checkout"]}}  # fmt: skip


@pytest.mark.parametrize(
    "url", ["http://127.1:8780", "http://0177.0.0.1:8780", "http://localhost.:8780", "http://[::1]"]
)
def test_a_merchant_at_a_non_public_address_is_refused_unasked(url: str) -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=discovery(url))

    with pytest.raises(CheckoutError) as caught:
        AcpClient.discover(url, "t", transport=httpx.MockTransport(answer))
    assert (caught.value.code, caught.value.status) == ("destination_refused", 403)
    assert sent == []


def test_a_discovery_document_pointing_inwards_is_refused() -> None:
    inward = discovery("http://169.254.169.254/latest")
    with pytest.raises(CheckoutError) as caught:
        AcpClient.discover(
            "https://shop.test",
            "t",
            transport=httpx.MockTransport(lambda _: httpx.Response(200, json=inward)),
        )
    assert caught.value.code == "destination_refused"


def test_a_merchant_whose_name_resolves_privately_is_refused() -> None:
    with pytest.raises(CheckoutError) as caught:
        AcpClient.discover("https://shop.test", "t", resolver=lambda host, port: ["192.168.0.4"])
    assert caught.value.code == "destination_refused"
    assert "192.168.0.4 is a private address" in caught.value.message


def test_a_merchant_on_this_machine_is_reached_with_the_opt_in() -> None:
    local = "http://127.0.0.1:8780"
    answer = httpx.MockTransport(lambda _: httpx.Response(200, json=discovery(local)))
    shop = AcpClient.discover(local, "t", transport=answer, allow_private=True)
    assert shop.base_url == local


def test_json_paths_parse_into_keys_and_indexes() -> None:
    assert parse_json_path("$.line_items[10].item.id") == ("line_items", 10, "item", "id")
    assert parse_json_path("$") == () and parse_json_path(None) == ()
