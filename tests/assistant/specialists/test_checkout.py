"""Cart and checkout against the sandbox: order, approval on PayPal's page, yes, capture."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import Conversation, PendingConfirmation, Reply, TurnContext
from cartagent.assistant.cart import describe_cart, find_quantity_change
from cartagent.assistant.consent import Grant, granting
from cartagent.assistant.conversation import CartLine, PlacedOrder
from cartagent.assistant.domains import Domain
from cartagent.assistant.specialists import (
    CheckoutSpecialist,
    DiscoverySpecialist,
    OrdersSpecialist,
)
from cartagent.assistant.specialists.checkout import PAY_ORDER
from cartagent.commerce.terms import DEMO_STORE
from cartagent.money import Money
from cartagent.tools import Toolkit, ToolResult

from .conftest import GONE, ScriptedPayPal, approve_on_paypal, failed, ok, say

pytestmark = pytest.mark.anyio

_NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _line(product_id: str, title: str) -> CartLine:
    return CartLine(product_id, f"{product_id}-1", title, Decimal("10.00"), "USD", 1)


async def _checked_out(shown: Conversation, toolkit: Toolkit) -> str:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", toolkit)
    _, reply = await say(checkout, shown, "checkout please", toolkit)
    return str(reply.data["order"]["id"])


async def test_the_cart_shows_lines_tax_shipping_and_total(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    _, added = await say(checkout, shown, "add 2 of the second one to my cart", None)
    assert "Added 2 x Coffee Mug (white) - 12.00 USD" in added.text
    _, cart = await say(checkout, shown, "what's in my cart?", None)
    # 24.00 of items: 8% tax per unit (0.96 x 2), shipping 5.99 below the 50.00 threshold.
    assert "1. 2 x Coffee Mug (white) - 12.00 USD" in cart.text
    assert "Items 24.00 USD; Tax 1.92 USD; Shipping 5.99 USD; Total 31.91 USD." in cart.text
    _, total = await say(checkout, shown, "what is my total?", None)
    assert total.text == cart.text


async def test_free_shipping_from_fifty_and_a_sold_out_card_is_not_added(
    shown: Conversation,
) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", None)
    await say(checkout, shown, "add the second to the cart", None)
    _, cart = await say(checkout, shown, "show my cart", None)
    assert "Items 58.66 USD; Tax 4.69 USD; Shipping free; Total 63.35 USD." in cart.text
    _, refused = await say(checkout, shown, "add the third one to my cart", None)
    assert "out of stock" in refused.text and len(shown.cart) == 2


async def test_lines_are_removed_by_number_by_name_and_all_at_once(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", None)
    await say(checkout, shown, "add the second one to my cart", None)
    _, removed = await say(checkout, shown, "remove the mug", None)
    assert "Removed Coffee Mug" in removed.text
    assert [line.variant_id for line in shown.cart] == ["tee-red-l"]
    await say(checkout, shown, "add the second one to my cart", None)
    await say(checkout, shown, "remove #1", None)
    assert [line.variant_id for line in shown.cart] == ["mug-white"]
    _, emptied = await say(checkout, shown, "empty my cart", None)
    assert emptied.text == "Your cart is now empty." and shown.cart == []


async def test_a_count_removed_takes_that_many_items_off_the_line_named(
    shown: Conversation,
) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add 3 of the first one", None)
    await say(checkout, shown, "add the second one to my cart", None)
    _, one = await say(checkout, shown, "remove one t-shirt", None)
    assert one.text.startswith("Now 2 x T-Shirt.")
    _, two = await say(checkout, shown, "take 2 t-shirts out", None)  # not line 2, the mug
    assert two.text.startswith("Removed T-Shirt.")
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [("mug-white", 1)]
    _, none = await say(checkout, shown, "remove 0 mugs", None)
    assert none.text.startswith("Nothing removed.") and len(shown.cart) == 1
    _, which = await say(checkout, shown, "remove 2 hoodies", None)
    assert which.text.startswith("Which line should I take 2 off? Say, for example, 'remove 2 ")
    example = which.text.split("'")[1]  # the example given works as said
    _, removed = await say(checkout, shown, example, None)
    assert removed.text.startswith("Removed Coffee Mug.") and shown.cart == []


async def test_it_is_the_product_being_talked_about_or_a_question(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    _, which = await say(checkout, shown, "add it to my cart", None)
    assert which.text == "Which one? Say its number, from 1 to 3." and shown.cart == []
    assert len(which.cards) == 3
    await say(DiscoverySpecialist(), shown, "show me the second one", None)
    _, added = await say(checkout, shown, "I'll take it", None)
    assert "Added 1 x Coffee Mug (white)" in added.text
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [("mug-white", 1)]


async def test_the_cheapest_and_the_dearest_are_picked_by_price(shown: Conversation) -> None:
    discovery = DiscoverySpecialist()
    _, cheapest = await say(discovery, shown, "the cheapest one", None)
    assert cheapest.text == "#2: Coffee Mug (white) - 12.00 USD."
    # The dearest shown is the sold-out T-shirt: the dearest that can be bought is added.
    _, added = await say(CheckoutSpecialist(), shown, "add the most expensive to my cart", None)
    assert added.text.startswith("Added 1 x T-Shirt (red) - 46.66 USD")
    _, taken = await say(CheckoutSpecialist(), shown, "I'll take the cheapest", None)
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [
        ("tee-red-l", 1),
        ("mug-white", 1),
    ]
    assert taken.text.startswith("Added 1 x Coffee Mug")
    # When nothing shown can be bought, the pick is still made (and said to be sold out).
    shown.results = [GONE]
    _, gone = await say(CheckoutSpecialist(), shown, "add the cheapest one", None)
    assert "is out of stock" in gone.text


async def test_quantities_change_for_the_line_meant(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", None)
    _, three = await say(checkout, shown, "make it 3", None)
    assert three.text.startswith("Now 3 x T-Shirt. Your cart (3 items):")
    await say(checkout, shown, "actually, make it two", None)
    await say(checkout, shown, "add the second one to my cart", None)
    # "It" is now the mug: the last product shown on its own.
    await say(checkout, shown, "make it 4", None)
    await say(checkout, shown, "change the t-shirt to 5", None)
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [
        ("tee-red-l", 5),
        ("mug-white", 4),
    ]
    await say(checkout, shown, "change line 2 to 1", None)
    _, gone = await say(checkout, shown, "set the quantity of the shirt to 0", None)
    assert gone.text.startswith("Removed T-Shirt.")
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [("mug-white", 1)]


async def test_more_of_the_line_meant_is_added(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", None)
    _, three = await say(checkout, shown, "add 2 more", None)
    _, four = await say(checkout, shown, "another one please", None)
    assert three.text.startswith("Now 3 x T-Shirt.") and four.text.startswith("Now 4 x T-Shirt.")
    await say(checkout, shown, "add the second one to my cart", None)
    shown.messages.clear()  # nothing has been talked about
    _, which = await say(checkout, shown, "one more", None)
    assert which.text.startswith("Which line should I add 1 more of?")
    assert [(line.variant_id, line.quantity) for line in shown.cart] == [
        ("tee-red-l", 4),
        ("mug-white", 1),
    ]


async def test_more_of_a_line_named_is_added_to_it() -> None:
    conversation = Conversation("s", None, _NOW)
    conversation.cart.extend([_line("tee", "T-Shirt"), _line("mug", "Coffee Mug")])
    more = find_quantity_change("add 2 more coffee mugs", conversation)
    assert more is not None and (more.line, more.quantity, more.added) == (1, 3, 2)
    # A product not in the cart is a new one to find, not more of a line.
    assert find_quantity_change("add another hoodie", conversation) is None


async def test_a_quantity_for_no_line_in_particular_asks_which(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", None)
    await say(checkout, shown, "add the second one to my cart", None)
    shown.messages.clear()  # nothing has been talked about
    _, which = await say(checkout, shown, "make it 2", None)
    assert which.text.startswith("Which line should be 2? Say, for example, 'change line 1 to 2'")
    assert [line.quantity for line in shown.cart] == [1, 1]
    assert find_quantity_change("change it to size 10", shown) is None
    assert find_quantity_change("make it red", shown) is None
    assert find_quantity_change("change the shirt to size 13", shown) is None
    assert find_quantity_change("change the shirt to 13", shown) is not None
    _, removed = await say(checkout, shown, "remove it", None)
    assert removed.text.startswith("Which line should I remove?")
    await say(DiscoverySpecialist(), shown, "the first one", None)
    _, removed = await say(checkout, shown, "remove it", None)
    assert removed.text.startswith("Removed T-Shirt.")


async def test_an_empty_cart_or_no_payment_backend_creates_nothing(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    _, empty = await say(checkout, shown, "checkout", None)
    assert "Your cart is empty" in empty.text
    await say(checkout, shown, "add the first one to my cart", None)
    _, unset = await say(checkout, shown, "checkout", None)
    assert "Payments are not set up" in unset.text
    assert shown.orders == [] and shown.pending is None


async def test_checkout_pays_only_after_approval_on_paypal_and_a_yes(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist()
    await say(checkout, shown, "add the first one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "I want to check out", shop_toolkit)
    order = ordered.data["order"]
    # 46.66 + 3.73 tax + 5.99 shipping, priced by PayPal exactly as quoted.
    assert (order["total"], order["tax"], order["shipping"]) == ("56.38", "3.73", "5.99")
    assert order["approve_url"].endswith(f"/checkoutnow?token={order['id']}")
    assert shown.pending is not None and shown.pending.kind == PAY_ORDER

    # "yes" before the shopper approved on PayPal: nothing is captured.
    _, early = await say(checkout, shown, "yes", shop_toolkit)
    assert "not approved yet" in early.text
    status = await shop_toolkit.call("get_order", {"order_id": order["id"]})
    assert status.content["status"] == "CREATED"

    approve_on_paypal(http, order["id"])
    _, asked = await say(checkout, shown, "done", shop_toolkit)
    assert "approved" in asked.text and "Say 'yes' to pay 56.38 USD" in asked.text
    status = await shop_toolkit.call("get_order", {"order_id": order["id"]})
    assert status.content["status"] == "APPROVED"  # "done" alone takes no money

    turn, paid = await say(checkout, shown, "yes please", shop_toolkit)
    assert paid.text.startswith(f"Paid. Receipt for order {order['id']}")
    assert "Total 56.38 USD" in paid.text
    assert shown.cart == [] and shown.pending is None
    placed = shown.order(order["id"])
    assert placed is not None and placed.status == "COMPLETED" and placed.capture_id
    assert placed.paid_at is not None and placed.total == Decimal("56.38")
    after = await shop_toolkit.call("get_order", {"order_id": order["id"]})
    assert (after.content["status"], after.content["capture_status"]) == (
        "COMPLETED",
        "COMPLETED",
    )
    assert turn.timings["tools"] > 0


async def test_no_takes_no_payment_and_keeps_the_cart(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _checked_out(shown, shop_toolkit)
    approve_on_paypal(http, order_id)
    _, stopped = await say(CheckoutSpecialist(), shown, "no", shop_toolkit)
    assert "did not take any payment" in stopped.text
    assert shown.pending is None and len(shown.cart) == 1
    status = await shop_toolkit.call("get_order", {"order_id": order_id})
    assert status.content["status"] == "APPROVED"


async def test_checking_out_the_same_cart_again_resumes_the_waiting_order(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist()
    order_id = await _checked_out(shown, shop_toolkit)
    await say(checkout, shown, "no", shop_toolkit)
    _, again = await say(checkout, shown, "checkout", shop_toolkit)
    assert again.data["order"]["id"] == order_id and "Approve the payment on PayPal" in again.text
    approve_on_paypal(http, order_id)  # approved on PayPal after all
    await say(checkout, shown, "no", shop_toolkit)
    _, approved = await say(checkout, shown, "checkout", shop_toolkit)
    assert approved.data["order"]["id"] == order_id
    assert "PayPal shows it approved. Say 'yes' to pay 56.38 USD now" in approved.text
    _, paid = await say(checkout, shown, "yes", shop_toolkit)
    assert paid.text.startswith(f"Paid. Receipt for order {order_id}") and shown.cart == []
    assert [o.order_id for o in shown.orders] == [order_id]
    # A changed cart is a new order.
    await say(checkout, shown, "add the second one to my cart", shop_toolkit)
    _, other = await say(checkout, shown, "checkout", shop_toolkit)
    assert other.data["order"]["id"] != order_id and len(shown.orders) == 2


async def test_a_capture_done_before_a_lost_turn_is_read_back_not_repeated(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    order_id = await _checked_out(shown, shop_toolkit)
    approve_on_paypal(http, order_id)
    # The capture went through but the turn that made it was never stored (a crash): the
    # conversation still waits for the yes, and PayPal already says COMPLETED.
    with granting(Grant("capture_order", "order_id", order_id, Money.of("56.38", "USD"))):
        first = await shop_toolkit.call("capture_order", {"order_id": order_id})
    assert not first.is_error, first.content
    _, paid = await say(CheckoutSpecialist(), shown, "yes", shop_toolkit)
    assert paid.text.startswith("Paid.")
    placed = shown.order(order_id)
    assert placed is not None and placed.capture_id == first.content["capture_id"]


async def test_paypal_sends_the_shopper_back_to_the_return_url(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist(return_url="http://127.0.0.1:8000/shop?session={session}")
    await say(checkout, shown, "add the first one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "checkout", shop_toolkit)
    order_id = ordered.data["order"]["id"]
    response = http.post(f"/checkoutnow?token={order_id}", data={}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].startswith(
        f"http://127.0.0.1:8000/shop?session=s&token={order_id}&PayerID="
    )


async def test_checking_out_again_after_a_lost_capture_gives_the_receipt(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist()
    order_id = await _checked_out(shown, shop_toolkit)
    await say(checkout, shown, "no", shop_toolkit)
    approve_on_paypal(http, order_id)
    with granting(Grant("capture_order", "order_id", order_id, Money.of("56.38", "USD"))):
        assert not (await shop_toolkit.call("capture_order", {"order_id": order_id})).is_error
    _, again = await say(checkout, shown, "checkout", shop_toolkit)
    assert again.text.startswith(f"Order {order_id} was already paid on PayPal")
    assert f"Paid. Receipt for order {order_id}" in again.text
    assert shown.cart == [] and len(shown.orders) == 1


_RETURN = "http://127.0.0.1:8000/shop?session={session}"


async def _captures(toolkit: Toolkit, conversation: Conversation) -> int:
    """How many of the conversation's orders PayPal shows captured."""
    found = 0
    for order in conversation.orders:
        seen = await toolkit.call("get_order", {"order_id": order.order_id})
        found += seen.content.get("status") == "COMPLETED"
    return found


async def test_a_capture_lost_to_a_crash_is_not_charged_again_when_paypal_awaits_the_payer(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    # With a return URL PayPal creates the order as PAYER_ACTION_REQUIRED, not CREATED.
    checkout = CheckoutSpecialist(return_url=_RETURN)
    await say(checkout, shown, "add the first one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "checkout", shop_toolkit)
    order_id = ordered.data["order"]["id"]
    assert shown.orders[0].status == "PAYER_ACTION_REQUIRED"
    http.post(f"/checkoutnow?token={order_id}", data={}, follow_redirects=False)
    stored = copy.deepcopy(shown)  # what the database holds when the server dies
    _, paid = await say(checkout, shown, "yes", shop_toolkit)
    assert paid.text.startswith("Paid.")

    after_crash = copy.deepcopy(stored)
    _, reply = await say(checkout, after_crash, "checkout", shop_toolkit)
    assert reply.text.startswith(f"Order {order_id} was already paid"), reply.text
    assert after_crash.cart == [] and len(after_crash.orders) == 1
    assert after_crash.pending is None
    # Asked where the order is first, the conversation learns it was paid there.
    asked_first = copy.deepcopy(stored)
    _, status = await say(OrdersSpecialist(), asked_first, "where is my order", shop_toolkit)
    assert f"Order {order_id} (56.38 USD): paid on" in status.text, status.text
    assert asked_first.cart == [] and asked_first.pending is None
    _, empty = await say(checkout, asked_first, "checkout", shop_toolkit)
    assert empty.text.startswith("Your cart is empty")
    assert await _captures(shop_toolkit, shown) == 1


async def test_a_capture_lost_to_a_crash_then_a_changed_cart_pays_only_the_difference(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist(return_url=_RETURN)
    await say(checkout, shown, "add the first one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "checkout", shop_toolkit)
    first = ordered.data["order"]["id"]
    approved = http.post(f"/checkoutnow?token={first}", data={}, follow_redirects=False)
    assert approved.status_code == 303
    stored = copy.deepcopy(shown)
    await say(checkout, shown, "yes", shop_toolkit)
    await say(checkout, stored, "make it 3", shop_toolkit)  # after the crash
    _, settled = await say(checkout, stored, "checkout", shop_toolkit)
    assert settled.text.startswith(f"Order {first} was already paid"), settled.text
    assert [line.quantity for line in stored.cart] == [2]
    _, rest = await say(checkout, stored, "checkout", shop_toolkit)
    assert rest.data["order"]["id"] != first and "2 x T-Shirt" in rest.text, rest.text


async def test_checking_out_again_after_approving_resumes_the_approved_order(
    shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist(return_url=_RETURN)
    await say(checkout, shown, "add the first one to my cart", shop_toolkit)
    _, ordered = await say(checkout, shown, "checkout", shop_toolkit)
    order_id = ordered.data["order"]["id"]
    http.post(f"/checkoutnow?token={order_id}", data={}, follow_redirects=False)
    _, again = await say(checkout, shown, "checkout", shop_toolkit)
    assert again.data["order"]["id"] == order_id and "PayPal shows it approved" in again.text
    assert len(shown.orders) == 1


@pytest.mark.parametrize("change", ["make it 3", "add the second one to my cart", "remove it"])
async def test_a_yes_given_before_the_cart_changed_pays_nothing(
    change: str, shown: Conversation, shop_toolkit: Toolkit, http: TestClient
) -> None:
    checkout = CheckoutSpecialist()
    order_id = await _checked_out(shown, shop_toolkit)
    approve_on_paypal(http, order_id)
    await say(checkout, shown, change, shop_toolkit)
    cart = list(shown.cart)
    _, stale = await say(checkout, shown, "yes", shop_toolkit)
    assert "Your cart changed after order" in stale.text, stale.text
    assert shown.cart == cart and shown.pending is None
    status = await shop_toolkit.call("get_order", {"order_id": order_id})
    assert status.content["status"] == "APPROVED"


# --- every step of the pay flow against a PayPal that answers from a script -----------------


def _created(order_id: str = "O-1", **extra: Any) -> ToolResult:
    fields = {"id": order_id, "status": "CREATED", "amount": "56.38", "currency": "USD"}
    return ok(**{**fields, "approve_url": f"https://paypal.test/approve/{order_id}", **extra})


async def _turn(
    checkout: CheckoutSpecialist, conversation: Conversation, text: str, paypal: ScriptedPayPal
) -> Reply:
    return (await say(checkout, conversation, text, cast(Toolkit, paypal)))[1]


def _placed(
    order_id: str, cart: list[CartLine], status: str = "CREATED", **extra: Any
) -> PlacedOrder:
    return PlacedOrder(
        order_id,
        status,
        Decimal("56.38"),
        "USD",
        tuple(cart),
        _NOW,
        **extra,  # type: ignore[arg-type]
    )


async def _with_tee(shown: Conversation) -> CheckoutSpecialist:
    checkout = CheckoutSpecialist(clock=lambda: _NOW)
    await say(checkout, shown, "add the first one to my cart", None)
    return checkout


async def test_no_payment_backend_is_said_in_so_many_words(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    _, unset = await say(checkout, shown, "checkout", None)
    assert unset.text == "Payments are not set up in this assistant, so I cannot check out."


async def test_the_order_sent_to_paypal_is_the_cart_with_names_and_skus_cut_to_127(
    shown: Conversation,
) -> None:
    checkout = CheckoutSpecialist(clock=lambda: _NOW)
    shown.cart.append(CartLine("long", "v" * 200, "T" * 200, Decimal("46.66"), "USD", 1))
    paypal = ScriptedPayPal(create_order=[ok(id="O-1", amount="56.38", currency="USD")])
    ordered = await _turn(checkout, shown, "checkout", paypal)
    [sent] = paypal.named("create_order")
    [item] = sent["items"]
    assert (item["name"], item["sku"]) == ("T" * 127, "v" * 127)
    assert (item["quantity"], item["unit_price"], item["tax_percent"]) == (1, "46.66", "8")
    placed = shown.orders[0]
    assert (placed.status, placed.created_at, placed.approve_url) == ("CREATED", _NOW, None)
    assert shown.pending == PendingConfirmation(
        PAY_ORDER, {"order_id": "O-1"}, domain=Domain.CART_CHECKOUT
    )
    assert ordered.data["order"]["id"] == "O-1"


async def test_an_order_paypal_cannot_create_or_prices_otherwise_is_not_offered(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    paypal = ScriptedPayPal(
        create_order=[failed("INTERNAL_SERVER_ERROR"), _created(amount="99.00", currency="USD")]
    )
    refused = await _turn(checkout, shown, "checkout", paypal)
    assert refused.text == "I could not create the PayPal order: INTERNAL_SERVER_ERROR"
    priced = await _turn(checkout, shown, "checkout", paypal)
    assert priced.text == (
        "PayPal priced the order at 99.00 USD, not the 56.38 USD I computed, so I stopped. "
        "Nothing was charged."
    )
    assert shown.orders == [] and shown.pending is None


async def test_a_cart_the_store_cannot_quote_is_not_checked_out(shown: Conversation) -> None:
    checkout = CheckoutSpecialist()
    shown.cart.append(CartLine("p", "p-1", "Euro thing", Decimal("10.00"), "EUR", 1))
    paypal = ScriptedPayPal()
    refused = await _turn(checkout, shown, "checkout", paypal)
    assert refused.text == "I cannot check out this cart: the store sells in USD only, not EUR."
    assert paypal.calls == []


async def test_a_checkout_at_another_merchant_goes_to_the_remote_flow(shown: Conversation) -> None:
    started: list[TurnContext] = []

    class Remote:
        async def start(self, turn: TurnContext) -> Reply:
            started.append(turn)
            return Reply("remote", Domain.CART_CHECKOUT)

    checkout = await _with_tee(shown)
    checkout.remote = cast(Any, Remote())
    turn, reply = await say(checkout, shown, "checkout", cast(Toolkit, ScriptedPayPal()))
    assert reply.text == "remote" and started == [turn]


async def test_an_order_paypal_forgot_is_voided_and_a_new_one_made(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-OLD", []))  # another cart's: only its status is asked
    shown.orders.append(_placed("O-PAID", [_line("mug", "Mug")]))
    paid = ok(status="COMPLETED", capture_id="CAP-9", capture_time="2026-01-01T00:00:00Z")
    paypal = ScriptedPayPal(
        get_order=[failed("RESOURCE_NOT_FOUND", status=404), paid],
        create_order=[_created("O-NEW")],
    )
    settled = await _turn(checkout, shown, "checkout", paypal)
    # The forgotten order is voided; the next is paid: its receipt, nothing created.
    assert [o.status for o in shown.orders] == ["VOIDED", "COMPLETED"]
    assert paypal.named("create_order") == []
    assert settled.text.startswith(
        "Order O-PAID was already paid on PayPal, so I did not create another one.\n"
        "Paid. Receipt for order O-PAID (payment CAP-9):"
    )
    left = f"\nYour cart still holds: {describe_cart(shown.cart, DEMO_STORE)} "
    assert settled.text.endswith(left + "Say 'checkout' to pay for it.")
    assert settled.data["order"]["id"] == "O-PAID"


async def test_an_already_paid_order_for_the_whole_cart_leaves_nothing_to_say_about_it(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-1", list(shown.cart)))
    paid = ok(status="COMPLETED", capture_id="CAP-1", capture_time="2026-01-01T00:00:00Z")
    settled = await _turn(checkout, shown, "checkout", ScriptedPayPal(get_order=[paid]))
    assert shown.cart == []
    assert settled.text.endswith("Thank you! Ask 'where is my order' any time.")


async def test_an_order_that_cannot_be_read_blocks_a_new_one(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-1", list(shown.cart)))
    paypal = ScriptedPayPal(get_order=[failed("boom", status=500)])
    blocked = await _turn(checkout, shown, "checkout", paypal)
    assert blocked.text == (
        "I could not check order O-1 with PayPal (boom), so I am not creating another order "
        "that could be paid twice. Please try again in a moment."
    )
    assert paypal.named("create_order") == [] and shown.orders[0].status == "CREATED"


async def test_checking_out_again_resumes_the_approved_order_else_the_latest(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    cart = list(shown.cart)
    shown.orders += [_placed("O-A", cart, "APPROVED"), _placed("O-B", cart), _placed("O-C", cart)]
    waiting = ok(status="CREATED")
    approved = ok(status="APPROVED")
    paypal = ScriptedPayPal(get_order=[approved, waiting, waiting, approved])
    resumed = await _turn(checkout, shown, "checkout", paypal)
    assert resumed.data["order"]["id"] == "O-A"
    assert [a["order_id"] for a in paypal.named("get_order")] == ["O-A", "O-B", "O-C", "O-A"]
    assert shown.pending == PendingConfirmation(
        PAY_ORDER, {"order_id": "O-A"}, domain=Domain.CART_CHECKOUT
    )
    shown.orders = [_placed("O-B", cart), _placed("O-C", cart)]
    paypal = ScriptedPayPal(get_order=[waiting, waiting, waiting])
    assert (await _turn(checkout, shown, "checkout", paypal)).data["order"]["id"] == "O-C"


async def test_only_an_open_order_for_this_very_cart_and_total_is_resumed(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    other_cart = [_line("other", "Other")]
    shown.orders += [
        _placed("O-OTHER-CART", other_cart),  # the same total, another cart
        _placed("O-VOIDED", list(shown.cart), "VOIDED"),
    ]
    paypal = ScriptedPayPal(get_order=[ok(status="CREATED")], create_order=[_created("O-NEW")])
    ordered = await _turn(checkout, shown, "checkout", paypal)
    assert ordered.data["order"]["id"] == "O-NEW"


async def test_a_yes_or_done_for_an_order_it_lost_track_of_starts_over(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    for answer in ("yes", "done"):
        shown.pending = PendingConfirmation(PAY_ORDER, {"order_id": "O-GONE"})
        paypal = ScriptedPayPal()
        lost = await _turn(checkout, shown, answer, paypal)
        assert lost.text == "I lost track of that order; say 'checkout' to start again."
        assert shown.pending is None and paypal.calls == []


async def test_a_yes_or_done_when_paypal_cannot_be_read_says_so(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-1", list(shown.cart)))
    for answer in ("yes", "done"):
        shown.pending = PendingConfirmation(PAY_ORDER, {"order_id": "O-1"})
        paypal = ScriptedPayPal(get_order=[failed("timeout")])
        unread = await _turn(checkout, shown, answer, paypal)
        assert unread.text == "I could not reach PayPal to check the order: timeout"


async def test_done_gives_the_receipt_of_a_paid_order_or_asks_to_approve(
    shown: Conversation,
) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-1", list(shown.cart), approve_url="https://paypal.test/a"))
    shown.pending = PendingConfirmation(PAY_ORDER, {"order_id": "O-1"})
    waiting = await _turn(checkout, shown, "done", ScriptedPayPal(get_order=[ok(status="CREATED")]))
    assert waiting.text.startswith("Order O-1 is not approved yet (PayPal says CREATED).")
    paid = ok(status="COMPLETED", capture_id="CAP-1", capture_time="2026-01-01T00:00:00Z")
    receipt = await _turn(checkout, shown, "done", ScriptedPayPal(get_order=[paid]))
    assert receipt.text.startswith("Paid. Receipt for order O-1 (payment CAP-1)")


async def test_a_yes_for_a_changed_cart_names_the_cart_as_it_is_now(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    shown.orders.append(_placed("O-1", []))  # ordered before the tee was added
    shown.pending = PendingConfirmation(PAY_ORDER, {"order_id": "O-1"})
    stale = await _turn(checkout, shown, "yes", ScriptedPayPal(get_order=[ok(status="APPROVED")]))
    assert stale.text == (
        "Your cart changed after order O-1 was created, so I did not take that payment: a yes "
        "pays only for the cart as it was ordered. Say 'checkout' to pay for the cart as it is "
        f"now.\n{describe_cart(shown.cart, DEMO_STORE)}"
    )


async def test_a_failed_capture_is_read_back_paid_or_reported(shown: Conversation) -> None:
    checkout = await _with_tee(shown)
    cart = list(shown.cart)
    approved = ok(status="APPROVED")
    paid = ok(status="COMPLETED", capture_id="CAP-1", capture_time="2026-01-01T00:00:00Z")
    for after, starts in ((approved, "The payment did not go through: DECLINED"), (paid, "Paid.")):
        shown.cart[:] = cart
        shown.orders = [_placed("O-1", cart)]
        shown.pending = PendingConfirmation(PAY_ORDER, {"order_id": "O-1"})
        paypal = ScriptedPayPal(
            get_order=[approved, after], capture_order=[failed("DECLINED", status=422)]
        )
        reply = await _turn(checkout, shown, "yes", paypal)
        assert reply.text.startswith(starts), reply.text
        assert [name for name, _ in paypal.calls] == ["get_order", "capture_order", "get_order"]
