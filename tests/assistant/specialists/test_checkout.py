"""Cart and checkout against the sandbox: order, approval on PayPal's page, yes, capture."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from cartagent.assistant import Conversation
from cartagent.assistant.cart import find_quantity_change
from cartagent.assistant.consent import Grant, granting
from cartagent.assistant.conversation import CartLine
from cartagent.assistant.specialists import (
    CheckoutSpecialist,
    DiscoverySpecialist,
    OrdersSpecialist,
)
from cartagent.assistant.specialists.checkout import PAY_ORDER
from cartagent.money import Money
from cartagent.tools import Toolkit

from .conftest import GONE, approve_on_paypal, say

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
