"""Returns and refunds step by step against a PayPal that answers from a script: which order
and line a request means, the window, the amount (never more than is left, never shipping),
the offer, the yes, and every way the refund can fail or turn out already done. (The whole
journey against the sandbox: test_orders_and_returns.py.)"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, cast

import pytest

from cartagent.assistant import Conversation, PendingConfirmation, Reply, TurnContext
from cartagent.assistant.conversation import CartLine, PlacedOrder
from cartagent.assistant.domains import Domain
from cartagent.assistant.specialists import ReturnsSpecialist
from cartagent.assistant.specialists.returns import REFUND
from cartagent.tools import Toolkit, ToolResult

from .conftest import ScriptedPayPal, failed, ok, say

pytestmark = pytest.mark.anyio

RETURNS = Domain.RETURNS_REFUNDS
TEE = CartLine("tee", "tee-red-l", "T-Shirt", Decimal("46.66"), "USD", 1, {"color": "red"})
MUG = CartLine("mug", "mug-white", "Coffee Mug", Decimal("12.00"), "USD", 2, {"color": "white"})
PIN = CartLine("pin", "pin-1", "Enamel Pin", Decimal("0.50"), "USD", 1)
FIRST, SECOND = "ORDER000000000001", "ORDER000000000002"  # 17 characters, as PayPal's
PAID_AT = datetime(2026, 11, 21, 12, tzinfo=UTC)
LATER = PAID_AT + timedelta(days=3)
WINDOW = (
    "Items must be unused and in their original packaging. Say 'yes' to refund, or 'no' to keep it."
)


def _order(order_id: str = FIRST, *lines: CartLine, **changes: Any) -> PlacedOrder:
    fields: dict[str, Any] = {"capture_id": f"CAP-{order_id[-1]}", "paid_at": PAID_AT}
    return PlacedOrder(
        order_id, "COMPLETED", Decimal("76.31"), "USD", lines or (TEE, MUG), PAID_AT,
        **{**fields, **changes},
    )  # fmt: skip


def _conversation(*orders: PlacedOrder) -> Conversation:
    return Conversation("s", "shopper", PAID_AT, orders=list(orders))


def _as_paypal_has_it(order: PlacedOrder, **extra: Any) -> ToolResult:
    """``get_order``'s answer for ``order`` as it stands."""
    return ok(
        status="COMPLETED", capture_id=order.capture_id, capture_time="2026-11-21T12:00:00Z",
        refunded=str(order.refunded), **extra,
    )  # fmt: skip


async def _turn(
    returns: ReturnsSpecialist,
    conversation: Conversation,
    text: str,
    paypal: ScriptedPayPal | None = None,
) -> Reply:
    toolkit = cast(Toolkit, paypal or ScriptedPayPal())
    return (await say(returns, conversation, text, toolkit))[1]


def _offer(what: str, amount: str, order_id: str = FIRST) -> str:
    return (
        f"You can return {what} (paid on 2026-11-21, within our 30-day window). I would refund "
        f"{amount} USD (price and tax; shipping is not refunded) to your PayPal account. {WINDOW}"
    )


class Policies:
    """Answers every question with the store's (made-up) returns policy."""

    async def handle(self, turn: TurnContext) -> Reply:
        return Reply("Refunds take 5 days.", Domain.STORE_QUESTIONS, data={"policy": "refunds"})


# --------------------------------------------------------------------------- the request


async def test_without_a_paid_order_it_says_where_returns_are_taken() -> None:
    unpaid = [
        _order(FIRST, capture_id=None),  # completed, but no capture known
        replace(_order(SECOND), status="APPROVED"),
    ]
    reply = await _turn(ReturnsSpecialist(clock=lambda: LATER), _conversation(*unpaid), "refund")
    assert reply == Reply(
        "I don't see a paid order in this conversation to return. Returns are accepted within "
        "30 days of payment; for an order placed elsewhere, please contact the store.",
        RETURNS,
    )


@pytest.mark.parametrize(
    "text",
    [
        f"can i return {FIRST.lower()}?",  # the order, named by its id
        "can i return the mug?",  # a line, named by a word of its title
        "can i exchange it?",  # an exchange, with one paid order
    ],
)
async def test_a_question_naming_the_order_is_a_return_not_a_policy_question(text: str) -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER, policies=cast(Any, Policies()))
    conversation = _conversation(_order())
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(conversation.orders[0])])
    reply = await _turn(returns, conversation, text, paypal)
    assert reply.text.startswith("You can return") or reply.text.startswith("A paid order")


async def test_a_question_naming_nothing_is_answered_by_the_policies() -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER, policies=cast(Any, Policies()))
    reply = await _turn(returns, _conversation(_order()), "how long do refunds take?")
    assert reply == Reply("Refunds take 5 days.", RETURNS, data={"policy": "refunds"})


async def test_the_order_named_by_its_id_is_the_one_refunded() -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER)
    conversation = _conversation(_order(FIRST), _order(SECOND, MUG))
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(conversation.orders[1])])
    reply = await _turn(returns, conversation, f"return {SECOND.lower()}", paypal)
    assert reply.text == _offer("2 x Coffee Mug", "25.92", SECOND)
    assert paypal.named("get_order") == [{"order_id": SECOND}]


async def test_an_order_id_not_paid_here_is_refused() -> None:
    reply = await _turn(ReturnsSpecialist(), _conversation(_order()), "return ORDER000000000009")
    assert reply == Reply(
        "I can only refund orders paid in this conversation, and that is not one of them.",
        RETURNS,
    )


async def test_with_two_orders_and_no_item_named_it_asks_which() -> None:
    conversation = _conversation(_order(FIRST), _order(SECOND, MUG))
    reply = await _turn(ReturnsSpecialist(), conversation, "i want a refund")
    assert reply == Reply(
        "Which item do you want to return? Name it or its order. "
        f"{FIRST}: T-Shirt, Coffee Mug; {SECOND}: Coffee Mug",
        RETURNS,
    )


async def test_one_order_of_one_line_is_that_line_and_of_several_is_the_whole_order() -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER)
    single = _conversation(_order(FIRST, TEE))
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(single.orders[0])])
    assert (await _turn(returns, single, "i want a refund", paypal)).text == _offer(
        "1 x T-Shirt", "50.39"
    )
    whole = _conversation(_order())
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(whole.orders[0])])
    offered = await _turn(returns, whole, "i want a refund", paypal)
    assert offered == Reply(
        _offer(f"order {FIRST}", "76.31"),
        RETURNS,
        data={"refund": {"order_id": FIRST, "amount": "76.31"}},
    )
    assert whole.pending == PendingConfirmation(
        REFUND,
        {
            "order_id": FIRST,
            "variant_id": None,
            "amount": "76.31",
            "currency": "USD",
            "what": f"order {FIRST}",
        },
        domain=RETURNS,
    )


async def test_a_payment_paypal_cannot_confirm_is_not_refunded() -> None:
    conversation = _conversation(_order(paid_at=None))
    paypal = ScriptedPayPal(get_order=[failed("timeout")])
    reply = await _turn(ReturnsSpecialist(), conversation, "return the mug", paypal)
    assert reply == Reply(
        f"I could not confirm the payment of order {FIRST} with PayPal; please ask again in a "
        "moment.",
        RETURNS,
    )


async def test_the_window_is_thirty_days_to_the_second() -> None:
    for days, outside in ((timedelta(days=30), False), (timedelta(days=30, seconds=1), True)):
        returns = ReturnsSpecialist(clock=lambda days=days: PAID_AT + days)
        conversation = _conversation(_order())
        paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(conversation.orders[0])])
        reply = await _turn(returns, conversation, "return the mug", paypal)
        if not outside:
            assert reply.text.startswith("You can return 2 x Coffee Mug")
            continue
        assert reply == Reply(
            f"Order {FIRST} was paid on 2026-11-21, more than 30 days ago, so it is outside our "
            "return window. If the item is faulty, its warranty may still cover it: ask about "
            "our warranty policy.",
            RETURNS,
        )


async def test_the_default_clock_is_the_time_now() -> None:
    conversation = _conversation(_order(paid_at=datetime.now(UTC)))
    paypal = ScriptedPayPal(get_order=[ok(status="COMPLETED", capture_id="CAP-1")])
    reply = await _turn(ReturnsSpecialist(), conversation, "return the mug", paypal)
    assert reply.text.startswith("You can return 2 x Coffee Mug")


async def test_an_item_of_under_a_dollar_is_refundable() -> None:
    conversation = _conversation(_order(FIRST, PIN))
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(conversation.orders[0])])
    reply = await _turn(ReturnsSpecialist(clock=lambda: LATER), conversation, "refund", paypal)
    assert reply.text == _offer("1 x Enamel Pin", "0.54")


async def test_what_was_refunded_already_is_not_offered_again() -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER)
    returned = _conversation(_order(returned=frozenset({"mug-white"})))
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(returned.orders[0])])
    assert await _turn(returns, returned, "return the mug", paypal) == Reply(
        f"Coffee Mug from order {FIRST} has already been refunded; each item is refunded once.",
        RETURNS,
    )
    # Refunded in full from the store's back office, no line marked: nothing is left.
    drained = _conversation(_order(refunded=Decimal("76.31")))
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(drained.orders[0])])
    assert await _turn(returns, drained, "i want a refund", paypal) == Reply(
        f"Order {FIRST} has nothing left to refund: its items and tax have been refunded "
        "(shipping is not refunded).",
        RETURNS,
    )


async def test_an_exchange_offers_the_return_and_asks_what_instead() -> None:
    returns = ReturnsSpecialist(clock=lambda: LATER)
    whole = _conversation(_order())
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(whole.orders[0])])
    reply = await _turn(returns, whole, "can i exchange it", paypal)
    assert reply == Reply(
        f"{_offer(f'order {FIRST}', '76.31')}\nThen tell me which item to order instead.",
        RETURNS,
    )
    line = _conversation(_order())
    paypal = ScriptedPayPal(get_order=[_as_paypal_has_it(line.orders[0])])
    reply = await _turn(returns, line, "exchange the mug for another colour", paypal)
    assert reply == Reply(
        "A paid order cannot be changed: an exchange is a return and a new order.\n"
        f"{_offer('2 x Coffee Mug', '25.92')}\n"
        "I cannot look up the other versions of Coffee Mug right now.",
        RETURNS,
        (),
        data={"refund": {"order_id": FIRST, "amount": "25.92"}},
    )


# --------------------------------------------------------------------------------- the yes


def _asked(conversation: Conversation, line: CartLine | None, amount: str, **data: Any) -> None:
    fields: dict[str, Any] = {
        "order_id": FIRST,
        "variant_id": None if line is None else line.variant_id,
        "amount": amount,
        "currency": "USD",
        "what": f"{line.quantity} x {line.title}" if line else f"order {FIRST}",
    }
    conversation.pending = PendingConfirmation(REFUND, {**fields, **data}, domain=RETURNS)


async def test_no_or_done_refunds_nothing() -> None:
    for answer in ("no", "done"):
        conversation = _conversation(_order())
        _asked(conversation, MUG, "25.92")
        paypal = ScriptedPayPal()
        reply = await _turn(ReturnsSpecialist(), conversation, answer, paypal)
        assert reply == Reply("OK, no refund. Nothing was changed.", RETURNS)
        assert conversation.pending is None and paypal.calls == []


async def test_a_yes_refunds_what_was_offered_under_an_invoice_id_of_its_own() -> None:
    conversation = _conversation(_order())
    _asked(conversation, MUG, "25.92")
    order = conversation.orders[0]
    paypal = ScriptedPayPal(
        get_order=[_as_paypal_has_it(order)],
        create_refund=[ok(id="REF-1", status="COMPLETED", amount="25.92")],
    )
    reply = await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
    assert paypal.named("create_refund") == [
        {
            "capture_id": "CAP-1",
            "amount": "25.92",
            "currency": "USD",
            "note": "Return of 2 x Coffee Mug",
            "invoice_id": "return-CAP-1-line-mug-white",
        }
    ]
    assert reply == Reply(
        "Refund REF-1 of 25.92 USD for 2 x Coffee Mug is completed. Please send the item back "
        "unused in its original packaging.",
        RETURNS,
        data={"refund": {"id": "REF-1", "status": "COMPLETED", "amount": "25.92"}},
    )
    after = conversation.orders[0]
    assert (after.refunded, after.returned) == (Decimal("25.92"), {"mug-white"})
    assert conversation.pending is None


async def test_the_refund_note_is_cut_to_255_and_says_your_order_when_unnamed() -> None:
    for what, note in (
        (None, "Return of your order"),
        ("x" * 300, ("Return of " + "x" * 300)[:255]),
    ):
        conversation = _conversation(_order())
        _asked(conversation, None, "76.31")
        if what is None:
            del conversation.pending.data["what"]  # type: ignore[union-attr]
        else:
            conversation.pending.data["what"] = what  # type: ignore[union-attr]
        paypal = ScriptedPayPal(
            get_order=[_as_paypal_has_it(conversation.orders[0])],
            create_refund=[ok(id="REF-1", status="PENDING")],  # no amount: the one asked for
        )
        await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
        [sent] = paypal.named("create_refund")
        assert sent["note"] == note and sent["invoice_id"] == "return-CAP-1-order"
        assert conversation.orders[0].refunded == Decimal("76.31")
        assert conversation.orders[0].returned == {"tee-red-l", "mug-white"}


async def test_a_yes_refunds_no_more_than_paypal_shows_left() -> None:
    conversation = _conversation(_order())
    _asked(conversation, None, "76.31")
    # The store refunded 70.00 from its back office meanwhile: 6.31 is left.
    meanwhile = _as_paypal_has_it(replace(conversation.orders[0], refunded=Decimal("70.00")))
    paypal = ScriptedPayPal(
        get_order=[meanwhile], create_refund=[ok(id="REF-1", status="COMPLETED", amount="6.31")]
    )
    await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
    assert paypal.named("create_refund")[0]["amount"] == "6.31"


async def test_a_yes_for_a_line_refunded_meanwhile_refunds_nothing() -> None:
    conversation = _conversation(_order())
    _asked(conversation, MUG, "25.92")
    # The mug's refund went through in a turn that was lost: PayPal lists its invoice id.
    done = _as_paypal_has_it(
        conversation.orders[0], refund_invoice_ids=["return-CAP-1-line-mug-white"]
    )
    paypal = ScriptedPayPal(get_order=[done])
    reply = await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
    assert reply == Reply(
        f"Coffee Mug from order {FIRST} has already been refunded; each item is refunded once.",
        RETURNS,
    )
    assert paypal.named("create_refund") == []


async def test_a_yes_for_an_order_or_item_it_lost_track_of_refunds_nothing() -> None:
    for order, variant, text in (
        (_order(SECOND), None, "I lost track of that order; ask again to return it."),
        (_order(capture_id=None), None, "I lost track of that order; ask again to return it."),
        (_order(), "sock-1", "I lost track of that item; ask again to return it."),
    ):
        conversation = _conversation(order)
        _asked(conversation, None, "10.00", variant_id=variant)
        paypal = ScriptedPayPal()
        assert await _turn(ReturnsSpecialist(), conversation, "yes", paypal) == Reply(text, RETURNS)
        assert paypal.calls == [] and conversation.pending is None


async def test_a_failed_refund_is_read_back_done_or_reported() -> None:
    for line, after, expected in (
        (
            MUG,
            ["return-CAP-1-line-mug-white"],
            f"Coffee Mug from order {FIRST} has already been refunded; each item is refunded once.",
        ),
        (
            PIN,
            [],
            "The refund did not go through: DUPLICATE_INVOICE_ID. Nothing was refunded; you can "
            "ask again.",
        ),
    ):
        conversation = _conversation(_order(FIRST, TEE, line))
        amount = str(ReturnsSpecialist().terms.line_total(line).amount)
        _asked(conversation, line, amount)
        order = conversation.orders[0]
        paypal = ScriptedPayPal(
            get_order=[
                _as_paypal_has_it(order),
                _as_paypal_has_it(order, refund_invoice_ids=after),
            ],
            create_refund=[failed("DUPLICATE_INVOICE_ID", status=422)],
        )
        reply = await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
        assert reply == Reply(expected, RETURNS)


async def test_a_yes_for_an_item_under_a_dollar_refunds_it() -> None:
    conversation = _conversation(_order(FIRST, PIN))
    _asked(conversation, PIN, "0.54")
    paypal = ScriptedPayPal(
        get_order=[_as_paypal_has_it(conversation.orders[0])],
        create_refund=[ok(id="REF-1", status="COMPLETED", amount="0.54")],
    )
    reply = await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
    assert reply.text.startswith("Refund REF-1 of 0.54 USD for 1 x Enamel Pin is completed.")


async def test_a_yes_refunds_what_was_offered_at_most_and_records_what_paypal_refunded() -> None:
    conversation = _conversation(_order())
    _asked(conversation, MUG, "20.00")  # less than the mug's 25.92 was offered: only that
    paypal = ScriptedPayPal(
        get_order=[_as_paypal_has_it(conversation.orders[0])],
        create_refund=[ok(id="REF-1", status="COMPLETED", amount="19.50")],
    )
    reply = await _turn(ReturnsSpecialist(), conversation, "yes", paypal)
    assert paypal.named("create_refund")[0]["amount"] == "20.00"
    assert conversation.orders[0].refunded == Decimal("19.50")  # as PayPal has it
    assert reply.text.startswith("Refund REF-1 of 19.50 USD for 2 x Coffee Mug")
