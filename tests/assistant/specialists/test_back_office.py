"""The back office against the in-process sandbox: invoices, disputes, plans, sales; the
merchant-only rule, confirmations before money moves, and a capable model kept to its tools."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import Conversation, Domain, Reply, StoredMessage, TurnContext
from cartagent.assistant.specialist import load_prompt
from cartagent.assistant.specialists.back_office.specialist import (
    _CONFIRM,
    BACK_OFFICE_TOOLS,
    BackOfficeSpecialist,
)
from cartagent.assistant.toolkit import assistant_toolkit
from cartagent.errors import ModelError
from cartagent.llm import Message, ToolCall, ToolSpec
from cartagent.paypal import AsyncPayPalClient
from cartagent.testing import FunctionModel, ScriptedModel
from cartagent.tools import ALL_TOOLS, Toolkit, ToolkitConfig, ToolResult
from tests.conftest import START
from tests.tools.flows import paid_capture, sandbox_get, sandbox_post

TODAY = START.date()  # the sandbox's pinned calendar day (a Saturday)
JOURNEY = (
    "Create a PayPal invoice link for painting a house with a cost of $450. Add 8% tax and "
    "apply 5% discount. Make sure it expires in 10 days."
)


@pytest.fixture
def toolkit(paypal_client: AsyncPayPalClient) -> Toolkit:
    """The assistant's toolkit: money-moving and destructive calls only under a grant."""
    return assistant_toolkit(paypal_client, today=lambda: TODAY)


@pytest.fixture
def payments(paypal_client: AsyncPayPalClient) -> Toolkit:
    """Every tool, every approval granted: for setting up paid orders to dispute."""
    config = ToolkitConfig.everything((t.family, t.action) for t in ALL_TOOLS)
    return Toolkit(
        paypal_client, ALL_TOOLS, config=config, approve=lambda r: True, today=lambda: TODAY
    )


def _conversation() -> Conversation:
    return Conversation("s", "merchant", datetime(2026, 11, 21, tzinfo=UTC))


def say(
    conversation: Conversation,
    text: str,
    toolkit: Toolkit | None,
    *,
    merchant: bool = True,
    model: Any = None,
) -> tuple[Reply, TurnContext]:
    """One turn through the specialist, stored in ``conversation`` as the assistant would."""
    turn = TurnContext(text, conversation, model=model, toolkit=toolkit, merchant=merchant)
    reply = asyncio.run(BackOfficeSpecialist(today=lambda: TODAY).handle(turn))
    conversation.messages += [
        StoredMessage("user", text),
        StoredMessage("assistant", reply.text, payload=reply.payload()),
    ]
    return reply, turn


def open_dispute(payments: Toolkit, http: TestClient, client: AsyncPayPalClient) -> tuple[str, str]:
    capture_id = paid_capture(payments, http, "25.00")
    dispute = sandbox_post(
        client, "/v1/sandbox/disputes", {"capture_id": capture_id, "message": "Never arrived"}
    )
    return capture_id, str(dispute["dispute_id"])


def test_the_specialist_offers_the_merchant_families_and_a_prompt() -> None:
    families = {t.family for t in ALL_TOOLS if t.name in BACK_OFFICE_TOOLS}
    assert families == {
        "invoices", "products", "plans", "subscriptions", "disputes", "refunds", "transactions",
        "tracking", "orders",
    }  # fmt: skip
    assert "create_order" not in BACK_OFFICE_TOOLS and "capture_order" not in BACK_OFFICE_TOOLS
    assert "get_order" in BACK_OFFICE_TOOLS and "create_refund" in BACK_OFFICE_TOOLS
    assert "back-office specialist" in load_prompt("back_office.md")
    # Every tool of the subset that the approval gate stops can be confirmed with a yes.
    gated = {t.name for t in ALL_TOOLS if t.name in BACK_OFFICE_TOOLS and t.needs_approval}
    assert gated == set(_CONFIRM)


def test_the_invoice_journey_ends_in_a_sent_invoice_due_in_ten_days_with_its_link(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    reply, _ = say(_conversation(), JOURNEY, toolkit)

    invoice_id = reply.data["invoice_id"]
    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{invoice_id}")
    assert invoice["status"] == "SENT"
    assert (invoice["amount"]["currency_code"], invoice["amount"]["value"]) == ("USD", "461.70")
    due = (TODAY + timedelta(days=10)).isoformat()
    assert invoice["detail"]["payment_term"]["due_date"] == due
    assert invoice["items"][0]["name"] == "Painting a house"
    link = invoice["detail"]["metadata"]["recipient_view_url"]
    assert link in reply.text and "461.70 USD" in reply.text and due in reply.text
    assert reply.domain is Domain.BACK_OFFICE


def test_a_billed_email_with_hours_and_net_terms_is_invoiced_to_that_address(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    conversation = _conversation()
    reply, _ = say(
        conversation, "bill jamie@example.com 3 hours of consulting at $120/hour, net 30", toolkit
    )

    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{reply.data['invoice_id']}")
    assert invoice["amount"]["value"] == "360.00"
    assert invoice["items"][0]["quantity"] == "3"
    assert invoice["primary_recipients"][0]["billing_info"]["email_address"] == (
        "jamie@example.com"
    )
    assert invoice["detail"]["payment_term"]["due_date"] == "2026-12-21"

    listed, _ = say(conversation, "show my unpaid invoices", toolkit)
    number = invoice["detail"]["invoice_number"]
    assert listed.text.startswith("1 unpaid invoice:") and f"#{number}" in listed.text
    shown, _ = say(conversation, f"show invoice #{number}", toolkit)
    assert "Consulting: 3 x 120.00" in shown.text and "360.00 USD" in shown.text


def test_send_it_to_an_address_readdresses_the_invoice_just_made(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    conversation = _conversation()
    asked, _ = say(conversation, "send it to jane@example.com", toolkit)
    assert asked.text.startswith("Which invoice? Name it by number or id")
    made, _ = say(conversation, "invoice for painting a house, $450, due in 10 days", toolkit)
    invoice_id = made.data["invoice_id"]

    sent, _ = say(conversation, "please send it to jane@example.com", toolkit)

    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{invoice_id}")
    assert invoice["primary_recipients"][0]["billing_info"]["email_address"] == ("jane@example.com")
    assert invoice["status"] == "SENT" and invoice["amount"]["value"] == "450.00"
    number = invoice["detail"]["invoice_number"]
    assert sent.text == f"Invoice #{number} (450.00 USD) is sent to jane@example.com."
    # A request with an amount is a new invoice, not the last one sent again.
    new, _ = say(conversation, "send an invoice to jo@example.com for a logo, $900", toolkit)
    assert new.data["invoice_id"] != invoice_id and "900.00 USD" in new.text


@pytest.mark.parametrize(
    "request_text",
    [
        "Draft an invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days",
        "invoice for painting a house, $450, 8% tax, 5% discount, due in 10 days, but "
        "don't send it yet",
        "Preview an invoice for painting a house: $450, add 8% tax, 5% discount, due in 10 days",
    ],
)
def test_a_draft_is_made_unsent_and_sent_once_the_merchant_says_so(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient, request_text: str
) -> None:
    conversation = _conversation()
    drafted, _ = say(conversation, request_text, toolkit)

    invoice_id = drafted.data["invoice_id"]
    assert drafted.data["invoice_draft"] is True
    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{invoice_id}")
    number = invoice["detail"]["invoice_number"]
    assert invoice["status"] == "DRAFT" and invoice["amount"]["value"] == "461.70"
    assert invoice["items"][0]["name"] == "Painting a house"
    assert drafted.text.startswith(f"Draft invoice #{number} is ready and not sent: 461.70 USD")
    assert drafted.text.endswith('then say "send it" to send it.')
    assert "Pay here" not in drafted.text

    sent, _ = say(conversation, "looks good, send it", toolkit)

    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{invoice_id}")
    assert invoice["status"] in ("SENT", "UNPAID")
    assert sent.text.startswith(f"Invoice #{number} is ") and "Pay here: " in sent.text
    assert sent.data == {"invoice_id": invoice_id}
    again, _ = say(conversation, "send it", toolkit)
    assert again.text.startswith(f"I could not send {invoice_id}: ")


@pytest.mark.parametrize("text", ["send it", "ok, send the invoice", "please send the draft"])
def test_send_it_with_no_invoice_in_the_conversation_asks_which(
    toolkit: Toolkit, text: str
) -> None:
    reply, _ = say(_conversation(), text, toolkit)
    assert reply.text == "Which invoice? Name it by number or id, e.g. 'send invoice #0001'."


def test_an_invoice_asked_for_plainly_is_still_sent_at_once(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    reply, _ = say(_conversation(), JOURNEY, toolkit)
    invoice = sandbox_get(paypal_client, f"/v2/invoicing/invoices/{reply.data['invoice_id']}")
    assert invoice["status"] in ("SENT", "UNPAID") and "invoice_draft" not in reply.data


def test_an_invoice_without_an_amount_asks_for_it_and_calls_nothing(toolkit: Toolkit) -> None:
    reply, turn = say(_conversation(), "invoice for a logo design", toolkit)

    assert reply.text.startswith("How much should the invoice for logo design be?")
    assert "tools" not in turn.timings


def test_a_shopper_is_told_the_back_office_is_the_merchants_and_nothing_is_called() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    offline = AsyncPayPalClient("id", "secret", transport=httpx.MockTransport(record))
    conversation = _conversation()
    model = ScriptedModel([])  # would fail the test if it were asked anything
    for text in ("accept the claim on dispute PP-D-12345", JOURNEY, "yes"):
        reply, turn = say(
            conversation, text, assistant_toolkit(offline), merchant=False, model=model
        )
        assert "sign in as the merchant" in reply.text
        assert "tools" not in turn.timings
    assert sent == [] and not model.calls and conversation.pending is None


def test_without_a_payment_backend_the_back_office_says_it_is_not_configured() -> None:
    reply, _ = say(_conversation(), JOURNEY, None)
    assert "not configured" in reply.text


def test_accepting_a_claim_asks_first_and_refunds_only_after_yes(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(payments, http, paypal_client)
    conversation = _conversation()

    asked, _ = say(conversation, f"Accept the claim on dispute {dispute_id}", toolkit)

    assert "25.00 USD" in asked.text and asked.text.endswith("or no to leave it as it is.")
    assert conversation.pending is not None and conversation.pending.domain is Domain.BACK_OFFICE
    dispute = sandbox_get(paypal_client, f"/v1/customer/disputes/{dispute_id}")
    assert dispute["status"] == "WAITING_FOR_SELLER_RESPONSE"

    done, _ = say(conversation, "yes", toolkit)

    assert conversation.pending is None
    assert done.text.startswith(f"Accepted the claim on dispute {dispute_id}: 25.00 USD")
    capture = sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")
    assert capture["status"] == "REFUNDED"


def test_no_to_accepting_a_claim_clears_the_question_and_calls_nothing(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(payments, http, paypal_client)
    conversation = _conversation()
    say(conversation, f"accept the claim on dispute {dispute_id}", toolkit)

    reply, turn = say(conversation, "no thanks", toolkit)

    assert conversation.pending is None and "nothing was done" in reply.text
    assert "tools" not in turn.timings
    assert sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")["status"] == (
        "COMPLETED"
    )
    # A later yes has nothing to confirm: it is not an answer to anything.
    later, turn = say(conversation, "yes", toolkit)
    assert "tools" not in turn.timings and "In the back office I can" in later.text


def test_open_disputes_are_listed_and_one_is_shown(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(payments, http, paypal_client)
    conversation = _conversation()

    listed, _ = say(conversation, "show my open disputes", toolkit)
    shown, _ = say(conversation, f"what about dispute {dispute_id.lower()}?", toolkit)

    assert listed.text.startswith("1 open dispute:") and dispute_id in listed.text
    assert f"Dispute {dispute_id}:" in shown.text and "25.00 USD" in shown.text
    assert capture_id in shown.text and "Never arrived" in shown.text


def test_a_monthly_plan_is_created_on_a_new_product(
    toolkit: Toolkit, paypal_client: AsyncPayPalClient
) -> None:
    conversation = _conversation()
    reply, _ = say(conversation, "create a monthly plan 'Coffee club' at $15", toolkit)

    plan = sandbox_get(paypal_client, f"/v1/billing/plans/{reply.data['plan_id']}")
    assert plan["name"] == "Coffee club" and plan["status"] == "ACTIVE"
    cycle = plan["billing_cycles"][0]
    assert cycle["frequency"] == {"interval_unit": "MONTH", "interval_count": 1}
    assert cycle["pricing_scheme"]["fixed_price"] == {"currency_code": "USD", "value": "15.00"}
    product = sandbox_get(paypal_client, f"/v1/catalogs/products/{plan['product_id']}")
    assert product["name"] == "Coffee club"
    assert reply.data["plan_id"] in reply.text and "15.00 USD every month" in reply.text

    listed, _ = say(conversation, "list my plans", toolkit)
    assert listed.text.startswith("1 plan:")
    assert f"- Coffee club ({reply.data['plan_id']}): ACTIVE" in listed.text
    beans, _ = say(conversation, "create a monthly plan for coffee beans at $20", toolkit)
    assert beans.text.startswith("Created the plan 'Coffee beans' (")
    assert "20.00 USD every month" in beans.text
    priced, turn = say(conversation, "create a plan for $20 a month", toolkit)
    assert priced.text.startswith("What should the plan be called?")
    assert "tools" not in turn.timings
    unclear, turn = say(conversation, "create a plan 'Tea club' at $9", toolkit)
    assert unclear.text.startswith("How often should 'Tea club' bill")
    assert "tools" not in turn.timings
    too_long, turn = say(conversation, "create a plan 'Tea club' every 13 months at $9", toolkit)
    assert too_long.text.startswith("I can't create that plan: at most 12 for MONTH")
    assert "tools" not in turn.timings  # no product is left behind for a plan that cannot be


def test_sales_this_week_are_counted_and_summed_per_currency(
    toolkit: Toolkit, payments: Toolkit, http: TestClient
) -> None:
    paid_capture(payments, http, "25.00")
    paid_capture(payments, http, "17.50")

    reply, _ = say(_conversation(), "sales this week", toolkit)

    assert reply.text.splitlines() == [
        "2 transactions from 2026-11-16 to 2026-11-21:",
        "- USD: 42.50 received, 0.00 refunded or paid out, net 42.50",
    ]
    refunded, _ = say(_conversation(), "how much did we refund this week?", toolkit)
    assert refunded.text.startswith("2 transactions from 2026-11-16 to 2026-11-21:")
    too_long, turn = say(_conversation(), "sales in the last 90 days", toolkit)
    assert "at most 31 days" in too_long.text and "tools" not in turn.timings


def test_best_sellers_rank_products_by_units_then_money_over_the_window(
    toolkit: Toolkit, payments: Toolkit, http: TestClient
) -> None:
    def item(name: str, price: str, quantity: int = 1) -> dict[str, Any]:
        return {"name": name, "unit_price": price, "quantity": quantity}

    paid_capture(payments, http, items=[item("Mug", "8.00", 2), item("Tea", "5.50", 2)])
    paid_capture(payments, http, items=[item(" tea", "5.50"), item("Kettle", "40.00")])
    paid_capture(payments, http, items=[item("Spoon", "2.00", 3)])

    reply, _ = say(_conversation(), "what are our top selling products this week?", toolkit)

    assert reply.text.splitlines() == [
        "Best sellers from 2026-11-16 to 2026-11-21 (3 checkout payments, before refunds):",
        "1. Tea: 3 sold, 16.50 USD",
        "2. Spoon: 3 sold, 6.00 USD",
        "3. Mug: 2 sold, 16.00 USD",
        "4. Kettle: 1 sold, 40.00 USD",
    ]
    assert reply.data["best_sellers"][0] == {"name": "Tea", "units": 3}
    two, _ = say(_conversation(), "top 2 best-selling items this week", toolkit)
    assert two.text.splitlines()[1:] == [
        "1. Tea: 3 sold, 16.50 USD",
        "2. Spoon: 3 sold, 6.00 USD",
        "(2 more products sold.)",
    ]
    none, _ = say(_conversation(), "best sellers yesterday", toolkit)
    assert none.text == "No products sold from 2026-11-20 to 2026-11-20."
    too_long, turn = say(_conversation(), "what sold best this year", toolkit)
    assert "at most 31 days" in too_long.text and "tools" not in turn.timings


def test_orders_of_a_period_are_counted_with_their_total_and_average(
    toolkit: Toolkit, payments: Toolkit, http: TestClient
) -> None:
    paid_capture(payments, http, "25.00")
    paid_capture(payments, http, "17.51")

    reply, _ = say(_conversation(), "how many orders did we get this week?", toolkit)
    none, _ = say(_conversation(), "orders yesterday", toolkit)

    assert reply.text.splitlines() == [
        "2 orders paid from 2026-11-16 to 2026-11-21 (before refunds):",
        "- 42.51 USD in all, 21.26 USD on average",
    ]
    assert reply.data == {"orders": 2}
    assert none.text == "No orders were paid from 2026-11-20 to 2026-11-20."


def test_anything_else_gets_the_list_of_what_the_back_office_does(toolkit: Toolkit) -> None:
    reply, turn = say(_conversation(), "hello there", toolkit)
    assert reply.text.startswith("In the back office I can:") and "tools" not in turn.timings


# ---------------------------------------------------------------------------- orders and refunds


def _order_of(client: AsyncPayPalClient, capture_id: str) -> str:
    capture = sandbox_get(client, f"/v2/payments/captures/{capture_id}")
    return str(capture["supplementary_data"]["related_ids"]["order_id"])


def _paid_a_minute_later(
    payments: Toolkit, http: TestClient, client: AsyncPayPalClient, value: str
) -> str:
    sandbox_post(client, "/v1/sandbox/clock/advance", {"seconds": 60})
    return paid_capture(payments, http, value)


def _capture_status(client: AsyncPayPalClient, capture_id: str) -> str:
    return str(sandbox_get(client, f"/v2/payments/captures/{capture_id}")["status"])


def test_refunding_the_last_order_asks_with_the_amount_and_refunds_only_after_yes(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    older = paid_capture(payments, http, "12.00")
    newest = _paid_a_minute_later(payments, http, paypal_client, "30.00")
    conversation = _conversation()

    asked, _ = say(conversation, "please refund the last order", toolkit)

    assert asked.text.startswith(
        f"Shall I refund all that is left of the 30.00 USD of payment {newest} to the buyer?"
    )
    assert _capture_status(paypal_client, newest) == "COMPLETED"
    done, _ = say(conversation, "yes", toolkit)
    assert done.text.startswith(f"Refunded 30.00 USD of payment {newest} to the buyer (refund ")
    assert _capture_status(paypal_client, newest) == "REFUNDED"
    assert _capture_status(paypal_client, older) == "COMPLETED"
    order_id = _order_of(paypal_client, newest)
    for again in (f"refund payment {newest}", "refund the latest order"):
        reply, _ = say(conversation, again, toolkit)
        assert reply.text == f"Payment {newest} (order {order_id}) is already refunded in full."


def test_part_of_an_order_is_refunded_with_a_note_then_the_rest(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = paid_capture(payments, http, "30.00")
    order_id = _order_of(paypal_client, capture_id)
    conversation = _conversation()

    asked, _ = say(
        conversation, f"refund $10 of order {order_id.lower()} because it arrived late", toolkit
    )

    assert asked.text.startswith(
        f"Shall I refund 10.00 USD of payment {capture_id} to the buyer, with the note "
        '"it arrived late"?'
    )
    say(conversation, "yes", toolkit)
    refunds = sandbox_get(paypal_client, f"/v2/checkout/orders/{order_id}")["purchase_units"][0][
        "payments"
    ]["refunds"]
    assert [(r["amount"]["value"], r.get("note_to_payer")) for r in refunds] == [
        ("10.00", "it arrived late")
    ]
    assert _capture_status(paypal_client, capture_id) == "PARTIALLY_REFUNDED"

    rest, _ = say(conversation, f"now refund the rest of order {order_id}", toolkit)
    assert "refund the 20.00 USD left of the 30.00 USD of payment" in rest.text
    say(conversation, "no", toolkit)
    too_much, _ = say(conversation, f"refund $25 of order {order_id}", toolkit)
    assert too_much.text.startswith(f"Only 20.00 USD of the 30.00 USD of payment {capture_id}")
    rest, _ = say(conversation, f"now refund the rest of order {order_id}", toolkit)
    done, _ = say(conversation, "yes", toolkit)
    assert done.text.startswith(f"Refunded 20.00 USD of payment {capture_id}")
    assert _capture_status(paypal_client, capture_id) == "REFUNDED"
    full, _ = say(conversation, f"refund order {order_id}", toolkit)
    assert full.text == f"Payment {capture_id} (order {order_id}) is already refunded in full."


def test_half_or_a_percentage_of_a_payment_is_refunded(
    toolkit: Toolkit, payments: Toolkit, http: TestClient
) -> None:
    capture_id = paid_capture(payments, http, "25.01")
    half, _ = say(_conversation(), f"refund half of payment {capture_id}", toolkit)
    share, _ = say(_conversation(), f"refund 10% of payment {capture_id}", toolkit)
    assert half.text.startswith(f"Shall I refund 12.51 USD of payment {capture_id}")
    assert share.text.startswith(f"Shall I refund 2.50 USD of payment {capture_id}")


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("refund the order", "Which payment should I refund?"),
        ("refund payment {capture} and payment AB3456789012345CD", "one payment at a time"),
        ("refund $50 of payment {capture}", "50.00 USD is more than the 30.00 USD of payment"),
        ("refund 5 EUR of payment {capture}", "is in USD: say the amount in USD"),
        ("refund 150% of payment {capture}", "between 0% and 100%"),
        ("refund $0 of payment {capture}", "more than zero"),
        ("refund order AB3456789012345CD", "I found no order AB3456789012345CD"),
    ],
)
def test_a_refund_that_cannot_be_read_is_asked_about_and_nothing_is_refunded(
    toolkit: Toolkit,
    payments: Toolkit,
    http: TestClient,
    paypal_client: AsyncPayPalClient,
    request_text: str,
    expected: str,
) -> None:
    capture_id = paid_capture(payments, http, "30.00")
    conversation = _conversation()

    reply, _ = say(conversation, request_text.format(capture=capture_id), toolkit)

    assert expected.format(capture=capture_id) in reply.text
    assert conversation.pending is None
    assert _capture_status(paypal_client, capture_id) == "COMPLETED"


def test_an_unpaid_order_has_nothing_to_refund(toolkit: Toolkit, payments: Toolkit) -> None:
    made = asyncio.run(
        payments.call("create_order", {"items": [{"name": "Mug", "unit_price": "9.00"}]})
    )
    order_id = made.content["id"]
    reply, _ = say(_conversation(), f"refund order {order_id}", toolkit)
    assert reply.text == f"Order {order_id} is not paid (CREATED), so there is nothing to refund."
    shown, _ = say(_conversation(), f"show order {order_id}", toolkit)
    assert shown.text == f"Order {order_id}: CREATED, 9.00 USD; not paid yet."


def test_an_order_is_shown_with_its_payment_and_shipment_and_recent_orders_are_listed(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    first = paid_capture(payments, http, "12.00")
    second = _paid_a_minute_later(payments, http, paypal_client, "30.00")
    order_id = _order_of(paypal_client, first)

    shown, _ = say(_conversation(), f"what's the status of order {order_id}?", toolkit)
    latest, _ = say(_conversation(), "show me the latest order", toolkit)
    by_payment, _ = say(_conversation(), f"show payment {second}", toolkit)
    listed, _ = say(_conversation(), "show me the recent orders", toolkit)

    assert shown.text.splitlines() == [
        f"Order {order_id}: COMPLETED, 12.00 USD; payment {first} COMPLETED.",
        "Shipping: not shipped yet; it usually leaves within one business day.",
    ]
    second_order = _order_of(paypal_client, second)
    assert latest.text.startswith(f"Order {second_order}: COMPLETED, 30.00 USD;")
    assert by_payment.text.startswith(
        f"Payment {second} (order {second_order}): 30.00 USD, COMPLETED."
    )
    lines = listed.text.splitlines()
    assert lines[0] == "The 2 newest checkout payments:"
    assert [line.split("payment ")[1] for line in lines[1:3]] == [
        f"{second}: 30.00 USD (order {second_order})",
        f"{first}: 12.00 USD (order {order_id})",
    ]


def test_shipping_an_order_adds_its_tracking_and_a_delivery_updates_it(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = paid_capture(payments, http, "30.00")
    order_id = _order_of(paypal_client, capture_id)
    label = f"Payment {capture_id} (order {order_id})"
    conversation = _conversation()

    asked, _ = say(conversation, "ship the last order", toolkit)
    shipped, _ = say(conversation, "shipped the last order with UPS 1Z999AA10123456784", toolkit)
    question, _ = say(conversation, "has the last order shipped?", toolkit)
    delivered, _ = say(conversation, "it was delivered", toolkit)  # the order just shown

    assert asked.text.startswith(
        f"Which carrier and tracking number? Say, for example, 'ship {label[0].lower()}"
    )
    assert shipped.text == (
        f"{label} has tracking: UPS 1Z999AA10123456784, shipped. The buyer sees it when they ask "
        "where their order is."
    )
    assert question.text.splitlines()[1] == (
        "Shipping: shipped with UPS, tracking number 1Z999AA10123456784."
    )
    assert delivered.text.startswith(f"{label} is now: UPS 1Z999AA10123456784, delivered.")
    trackers = sandbox_get(paypal_client, f"/v1/shipping/trackers?transaction_id={capture_id}")
    assert [(t["carrier"], t["status"]) for t in trackers["trackers"]] == [("UPS", "DELIVERED")]


def test_a_shipment_of_an_unpaid_or_unknown_order_says_why_and_adds_nothing(
    toolkit: Toolkit, payments: Toolkit
) -> None:
    made = asyncio.run(
        payments.call("create_order", {"items": [{"name": "Mug", "unit_price": "9.00"}]})
    )
    order_id = made.content["id"]
    unpaid, _ = say(_conversation(), f"ship order {order_id} via DHL 1234567890", toolkit)
    unknown, _ = say(_conversation(), "ship order AB3456789012345CD via DHL 1234567890", toolkit)
    assert unpaid.text == f"Order {order_id} is not paid (CREATED), so there is nothing to ship."
    assert unknown.text.startswith("I found no order AB3456789012345CD")


def test_a_model_refunding_without_a_yes_is_refused_and_the_merchant_asked(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id = paid_capture(payments, http, "30.00")
    conversation = _conversation()
    refund = _calls(("create_refund", {"capture_id": capture_id, "amount": "7.5"}))
    model = ScriptedModel([refund, lambda sent: Message("assistant", _result(sent, "c0")["kind"])])

    reply, _ = say(conversation, f"give back 7.50 on {capture_id}", toolkit, model=model)

    assert reply.text.startswith(
        f"ApprovalDenied\n\nShall I refund 7.50 USD of payment {capture_id} to the buyer?"
    )
    assert _capture_status(paypal_client, capture_id) == "COMPLETED"
    done, _ = say(conversation, "yes", toolkit, model=model)
    assert done.text.startswith(f"Refunded 7.50 USD of payment {capture_id}")
    assert _capture_status(paypal_client, capture_id) == "PARTIALLY_REFUNDED"
    # More than the payment: refused before any question.
    too_much = _calls(("create_refund", {"capture_id": capture_id, "amount": "99"}))
    model = ScriptedModel([too_much, lambda sent: Message("assistant", "Asked.")])
    refused, _ = say(_conversation(), "refund it", toolkit, model=model)
    assert refused.text == (
        "Asked.\n\n99 is not an amount I can refund of the 30.00 USD of payment "
        f"{capture_id} (order {_order_of(paypal_client, capture_id)}). Nothing was refunded."
    )


# ---------------------------------------------------------------------------- capable model


def _calls(*calls: tuple[str, dict[str, Any]]) -> Message:
    return Message(
        "assistant",
        None,
        tool_calls=tuple(ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)),
    )


def _result(messages: list[Message], call_id: str) -> dict[str, Any]:
    answer = next(m for m in messages if m.role == "tool" and m.tool_call_id == call_id)
    content: dict[str, Any] = orjson.loads(answer.content or "")
    return content


def test_a_capable_model_is_kept_to_the_back_office_tools(toolkit: Toolkit) -> None:
    conversation = _conversation()
    conversation.messages.append(StoredMessage("user", "earlier question"))
    outside = _calls(("create_order", {"items": [{"name": "Mug", "unit_price": "5"}]}))
    model = ScriptedModel(
        [
            outside,
            lambda sent: Message("assistant", f"Refused: {_result(sent, 'c0')['error']}"),
        ]
    )

    reply, _ = say(conversation, "take a payment of $5", toolkit, model=model)

    assert reply.text == "Refused: unknown_tool"
    first = model.calls[0]
    assert first.messages[0].role == "system" and "back-office" in (first.messages[0].content or "")
    assert [m.content for m in first.messages[1:]] == ["earlier question", "take a payment of $5"]
    assert {s.name for s in first.tools or []} == set(BACK_OFFICE_TOOLS)


def test_a_model_accepting_a_claim_without_a_yes_is_refused_and_the_merchant_asked(
    toolkit: Toolkit, payments: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(payments, http, paypal_client)
    conversation = _conversation()
    accept = _calls(("accept_dispute_claim", {"dispute_id": dispute_id, "note": "Sorry"}))
    model = ScriptedModel([accept, lambda sent: Message("assistant", _result(sent, "c0")["kind"])])

    reply, _ = say(conversation, f"settle {dispute_id} in the buyer's favour", toolkit, model=model)

    assert reply.text.startswith("ApprovalDenied\n\nShall I accept the claim on dispute")
    assert "25.00 USD" in reply.text
    assert sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")["status"] == (
        "COMPLETED"
    )
    done, _ = say(conversation, "yes please", toolkit, model=model)  # answered without the model
    assert done.text.startswith(f"Accepted the claim on dispute {dispute_id}")
    assert sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")["status"] == (
        "REFUNDED"
    )
    assert model.remaining == 0


def test_a_model_that_loops_or_fails_gets_a_clear_answer(toolkit: Toolkit) -> None:
    looping = ScriptedModel([_calls(("list_invoices", {}))] * 8)
    stopped, _ = say(_conversation(), "list invoices", toolkit, model=looping)
    assert "within the steps allowed" in stopped.text and "list_invoices" in stopped.text

    def broken(messages: list[Message], tools: list[ToolSpec] | None) -> Message:
        raise ModelError("down", http_status=503)

    failed, _ = say(_conversation(), "list invoices", toolkit, model=FunctionModel(broken))
    assert "did not answer" in failed.text


# ---------------------------------------------------------------------------- subscriptions


def approve_on_the_page(http: TestClient, link: str) -> None:
    """Open the subscription's approve link as the subscriber and agree, on the sandbox page."""
    path = httpx.URL(link).raw_path.decode()
    page = http.get(path)
    assert page.status_code == 200 and "Agree &amp; Subscribe" in page.text, page.text
    done = http.post(path, data={})
    assert done.status_code == 200 and "is ACTIVE" in done.text, done.text


def record_calls(toolkit: Toolkit, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools the specialist calls from now on, in order."""
    called: list[str] = []
    real = toolkit.call

    async def call(name: str, arguments: dict[str, Any] | None) -> ToolResult:
        called.append(name)
        return await real(name, arguments)

    monkeypatch.setattr(toolkit, "call", call)
    return called


def test_a_customer_subscribed_by_plan_id_gets_an_approve_link_and_is_active_once_approved(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    conversation = _conversation()
    plan_id = say(conversation, "create a monthly plan 'Coffee club' at $15", toolkit)[0].data[
        "plan_id"
    ]

    subscribed, _ = say(conversation, f"subscribe jamie@example.com to plan {plan_id}", toolkit)

    sub_id, link = subscribed.data["subscription_id"], subscribed.data["approve_url"]
    assert subscribed.text == (
        f"Subscription {sub_id} for jamie@example.com to plan {plan_id} is APPROVAL_PENDING. "
        f"It starts when jamie@example.com approves it on this page: {link}"
    )
    sub = sandbox_get(paypal_client, f"/v1/billing/subscriptions/{sub_id}")
    assert (sub["status"], sub["plan_id"]) == ("APPROVAL_PENDING", plan_id)
    assert sub["subscriber"]["email_address"] == "jamie@example.com"
    pending, _ = say(conversation, f"show subscription {sub_id.lower()}", toolkit)
    assert pending.text.startswith(f"Subscription {sub_id}: APPROVAL_PENDING, plan {plan_id}")
    assert pending.text.endswith(f"waiting for the subscriber to approve it: {link}")

    approve_on_the_page(http, link)

    shown, _ = say(conversation, f"show subscription {sub_id}", toolkit)
    assert shown.text.startswith(
        f"Subscription {sub_id}: ACTIVE, plan {plan_id}, subscriber jamie@example.com"
    )
    assert "last payment 15.00" in shown.text and "approve" not in shown.text


def test_a_customer_signed_up_by_plan_name_is_subscribed_under_their_name(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    conversation = _conversation()
    say(conversation, "create a monthly plan 'Tea club' at $9", toolkit)
    plan_id = say(conversation, "create a monthly plan 'Coffee club' at $15", toolkit)[0].data[
        "plan_id"
    ]

    subscribed, _ = say(
        conversation, "sign up Jamie Doe <jamie@example.com> for the coffee club plan", toolkit
    )

    assert subscribed.data["plan_id"] == plan_id
    assert f"to plan 'Coffee club' ({plan_id}) is APPROVAL_PENDING" in subscribed.text
    sub_id = subscribed.data["subscription_id"]
    subscriber = sandbox_get(paypal_client, f"/v1/billing/subscriptions/{sub_id}")["subscriber"]
    assert subscriber["email_address"] == "jamie@example.com"
    assert subscriber["name"] == {"given_name": "Jamie", "surname": "Doe"}
    approve_on_the_page(http, subscribed.data["approve_url"])
    shown, _ = say(conversation, f"show subscription {sub_id}", toolkit)
    assert shown.text.startswith(f"Subscription {sub_id}: ACTIVE, plan {plan_id}")


def test_an_unknown_or_ambiguous_plan_or_a_bad_address_is_asked_about_and_nothing_created(
    toolkit: Toolkit, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = _conversation()
    monthly = say(conversation, "create a monthly plan 'Coffee club' at $15", toolkit)[0]
    called = record_calls(toolkit, monkeypatch)

    unknown, _ = say(conversation, "sign up jamie@example.com for the Tea club plan", toolkit)

    assert unknown.text == (
        "There is no plan called 'Tea club'. Your plans are: "
        f"'Coffee club' ({monthly.data['plan_id']})? Which one should I use? Give its name or id."
    )
    assert called == ["list_subscription_plans"] and not unknown.data
    for text, question in (
        ("subscribe jamie@example.com to the plan", "Which plan should jamie@example.com join?"),
        ("subscribe jamie to the Coffee club plan", "Which e-mail address should I subscribe"),
        ("subscribe jamie@example to plan P-ABCD1234", "jamie@example is not an e-mail address"),
        ("subscribe a@example.com and b@example.com to the Coffee club plan", "one address"),
    ):
        asked, turn = say(conversation, text, toolkit)
        assert question in asked.text and "tools" not in turn.timings, (text, asked.text)
    assert called == ["list_subscription_plans"]

    yearly = say(conversation, "create a yearly plan 'Coffee club' at $150", toolkit)[0]
    called.clear()
    ambiguous, _ = say(conversation, "subscribe jamie@example.com to 'Coffee club'", toolkit)
    assert ambiguous.text.startswith("2 plans are called 'Coffee club':")
    assert monthly.data["plan_id"] in ambiguous.text and yearly.data["plan_id"] in ambiguous.text
    assert called == ["list_subscription_plans"]
