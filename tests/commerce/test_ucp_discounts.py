"""UCP's discount and buyer-consent extensions, at v2026-04-08 and v2026-01-11: codes applied
in order, unknown codes a warning, the totals and PayPal's capture agreeing to the cent, and
the buyer's consent kept."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, CheckoutRecords, Merchant, MerchantCatalog, PayPalPayments
from cartagent.commerce.terms import Discount, StoreTerms
from cartagent.commerce.ucp import KnownProfiles
from cartagent.paypal import PayPalClient
from cartagent.protocols.ucp.profile import BUYER_CONSENT, CHECKOUT, DISCOUNT, FULFILLMENT, ORDER
from tests.commerce.conftest import in_stock, tau_products
from tests.commerce.test_ucp_2026_01_11 import OLD, create_body, old_profile
from tests.commerce.test_ucp_checkout import (
    ALL,
    PAYMENT,
    PLATFORM,
    SHIPPING,
    UcpClient,
    conforms,
    lines,
    platform_profile,
    serve,
)

CODES = (
    Discount("10OFF", "10% off", Decimal(10)),
    Discount("WELCOME20", "20% off", Decimal(20)),
    Discount("FIXED500", "$5.00 off", amount=Decimal(5)),
)
PROFILES = KnownProfiles(
    {
        PLATFORM: platform_profile((*ALL, DISCOUNT, BUYER_CONSENT)),
        OLD: old_profile((CHECKOUT, FULFILLMENT, DISCOUNT, ORDER)),
    }
)


@pytest.fixture
def store(records: CheckoutRecords, merchant_paypal: PayPalClient) -> Merchant:
    terms = StoreTerms(discounts=CODES)
    return Merchant(
        MerchantCatalog(tau_products()), records, PayPalPayments(merchant_paypal), terms=terms
    )


@pytest.fixture
def shop(store: Merchant, agents: Agents) -> Iterator[TestClient]:
    with serve(store, agents, PROFILES) as http:
        yield http


def half_up(cents: Decimal) -> int:
    return int(cents.quantize(Decimal(1), ROUND_HALF_UP))


def totals(session: dict[str, Any]) -> dict[str, int]:
    return {total["type"]: total["amount"] for total in session["totals"]}


def test_codes_stack_and_the_capture_is_the_discounted_total(
    shop: TestClient,
    store: Merchant,
    agents: Agents,
    agent_token: str,
    merchant_paypal: PayPalClient,
) -> None:
    platform = UcpClient(shop, agent_token)
    buyer = {"first_name": "Ada", "consent": {"marketing": True, "analytics": False}}
    created = platform.post(
        "/checkout-sessions",
        {
            "line_items": lines((in_stock()[0], 3)),
            "fulfillment": SHIPPING,
            "buyer": buyer,
            "discounts": {"codes": ["10off", "nope", "WELCOME20", "10OFF"]},
        },
    )
    assert created.status_code == 201, created.text
    session = created.json()
    conforms("checkout", session)
    assert session["buyer"]["consent"] == {"marketing": True, "analytics": False}
    discounts = session["discounts"]
    assert discounts["codes"] == ["10off", "nope", "WELCOME20"]  # each once, as given
    assert [d["code"] for d in discounts["applied"]] == ["10OFF", "WELCOME20"]
    sums = totals(session)
    subtotal = sums["subtotal"]
    first = half_up(subtotal * Decimal("0.1"))
    second = half_up((subtotal - first) * Decimal("0.2"))
    assert discounts["applied"][0]["amount"] == first
    assert sums["discount"] == -(first + second)  # negative in this release
    assert sums["total"] == subtotal + sums["discount"] + sums["tax"] + sums["fulfillment"]
    [warning] = [m for m in session["messages"] if m["code"] == "discount_code_invalid"]
    assert (warning["type"], warning["path"]) == ("warning", "$.discounts.codes[1]")
    [line] = session["line_items"]
    assert {t["type"]: t["amount"] for t in line["totals"]}["discount"] == -(first + second)
    done = platform.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert done.status_code == 200 and done.json()["status"] == "completed", done.text
    # PayPal captured exactly the discounted total, its breakdown carrying the discount.
    agent = agents.by_token(agent_token)
    assert agent is not None
    paid = store.get(agent.name, session["id"]).payment.paypal_order_id
    assert paid is not None
    order = merchant_paypal.get_order(paid)
    amount = order["purchase_units"][0]["amount"]
    assert Decimal(amount["value"]) * 100 == sums["total"]
    assert Decimal(amount["breakdown"]["discount"]["value"]) * 100 == first + second


def test_an_old_platform_gets_positive_discount_amounts(shop: TestClient, agent_token: str) -> None:
    old = UcpClient(shop, agent_token, OLD)
    body = create_body(in_stock()[0], discounts={"codes": ["FIXED500"]})
    created = old.post("/checkout-sessions", body)
    assert created.status_code == 201, created.text
    session = created.json()
    assert totals(session)["discount"] == 500
    assert session["discounts"]["applied"][0]["amount"] == 500
    session_id = session["id"]
    cleared = old.put(
        f"/checkout-sessions/{session_id}",
        {
            "id": session_id,
            "currency": "USD",
            "line_items": [
                {"id": session["line_items"][0]["id"], "item": {"id": in_stock()[0]}, "quantity": 1}
            ],
            "payment": {},
            "discounts": {"codes": []},
        },
    )
    assert cleared.status_code == 200, cleared.text
    assert "discount" not in totals(cleared.json())
    assert cleared.json()["discounts"] == {"codes": [], "applied": []}


def test_an_automatic_promotion_shows_without_a_code(
    records: CheckoutRecords, merchant_paypal: PayPalClient, agents: Agents, agent_token: str
) -> None:
    sale = Discount("SALE", "Store-wide sale", Decimal(5), automatic=True)
    terms = StoreTerms(discounts=(sale,))
    merchant = Merchant(
        MerchantCatalog(tau_products()), records, PayPalPayments(merchant_paypal), terms=terms
    )
    with serve(merchant, agents, PROFILES) as http:
        session = UcpClient(http, agent_token).post(
            "/checkout-sessions", {"line_items": lines(in_stock()[0])}
        )
    assert session.status_code == 201, session.text
    [applied] = session.json()["discounts"]["applied"]
    assert applied["automatic"] is True and "code" not in applied
    assert applied["title"] == "Store-wide sale"
    assert totals(session.json())["discount"] == -applied["amount"]
