"""After paying: where the order is (status, tracking), and returning it for a refund."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import (
    Conversation,
    PendingConfirmation,
    Reply,
    StoredMessage,
    TurnContext,
)
from cartagent.assistant.consent import Grant, granting
from cartagent.assistant.specialists import CheckoutSpecialist, OrdersSpecialist, ReturnsSpecialist
from cartagent.assistant.specialists.returns import REFUND
from cartagent.money import Money
from cartagent.retrieval.search import Searcher
from cartagent.tools import Toolkit

from .conftest import approve_on_paypal, days_after, say

pytestmark = pytest.mark.anyio


async def _paid(shown: Conversation, toolkit: Toolkit, http: TestClient, *ranks: str) -> str:
    checkout = CheckoutSpecialist(clock=lambda: datetime(2026, 11, 21, 12, tzinfo=UTC))
    for rank in ranks:
        await say(checkout, shown, f"add the {rank} one to my cart", toolkit)
    _, ordered = await say(checkout, shown, "checkout", toolkit)
    order_id = str(ordered.data["order"]["id"])
    approve_on_paypal(http, order_id)
    _, paid = await say(checkout, shown, "yes", toolkit)
    assert paid.text.startswith("Paid."), paid.text
    return order_id


async def test_where_is_my_order_before_and_after_the_merchant_ships_it(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    orders = OrdersSpecialist()
    _, none = await say(orders, shown, "where is my order?", shop_toolkit)
    assert "I don't see any order" in none.text
    order_id = await _paid(shown, shop_toolkit, http, "first")
    _, waiting = await say(orders, shown, "where is my order?", shop_toolkit)
    assert f"Order {order_id} (56.38 USD): paid on 2026-11-21" in waiting.text
    assert "not shipped yet" in waiting.text
    capture_id = shown.orders[0].capture_id
    shipped = await shop_toolkit.call(
        "create_shipment_tracking",
        {
            "transaction_id": capture_id,
            "tracking_number": "1Z999AA10123456784",
            "carrier": "UPS",
            "shipment_date": "2026-11-21",
        },
    )
    assert not shipped.is_error, shipped.content
    _, tracked = await say(orders, shown, f"track order {order_id}", shop_toolkit)
    assert "Shipping: shipped with UPS, tracking number 1Z999AA10123456784." in tracked.text
    assert tracked.data["orders"][0]["trackers"][0]["carrier"] == "UPS"


async def test_a_refund_made_by_the_store_shows_and_bounds_a_return(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first")
    capture_id = shown.orders[0].capture_id
    assert capture_id is not None
    # The merchant refunds 10.00 from the back office, outside this conversation.
    with granting(Grant("create_refund", "capture_id", capture_id, Money.of("10", "USD"))):
        made = await shop_toolkit.call(
            "create_refund", {"capture_id": capture_id, "amount": "10", "currency": "USD"}
        )
    assert not made.is_error, made.content

    _, status = await say(OrdersSpecialist(), shown, "where is my order?", shop_toolkit)
    assert f"Order {order_id} (56.38 USD): paid on 2026-11-21; refunded 10.00 USD." in status.text
    paid_at = shown.orders[0].paid_at
    _, asked = await say(
        ReturnsSpecialist(clock=days_after(paid_at, 3)), shown, "return the t-shirt", shop_toolkit
    )
    # The order's items and tax are 50.39 USD (shipping is never refunded); 10.00 of it is
    # gone, so 40.39 USD is left to give back.
    assert "I would refund 40.39 USD" in asked.text


async def test_an_exchange_is_a_return_and_the_version_asked_for_in_stock_as_a_card(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient, shop_searcher: Searcher
) -> None:
    await _paid(shown, shop_toolkit, http, "first")  # the red T-shirt, size L
    returns = ReturnsSpecialist(clock=days_after(shown.orders[0].paid_at, 2))

    async def ask(text: str) -> Reply:
        reply = await returns.handle(
            TurnContext(text, shown, searcher=shop_searcher, toolkit=shop_toolkit)
        )
        shown.messages.append(StoredMessage("assistant", reply.text, payload=reply.payload()))
        return reply

    swapped = await ask("it's too small, can I exchange it for an XL?")

    lines = swapped.text.splitlines()
    assert lines[0] == "A paid order cannot be changed: an exchange is a return and a new order."
    assert "I would refund 50.39 USD" in lines[1]
    assert lines[2].startswith("T-Shirt in size XL is in stock (below): add it to your cart")
    assert [c.variant_id for c in swapped.cards] == ["tee-black-xl"]
    assert shown.results == list(swapped.cards)
    assert shown.pending is not None and shown.pending.kind == REFUND
    none = await ask("can I exchange the t-shirt for a size 10?")
    assert "T-Shirt does not come in size 10." in none.text and not none.cards


async def test_an_unpaid_order_is_cancelled_and_a_paid_one_is_not(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist(clock=lambda: datetime(2026, 11, 21, 12, tzinfo=UTC))
    orders = OrdersSpecialist()
    await say(checkout, shown, "add the second one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "checkout", shop_toolkit)
    first = str(ordered.data["order"]["id"])

    _, cancelled = await say(orders, shown, "please cancel my order", shop_toolkit)
    _, status = await say(orders, shown, "where is my order?", shop_toolkit)
    _, again = await say(orders, shown, "cancel it", shop_toolkit)

    assert cancelled.text.startswith(f"Cancelled order {first}: nothing was charged")
    assert shown.pending is None
    assert f"Order {first} (18.95 USD): cancelled." in status.text
    assert again.text == f"Order {first} is already cancelled."
    # Checking out again makes a new order rather than resuming the cancelled one.
    _, reordered = await say(checkout, shown, "checkout", shop_toolkit)
    second = str(reordered.data["order"]["id"])
    assert second != first
    approve_on_paypal(http, second)
    await say(checkout, shown, "yes", shop_toolkit)
    _, paid = await say(orders, shown, f"cancel order {second}", shop_toolkit)
    assert paid.text.startswith(f"Order {second} is already paid, so it cannot be cancelled")


async def test_an_order_id_not_placed_here_is_never_looked_up(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    await _paid(shown, shop_toolkit, http, "first")
    turn, reply = await say(OrdersSpecialist(), shown, "status of 5O190127TN364715T", shop_toolkit)
    assert "not one of them" in reply.text
    assert "tools" not in turn.timings  # nothing was asked of PayPal


async def test_a_return_is_refunded_after_a_yes_within_the_window(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first", "second")
    paid_at = shown.orders[0].paid_at
    returns = ReturnsSpecialist(clock=days_after(paid_at, 29))
    _, asked = await say(returns, shown, "I want to return the mug", shop_toolkit)
    # The mug's price and tax (12.00 + 0.96); shipping was free and is never refunded.
    assert "I would refund 12.96 USD" in asked.text
    assert shown.pending == PendingConfirmation(
        REFUND,
        {
            "order_id": order_id,
            "variant_id": "mug-white",
            "amount": "12.96",
            "currency": "USD",
            "what": "1 x Coffee Mug",
        },
        returns.domain,
    )
    _, refunded = await say(returns, shown, "yes", shop_toolkit)
    assert "of 12.96 USD for 1 x Coffee Mug is completed" in refunded.text, refunded.text
    assert shown.pending is None and shown.orders[0].refunded == Decimal("12.96")
    order = await shop_toolkit.call("get_order", {"order_id": order_id})
    assert order.content["capture_status"] == "PARTIALLY_REFUNDED"

    _, rest = await say(returns, shown, "return the t-shirt", shop_toolkit)
    assert "I would refund 50.39 USD" in rest.text  # 46.66 + 3.73


async def test_no_refund_on_no_or_outside_the_window(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first")
    paid_at = shown.orders[0].paid_at
    returns = ReturnsSpecialist(clock=days_after(paid_at, 3))
    await say(returns, shown, "can I return it?", shop_toolkit)
    _, kept = await say(returns, shown, "no", shop_toolkit)
    assert kept.text == "OK, no refund. Nothing was changed." and shown.pending is None
    late = ReturnsSpecialist(clock=days_after(paid_at, 31))
    _, refused = await say(late, shown, "I want a refund", shop_toolkit)
    assert "outside our return window" in refused.text and shown.pending is None
    order = await shop_toolkit.call("get_order", {"order_id": order_id})
    assert order.content["capture_status"] == "COMPLETED"


async def test_money_moves_only_under_a_matching_grant(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    await _paid(shown, shop_toolkit, http, "first")
    capture_id = shown.orders[0].capture_id
    assert capture_id is not None
    refund = {"capture_id": capture_id, "amount": "10.00", "currency": "USD"}
    asked = await shop_toolkit.call("create_refund", refund)  # a model asking on its own
    assert asked.is_error and asked.content["kind"] == "ApprovalDenied"
    with granting(Grant("create_refund", "capture_id", capture_id, Money.of("5.00", "USD"))):
        bigger = await shop_toolkit.call("create_refund", refund)
    assert bigger.is_error and bigger.content["kind"] == "ApprovalDenied"
    with granting(Grant("create_refund", "capture_id", "OTHERCAPTURE00000", Money.of("10", "USD"))):
        elsewhere = await shop_toolkit.call("create_refund", refund)
    assert elsewhere.is_error and elsewhere.content["kind"] == "ApprovalDenied"
    with granting(Grant("create_refund", "capture_id", capture_id, Money.of("10.00", "USD"))):
        granted = await shop_toolkit.call("create_refund", refund)
    assert not granted.is_error, granted.content


async def _refunded(toolkit: Toolkit, order_id: str) -> Decimal:
    order = await toolkit.call("get_order", {"order_id": order_id})
    return Decimal(str(order.content.get("refunded") or 0))


async def test_a_returned_line_is_refunded_once_and_never_from_another_line(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first", "second")  # 62.33 + 5.99
    returns = ReturnsSpecialist(clock=days_after(shown.orders[0].paid_at, 2))
    await say(returns, shown, "I want to return the t-shirt", shop_toolkit)
    _, first = await say(returns, shown, "yes", shop_toolkit)
    assert "of 50.39 USD for 1 x T-Shirt is completed" in first.text, first.text
    for _ in range(3):  # the probe asked four times and was refunded the mug's money too
        _, again = await say(returns, shown, "I want to return the t-shirt", shop_toolkit)
        assert "has already been refunded" in again.text, again.text
        assert shown.pending is None
        await say(returns, shown, "yes", shop_toolkit)
    assert await _refunded(shop_toolkit, order_id) == Decimal("50.39")
    # The whole order now means the mug alone; after it, nothing is left (not the shipping).
    _, rest = await say(returns, shown, "I want to return my order", shop_toolkit)
    assert "I would refund 12.96 USD" in rest.text, rest.text
    await say(returns, shown, "yes", shop_toolkit)
    _, none = await say(returns, shown, "I want to return my order", shop_toolkit)
    assert "nothing left to refund" in none.text, none.text
    assert await _refunded(shop_toolkit, order_id) == Decimal("63.35")


async def test_a_one_line_order_returned_twice_never_refunds_the_shipping(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first")  # 50.39 + 5.99 shipping
    returns = ReturnsSpecialist(clock=days_after(shown.orders[0].paid_at, 2))
    for _ in range(2):
        await say(returns, shown, "return it", shop_toolkit)
        await say(returns, shown, "yes", shop_toolkit)
    assert await _refunded(shop_toolkit, order_id) == Decimal("50.39")


async def test_a_refund_whose_turn_was_lost_is_read_back_from_paypal_not_repeated(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first", "second")
    returns = ReturnsSpecialist(clock=days_after(shown.orders[0].paid_at, 2))
    await say(returns, shown, "I want to return the mug", shop_toolkit)
    before_yes = copy.deepcopy(shown)
    await say(returns, shown, "yes", shop_toolkit)
    # The server died before the refund's turn was stored: the conversation is as before the
    # yes, and the shopper says it again (or asks again).
    _, replayed = await say(returns, before_yes, "yes", shop_toolkit)
    assert "Coffee Mug from order" in replayed.text and "already been refunded" in replayed.text
    _, asked = await say(returns, before_yes, "return the mug", shop_toolkit)
    assert "already been refunded" in asked.text, asked.text
    assert await _refunded(shop_toolkit, order_id) == Decimal("12.96")
    assert before_yes.orders[0].returned == frozenset({"mug-white"})


class _Overreaching:
    """A toolkit whose refund first tries a cent more than the shopper agreed to (what a
    confused model or a bug might send) before the real call."""

    def __init__(self, toolkit: Toolkit) -> None:
        self.toolkit = toolkit
        self.over: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.toolkit, name)

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        if name == "create_refund":
            more = {**arguments, "amount": str(Decimal(arguments["amount"]) + Decimal("0.01"))}
            more.pop("invoice_id", None)
            self.over.append((await self.toolkit.call(name, more)).content)
        return await self.toolkit.call(name, arguments)


async def test_the_refund_yes_grants_that_amount_and_not_a_cent_more(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _paid(shown, shop_toolkit, http, "first", "second")
    toolkit = _Overreaching(shop_toolkit)
    returns = ReturnsSpecialist(clock=days_after(shown.orders[0].paid_at, 2))
    await say(returns, shown, "I want to return the mug", cast(Toolkit, toolkit))
    _, done = await say(returns, shown, "yes", cast(Toolkit, toolkit))
    assert "of 12.96 USD for 1 x Coffee Mug is completed" in done.text, done.text
    assert [o.get("error") for o in toolkit.over] == ["approval"], toolkit.over
    assert await _refunded(shop_toolkit, order_id) == Decimal("12.96")
