"""The approval gate for money-moving and destructive tools, and spend limits."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..errors import ApprovalDenied, ApprovalRequired, SpendLimitExceeded
from ..money import Money
from ._tool import Tool


@dataclass(frozen=True)
class ApprovalRequest:
    """What the host is asked to approve."""

    tool: str
    arguments: dict[str, Any]
    amount: Money | None
    destructive: bool
    moves_money: bool


ApprovalCallback = Callable[[ApprovalRequest], bool | Awaitable[bool]]


@dataclass
class SpendLimits:
    """Per-call and cumulative limits per currency, e.g. ``per_call={"USD": Decimal("500")}``.

    A currency with no limit set is unlimited only if ``default_unlimited`` is true; by
    default a money-moving call in an unlisted currency is refused once any limit is set.
    """

    per_call: Mapping[str, Decimal] = field(default_factory=dict)
    total: Mapping[str, Decimal] = field(default_factory=dict)
    default_unlimited: bool = False
    spent: dict[str, Decimal] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.per_call or self.total)

    def check(self, tool: str, arguments: dict[str, Any], amount: Money) -> None:
        if not self.active:
            return
        cur = amount.currency
        if cur not in self.per_call and cur not in self.total and not self.default_unlimited:
            raise SpendLimitExceeded(
                f"no spend limit is configured for {cur}", tool=tool, arguments=arguments
            )
        if cur in self.per_call and amount.amount > self.per_call[cur]:
            raise SpendLimitExceeded(
                f"{amount} exceeds the per-call limit of {self.per_call[cur]} {cur}",
                tool=tool,
                arguments=arguments,
            )
        spent = self.spent.get(cur, Decimal(0))
        if cur in self.total and spent + amount.amount > self.total[cur]:
            raise SpendLimitExceeded(
                f"{amount} would bring the total to {spent + amount.amount} {cur}, over the "
                f"limit of {self.total[cur]} {cur}",
                tool=tool,
                arguments=arguments,
            )

    def record(self, amount: Money) -> None:
        self.spent[amount.currency] = self.spent.get(amount.currency, Decimal(0)) + amount.amount


def deny_all(request: ApprovalRequest) -> bool:
    """The default policy: nothing that moves money or destroys data runs unapproved."""
    return False


async def gate(
    tool: Tool[Any],
    arguments: dict[str, Any],
    amount: Money | None,
    approve: ApprovalCallback | None,
    limits: SpendLimits,
) -> None:
    """Raise unless ``tool`` may run with these arguments."""
    if amount is not None and tool.moves_money:
        limits.check(tool.name, arguments, amount)
    if not tool.needs_approval:
        return
    if approve is None:
        raise ApprovalRequired(
            f"{tool.name} needs approval and no approval callback is configured",
            tool=tool.name,
            arguments=arguments,
        )
    request = ApprovalRequest(
        tool.name, arguments, amount, tool.annotations.destructive, tool.moves_money
    )
    decision = approve(request)
    if inspect.isawaitable(decision):
        decision = await decision
    if decision is not True:
        raise ApprovalDenied(f"{tool.name} was not approved", tool=tool.name, arguments=arguments)
