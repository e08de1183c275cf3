"""Consent: a grant approves one tool on one resource up to one amount, in its own task only."""

from __future__ import annotations

import asyncio

import pytest

from cartagent.assistant.consent import Grant, approve_granted, granting
from cartagent.money import Money
from cartagent.tools import ApprovalRequest

pytestmark = pytest.mark.anyio


def _capture(order_id: str, amount: str | None) -> ApprovalRequest:
    money = None if amount is None else Money.of(amount, "USD")
    return ApprovalRequest("capture_order", {"order_id": order_id}, money, False, True)


def test_nothing_is_approved_without_a_grant() -> None:
    assert approve_granted(_capture("ORDER1", "10.00")) is False


def test_a_grant_covers_its_tool_resource_and_amount_only() -> None:
    with granting(Grant("capture_order", "order_id", "ORDER1", Money.of("10.00", "USD"))):
        assert approve_granted(_capture("ORDER1", "10.00"))
        assert approve_granted(_capture("ORDER1", "9.99"))
        assert not approve_granted(_capture("ORDER1", "10.01"))
        assert not approve_granted(_capture("ORDER2", "1.00"))
        assert not approve_granted(_capture("ORDER1", None))  # money of unknown amount
        other = ApprovalRequest("create_refund", {"order_id": "ORDER1"}, None, False, True)
        assert not approve_granted(other)
        euros = ApprovalRequest(
            "capture_order", {"order_id": "ORDER1"}, Money.of("1", "EUR"), False, True
        )
        assert not approve_granted(euros)
    assert not approve_granted(_capture("ORDER1", "10.00"))


def test_a_destructive_call_that_moves_no_money_needs_no_limit() -> None:
    delete = ApprovalRequest("delete_invoice", {"invoice_id": "INV2-1"}, None, True, False)
    with granting(Grant("delete_invoice", "invoice_id", "INV2-1")):
        assert approve_granted(delete)


async def test_grants_do_not_leak_between_concurrent_turns() -> None:
    granted = asyncio.Event()
    seen: list[bool] = []

    async def confirmed() -> None:
        with granting(Grant("capture_order", "order_id", "ORDER1", Money.of("10", "USD"))):
            granted.set()
            await asyncio.sleep(0.01)
            seen.append(approve_granted(_capture("ORDER1", "10.00")))

    async def unconfirmed() -> None:
        await granted.wait()
        seen.append(approve_granted(_capture("ORDER1", "10.00")))

    await asyncio.gather(confirmed(), unconfirmed())
    assert sorted(seen) == [False, True]


def _refund(capture_id: str, amount: str | None) -> ApprovalRequest:
    money = None if amount is None else Money.of(amount, "USD")
    arguments = {"capture_id": capture_id, "amount": amount, "currency": "USD"}
    return ApprovalRequest("create_refund", arguments, money, False, True)


def test_a_refund_grant_approves_its_capture_up_to_its_amount_and_no_further() -> None:
    with granting(Grant("create_refund", "capture_id", "CAPTURE1", Money.of("24.99", "USD"))):
        assert approve_granted(_refund("CAPTURE1", "24.99"))
        assert approve_granted(_refund("CAPTURE1", "0.01"))
        assert not approve_granted(_refund("CAPTURE1", "25.00"))  # a cent over
        assert not approve_granted(_refund("CAPTURE1", "999999.00"))
        assert not approve_granted(_refund("CAPTURE2", "24.99"))  # another capture
        assert not approve_granted(_refund("CAPTURE1", None))  # "what is left": unknown
    assert not approve_granted(_refund("CAPTURE1", "24.99"))
