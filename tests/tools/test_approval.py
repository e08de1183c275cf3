"""The approval gate: a money-moving call runs only on a decision of exactly ``True``."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cartagent.errors import ApprovalDenied, ApprovalRequired, SpendLimitExceeded
from cartagent.money import Money
from cartagent.tools import ApprovalRequest, SpendLimits, Toolkit, deny_all
from cartagent.tools._approval import gate
from cartagent.tools._models import Args
from cartagent.tools._tool import Tool, ToolAnnotations, ToolContext

from .conftest import MakeToolkit, call

MUG = {"items": [{"name": "Mug", "unit_price": "12.00"}]}

# What a host's callback might hand back that only looks like a yes: none of them is True.
NOT_TRUE: list[Any] = [None, 1, "yes", "true", [True], object()]


def _approved_order(toolkit: Toolkit, http: TestClient) -> str:
    """An order the buyer has approved, ready to capture; its id."""
    order = call(toolkit, "create_order", MUG).content
    page = http.post(f"/checkoutnow?token={order['id']}", data={}, follow_redirects=False)
    assert page.status_code < 400, page.text
    return str(order["id"])


@pytest.mark.parametrize(
    "decision", NOT_TRUE, ids=["None", "1", "yes", "true", "[True]", "object()"]
)
@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_decision_that_is_not_exactly_true_refuses_the_capture(
    decision: Any, style: str, make_toolkit: MakeToolkit, http: TestClient
) -> None:
    asked: list[ApprovalRequest] = []

    def sync_approve(request: ApprovalRequest) -> Any:
        asked.append(request)
        return decision

    async def async_approve(request: ApprovalRequest) -> Any:
        asked.append(request)
        return decision

    toolkit = make_toolkit(approve=sync_approve if style == "sync" else async_approve)
    order_id = _approved_order(toolkit, http)

    refused = call(toolkit, "capture_order", {"order_id": order_id})

    assert refused.is_error and refused.content["kind"] == "ApprovalDenied", refused.content
    assert [request.tool for request in asked] == ["capture_order"]
    # Nothing was captured: the order still waits for its capture.
    assert call(toolkit, "get_order", {"order_id": order_id}).content["status"] == "APPROVED"


@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_decision_of_true_captures(
    style: str, make_toolkit: MakeToolkit, http: TestClient
) -> None:
    def sync_approve(request: ApprovalRequest) -> bool:
        return True

    async def async_approve(request: ApprovalRequest) -> bool:
        return True

    toolkit = make_toolkit(approve=sync_approve if style == "sync" else async_approve)
    order_id = _approved_order(toolkit, http)

    captured = call(toolkit, "capture_order", {"order_id": order_id})

    assert not captured.is_error, captured.content
    assert captured.content["status"] == "COMPLETED"


# --- the gate and the spend limits on their own ---------------------------------------------


class _NoArgs(Args):
    pass


async def _nothing(ctx: ToolContext, args: _NoArgs) -> dict[str, Any]:
    return {}


def _tool(name: str, *, moves_money: bool = False, destructive: bool = False) -> Tool[Any]:
    return Tool(
        name=name, family="test", action=name, description="A test tool.", args=_NoArgs,
        fn=_nothing, annotations=ToolAnnotations(False, destructive, False),
        moves_money=moves_money,
    )  # fmt: skip


PAY = _tool("pay", moves_money=True)
ARGUMENTS = {"order_id": "O-1"}


def _usd(value: str) -> Money:
    return Money.of(value, "USD")


def _refusal(limits: SpendLimits, amount: Money) -> SpendLimitExceeded:
    with pytest.raises(SpendLimitExceeded) as raised:
        limits.check("pay", ARGUMENTS, amount)
    assert (raised.value.tool, raised.value.arguments) == ("pay", ARGUMENTS)
    return raised.value


def test_without_limits_any_amount_in_any_currency_passes() -> None:
    SpendLimits().check("pay", ARGUMENTS, Money.of("1000000", "EUR"))


def test_once_a_limit_is_set_a_currency_without_one_is_refused_unless_declared_unlimited() -> None:
    per_call_usd = SpendLimits(per_call={"USD": Decimal("50")})
    assert (
        str(_refusal(per_call_usd, Money.of("1", "EUR"))) == "no spend limit is configured for EUR"
    )
    SpendLimits(per_call={"USD": Decimal("50")}, default_unlimited=True).check(
        "pay", ARGUMENTS, Money.of("1000", "EUR")
    )


def test_a_per_call_limit_admits_up_to_its_amount_and_refuses_a_cent_more() -> None:
    limits = SpendLimits(per_call={"USD": Decimal("50")})
    limits.check("pay", ARGUMENTS, _usd("50.00"))
    refused = _refusal(limits, _usd("50.01"))
    assert str(refused) == "50.01 USD exceeds the per-call limit of 50 USD"


def test_a_total_limit_counts_what_was_recorded_per_currency() -> None:
    limits = SpendLimits(total={"USD": Decimal("60")}, default_unlimited=True)
    limits.check("pay", ARGUMENTS, _usd("60"))  # nothing spent yet: the whole total is there
    limits.record(_usd("40"))
    limits.record(Money.of("500", "EUR"))  # another currency's spending does not count
    limits.record(_usd("15"))
    limits.check("pay", ARGUMENTS, _usd("5"))  # 60 exactly
    refused = _refusal(limits, _usd("5.01"))
    assert str(refused) == "5.01 USD would bring the total to 60.01 USD, over the limit of 60 USD"
    assert limits.spent == {"USD": Decimal("55.00"), "EUR": Decimal("500.00")}


def test_per_call_and_total_limits_each_apply_only_where_set() -> None:
    SpendLimits(total={"USD": Decimal("100")}).check("pay", ARGUMENTS, _usd("99"))
    SpendLimits(per_call={"USD": Decimal("100")}).check("pay", ARGUMENTS, _usd("99"))


def test_the_default_policy_denies() -> None:
    request = ApprovalRequest("pay", ARGUMENTS, _usd("1"), destructive=False, moves_money=True)
    assert deny_all(request) is False


def test_the_gate_checks_limits_only_for_money_a_money_moving_tool_would_move() -> None:
    strict = SpendLimits(per_call={"USD": Decimal("10")})
    with pytest.raises(SpendLimitExceeded) as raised:
        asyncio.run(gate(PAY, ARGUMENTS, _usd("11"), lambda request: True, strict))
    assert (raised.value.tool, raised.value.arguments) == ("pay", ARGUMENTS)
    # An amount it cannot know (None) or a tool that moves no money is not a limit's business.
    asyncio.run(gate(PAY, ARGUMENTS, None, lambda request: True, strict))
    delete = _tool("delete", destructive=True)
    asyncio.run(gate(delete, ARGUMENTS, Money.of("11", "EUR"), lambda request: True, strict))


def test_the_gate_without_a_callback_requires_approval_naming_the_call() -> None:
    with pytest.raises(ApprovalRequired) as raised:
        asyncio.run(gate(PAY, ARGUMENTS, _usd("1"), None, SpendLimits()))
    assert str(raised.value) == "pay needs approval and no approval callback is configured"
    assert (raised.value.tool, raised.value.arguments) == ("pay", ARGUMENTS)
    asyncio.run(gate(_tool("read"), ARGUMENTS, None, None, SpendLimits()))  # nothing to approve


def test_the_gate_asks_with_the_whole_request_and_a_no_names_the_call() -> None:
    asked: list[ApprovalRequest] = []

    def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    delete = _tool("delete", destructive=True)
    with pytest.raises(ApprovalDenied) as raised:
        asyncio.run(gate(delete, ARGUMENTS, None, refuse, SpendLimits()))
    assert str(raised.value) == "delete was not approved"
    assert (raised.value.tool, raised.value.arguments) == ("delete", ARGUMENTS)
    assert asked == [
        ApprovalRequest("delete", ARGUMENTS, None, destructive=True, moves_money=False)
    ]
