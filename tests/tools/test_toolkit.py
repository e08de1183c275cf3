"""The Toolkit's safety rails, with tools defined here (they never reach PayPal)."""

from __future__ import annotations

import asyncio
import dataclasses
from decimal import Decimal
from typing import Any, cast

import pytest
from pydantic import Field

from cartagent.errors import ConfigurationError, PayPalClientError, PayPalErrorDetail, ToolError
from cartagent.money import Money
from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ApprovalRequest, SpendLimits, Toolkit, ToolkitConfig, tool
from cartagent.tools._models import Args
from cartagent.tools._tool import ToolContext

CALLS: list[str] = []


class PayArgs(Args):
    amount: Decimal = Field(gt=0, description="How much.")
    currency: str = Field(default="USD", min_length=3, max_length=3)


async def _amount(ctx: ToolContext, args: PayArgs) -> Money:
    return Money(args.amount, args.currency)


@tool(family="payments", action="pay", moves_money=True, spend=_amount)
async def pay_merchant(ctx: ToolContext, args: PayArgs) -> dict[str, Any]:
    """Pay money (a test tool)."""
    CALLS.append(f"pay {args.amount}")
    return {"paid": str(args.amount)}


class NoteArgs(Args):
    text: str = Field(min_length=1, max_length=20, description="A note.")


@tool(family="notes", action="read", read_only=True, idempotent=True)
async def read_note(ctx: ToolContext, args: NoteArgs) -> dict[str, Any]:
    """Echo a note (a test tool)."""
    if args.text == "paypal":
        raise PayPalClientError(
            "The requested action could not be performed.",
            http_status=422,
            name="UNPROCESSABLE_ENTITY",
            debug_id="abc123",
            details=(PayPalErrorDetail("ORDER_NOT_APPROVED", "Payer has not approved."),),
        )
    if args.text == "tool":
        raise ToolError("pick another note", field="text")
    if args.text == "boom":
        raise RuntimeError("secret internals")
    return {"text": args.text}


@tool(family="notes", action="delete", destructive=True)
async def delete_note(ctx: ToolContext, args: NoteArgs) -> dict[str, Any]:
    """Delete a note (a test tool)."""
    CALLS.append(f"delete {args.text}")
    return {"deleted": args.text}


TOOLS = (pay_merchant, read_note, delete_note)
KNOWN = [(t.family, t.action) for t in TOOLS]
CLIENT = cast(AsyncPayPalClient, object())


def kit(config: ToolkitConfig | None = None, **kwargs: Any) -> Toolkit:
    return Toolkit(CLIENT, TOOLS, config=config or ToolkitConfig.everything(KNOWN), **kwargs)


def call(toolkit: Toolkit, name: str, arguments: dict[str, Any]) -> Any:
    return asyncio.run(toolkit.call(name, arguments))


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


def test_only_tools_named_in_the_config_are_enabled() -> None:
    toolkit = kit(ToolkitConfig({"notes": {"read": True, "delete": False}}))
    assert [t.name for t in toolkit.tools] == ["read_note"]
    result = call(toolkit, "delete_note", {"text": "x"})
    assert result.is_error and result.content["error"] == "unknown_tool"
    assert CALLS == []


def test_unknown_families_and_actions_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="unknown tool family 'nots'"):
        kit(ToolkitConfig({"nots": {"read": True}}))
    with pytest.raises(ConfigurationError, match="unknown action 'write'"):
        kit(ToolkitConfig({"notes": {"write": True}}))
    with pytest.raises(ConfigurationError, match="true/false"):
        ToolkitConfig.from_mapping({"actions": {"notes": {"read": "yes"}}})


def test_bad_arguments_name_the_field_and_the_reason() -> None:
    result = call(kit(), "read_note", {"text": "x" * 30})
    assert result.is_error
    assert result.content["field"] == "text"
    assert "at most 20 characters" in result.content["message"]
    unknown = call(kit(), "read_note", {"text": "x", "colour": "red"})
    assert unknown.content["field"] == "colour"
    assert "Extra inputs are not permitted" in unknown.content["message"]


def test_money_moving_tools_are_denied_without_an_approval_callback() -> None:
    result = call(kit(), "pay_merchant", {"amount": "5"})
    assert result.is_error and result.content["kind"] == "ApprovalRequired"
    assert CALLS == []


def test_the_host_callback_sees_the_amount_and_decides() -> None:
    seen: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        seen.append(request)
        return request.amount is not None and request.amount.amount < 100

    toolkit = kit(approve=approve)
    assert not call(toolkit, "pay_merchant", {"amount": "5"}).is_error
    denied = call(toolkit, "pay_merchant", {"amount": "500"})
    assert denied.content["kind"] == "ApprovalDenied"
    assert [r.amount for r in seen] == [Money.of("5", "USD"), Money.of("500", "USD")]
    assert CALLS == ["pay 5"]


def test_destructive_tools_need_approval_too() -> None:
    assert call(kit(), "delete_note", {"text": "a"}).content["kind"] == "ApprovalRequired"
    assert not call(kit(approve=lambda r: True), "delete_note", {"text": "a"}).is_error
    assert CALLS == ["delete a"]


def test_spend_limits_apply_per_call_and_in_total() -> None:
    limits = SpendLimits(per_call={"USD": Decimal("50")}, total={"USD": Decimal("60")})
    toolkit = kit(approve=lambda r: True, limits=limits)
    assert call(toolkit, "pay_merchant", {"amount": "51"}).content["kind"] == "SpendLimitExceeded"
    assert not call(toolkit, "pay_merchant", {"amount": "40"}).is_error
    over = call(toolkit, "pay_merchant", {"amount": "30"})
    assert over.content["kind"] == "SpendLimitExceeded"
    assert "70.00 USD" in over.content["message"]
    assert call(toolkit, "pay_merchant", {"amount": "5", "currency": "EUR"}).is_error
    assert CALLS == ["pay 40"]


def test_failures_come_back_as_results_never_as_exceptions() -> None:
    toolkit = kit()
    paypal = call(toolkit, "read_note", {"text": "paypal"})
    assert paypal.is_error and paypal.content["name"] == "UNPROCESSABLE_ENTITY"
    assert paypal.content["issues"][0]["issue"] == "ORDER_NOT_APPROVED"
    assert paypal.content["debug_id"] == "abc123"
    tool_error = call(toolkit, "read_note", {"text": "tool"})
    assert tool_error.content == {
        "error": "tool_error",
        "message": "pick another note",
        "field": "text",
        "details": [],
    }
    internal = call(toolkit, "read_note", {"text": "boom"})
    assert internal.is_error and "secret" not in internal.text


def test_a_tool_is_defined_once_and_describes_itself() -> None:
    assert read_note.description == "Echo a note (a test tool)."
    assert read_note.input_schema()["properties"]["text"]["maxLength"] == 20
    assert read_note.annotations.to_mcp() == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    with pytest.raises(ConfigurationError, match="defined twice"):
        Toolkit(CLIENT, (*TOOLS, read_note), config=ToolkitConfig())


def test_an_alias_is_a_name_too_so_it_may_not_clash_and_follows_its_tool() -> None:
    echo = dataclasses.replace(read_note, name="echo_note", aliases=("read_note",))
    with pytest.raises(ConfigurationError, match="defined twice"):
        Toolkit(CLIENT, (read_note, echo), config=ToolkitConfig())
    aliased = dataclasses.replace(read_note, aliases=("show_note",))
    on = Toolkit(CLIENT, (aliased,), config=ToolkitConfig({"notes": {"read": True}}))
    assert call(on, "show_note", {"text": "hi"}).content == {"text": "hi"}
    assert [t.name for t in on.tools] == ["read_note"]
    off = Toolkit(CLIENT, (aliased,), config=ToolkitConfig())
    assert call(off, "show_note", {"text": "hi"}).content["error"] == "unknown_tool"
