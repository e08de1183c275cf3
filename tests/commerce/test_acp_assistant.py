"""The assistant shopping at an ACP merchant: the merchant's totals, a yes, one PayPal capture."""

from __future__ import annotations

from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import Conversation, ProductCard
from cartagent.assistant.remote_checkout import PAY_MERCHANT, Shopper
from cartagent.assistant.specialists import CheckoutSpecialist
from cartagent.assistant.toolkit import assistant_toolkit
from cartagent.commerce import Address, Agents, Merchant
from cartagent.paypal import AsyncPayPalClient, PayPalClient
from cartagent.shopping import AcpClient
from cartagent.tools import SpendLimits, Toolkit
from tests.assistant.specialists.conftest import say
from tests.commerce.conftest import ADDRESS, BASE_URL, tau_products
from tests.conftest import START
from tests.paypal.conftest import TestClientTransport

pytestmark = pytest.mark.anyio
SHOPPER = Shopper(Address(**ADDRESS), "ada@example.com", "BA-ASSISTANT")


def _card(rank: int, item_id: str) -> ProductCard:
    product, variant = next((p, v) for p in tau_products() for v in p.variants if v.id == item_id)
    return ProductCard(
        product.id, product.title, variant.id, variant.price, "USD", variant.available, rank,
        dict(variant.options),
    )  # fmt: skip


@pytest.fixture
def shown() -> Conversation:
    conversation = Conversation("s", "shopper", START)
    conversation.results = [_card(1, "9612497925"), _card(2, "8124970213")]
    return conversation


def _toolkit(
    merchant_http: TestClient,
    agent_token: str,
    paypal_client: AsyncPayPalClient,
    limits: SpendLimits | None = None,
) -> Toolkit:
    shop = AcpClient(BASE_URL, agent_token, transport=TestClientTransport(merchant_http))
    return assistant_toolkit(paypal_client, merchant=shop, limits=limits)


async def test_checkout_at_the_merchant_pays_its_total_after_a_yes(
    shown: Conversation,
    merchant_http: TestClient,
    agent_token: str,
    paypal_client: AsyncPayPalClient,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    toolkit = _toolkit(merchant_http, agent_token, paypal_client)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, quoted = await say(checkout, shown, "checkout please", toolkit)
    assert "merchant_checkout" in quoted.data, quoted.text
    session = quoted.data["merchant_checkout"]
    # 50.88 + 4.07 tax, free shipping from 50: the merchant's numbers, shown as they are.
    assert session["totals"]["total"] == "54.95"
    assert "Say 'yes' to pay 54.95 USD" in quoted.text
    assert shown.pending is not None and shown.pending.kind == PAY_MERCHANT

    _, paid = await say(checkout, shown, "yes", toolkit)
    assert paid.text.startswith("Paid 54.95 USD.")
    assert shown.cart == [] and shown.pending is None
    agent = agents.by_token(agent_token)
    assert agent is not None
    stored = merchant.get(agent.name, session["id"])
    assert stored.status == "completed"
    order = merchant_paypal.get_order(stored.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1
    assert shown.orders[0].total == Decimal("54.95")


async def test_no_cancels_the_merchant_checkout(
    shown: Conversation, merchant_http: TestClient, agent_token: str,
    paypal_client: AsyncPayPalClient,
) -> None:  # fmt: skip
    toolkit = _toolkit(merchant_http, agent_token, paypal_client)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, quoted = await say(checkout, shown, "checkout", toolkit)
    _, stopped = await say(checkout, shown, "no", toolkit)
    assert "did not pay and canceled" in stopped.text
    seen = await toolkit.call(
        "get_merchant_checkout", {"checkout_id": quoted.data["merchant_checkout"]["id"]}
    )
    assert seen.content["status"] == "canceled" and len(shown.cart) == 1


async def test_a_spend_limit_stops_the_payment(
    shown: Conversation, merchant_http: TestClient, agent_token: str,
    paypal_client: AsyncPayPalClient,
) -> None:  # fmt: skip
    limits = SpendLimits(per_call={"USD": Decimal("20")})
    toolkit = _toolkit(merchant_http, agent_token, paypal_client, limits)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, quoted = await say(checkout, shown, "checkout", toolkit)
    _, refused = await say(checkout, shown, "yes", toolkit)
    assert "did not go through" in refused.text and "per-call limit" in refused.text
    seen = await toolkit.call(
        "get_merchant_checkout", {"checkout_id": quoted.data["merchant_checkout"]["id"]}
    )
    assert seen.content["status"] == "ready_for_payment"


async def test_the_model_cannot_pay_without_the_shoppers_yes(
    shown: Conversation, merchant_http: TestClient, agent_token: str,
    paypal_client: AsyncPayPalClient,
) -> None:  # fmt: skip
    toolkit = _toolkit(merchant_http, agent_token, paypal_client)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, quoted = await say(checkout, shown, "checkout", toolkit)
    checkout_id = quoted.data["merchant_checkout"]["id"]
    # A tool call with no grant in force, as a model would make it, is refused.
    refused = await toolkit.call(
        "complete_merchant_checkout", {"checkout_id": checkout_id, "payment_token": "BA-X"}
    )
    assert (refused.is_error and refused.content["kind"] == "ApprovalRequired") or (
        refused.content["error"] == "approval"
    )
    seen = await toolkit.call("get_merchant_checkout", {"checkout_id": checkout_id})
    assert seen.content["status"] == "ready_for_payment"


async def test_a_price_change_before_the_yes_takes_no_money(
    shown: Conversation, merchant_http: TestClient, agent_token: str,
    paypal_client: AsyncPayPalClient,
) -> None:  # fmt: skip
    toolkit = _toolkit(merchant_http, agent_token, paypal_client)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    await say(checkout, shown, "checkout", toolkit)
    assert shown.pending is not None
    shown.pending.data["total"] = "10.00"  # what the shopper agreed to is not today's total
    _, stopped = await say(checkout, shown, "yes", toolkit)
    assert "changed" in stopped.text and "did not pay" in stopped.text
    assert shown.pending is None and shown.orders == []


async def test_the_same_checkout_over_ucp(
    shown: Conversation,
    merchant: Merchant,
    agents: Agents,
    agent_token: str,
    paypal_client: AsyncPayPalClient,
    merchant_paypal: PayPalClient,
) -> None:
    from cartagent.shopping.ucp import UcpClient
    from tests.commerce.test_ucp_checkout import BASE_URL as UCP_URL
    from tests.commerce.test_ucp_checkout import PLATFORM, serve

    with serve(merchant, agents) as business:
        shop = UcpClient.discover(
            UCP_URL, agent_token, profile_url=PLATFORM, transport=TestClientTransport(business)
        )
        toolkit = assistant_toolkit(paypal_client, merchant=shop)
        checkout = CheckoutSpecialist(shopper=SHOPPER)
        await say(checkout, shown, "add the first one to my cart", toolkit)
        _, quoted = await say(checkout, shown, "checkout please", toolkit)
        assert "merchant_checkout" in quoted.data, quoted.text
        session = quoted.data["merchant_checkout"]
        assert session["ready"] and session["totals"]["total"] == "54.95"
        _, paid = await say(checkout, shown, "yes", toolkit)
    assert paid.text.startswith("Paid 54.95 USD."), paid.text
    agent = agents.by_token(agent_token)
    assert agent is not None
    stored = merchant.get(agent.name, session["id"], protocol="ucp")
    order = merchant_paypal.get_order(stored.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


@pytest.mark.parametrize("change", ["make it 3", "add the second one to my cart"])
async def test_a_yes_given_before_the_cart_changed_pays_the_merchant_nothing(
    change: str,
    shown: Conversation,
    merchant_http: TestClient,
    agent_token: str,
    paypal_client: AsyncPayPalClient,
    agents: Agents,
    merchant: Merchant,
) -> None:
    toolkit = _toolkit(merchant_http, agent_token, paypal_client)
    checkout = CheckoutSpecialist(shopper=SHOPPER)
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, quoted = await say(checkout, shown, "checkout please", toolkit)
    session = quoted.data["merchant_checkout"]
    await say(checkout, shown, change, toolkit)
    cart = list(shown.cart)
    _, stale = await say(checkout, shown, "yes", toolkit)
    assert "Your cart changed after the merchant's checkout" in stale.text, stale.text
    assert shown.cart == cart and shown.pending is None and shown.orders == []
    agent = agents.by_token(agent_token)
    assert agent is not None
    assert merchant.get(agent.name, session["id"]).status != "completed"
