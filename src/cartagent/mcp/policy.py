"""What an MCP server exposes and allows.

MCP gives the server no synchronous human to ask, so the policy fails closed: read-only tools
are on, anything else only when ``actions`` turns it on, and tools that move money or destroy
data are refused at call time unless money moving is explicitly allowed; when it is, spend
limits still apply and at least one must be set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..money import CURRENCY_DECIMALS
from ..tools import ALL_TOOLS, ApprovalRequest, SpendLimits, Tool, Toolkit, ToolkitConfig

if TYPE_CHECKING:
    from ..paypal import AsyncPayPalClient


def load_actions(value: str) -> dict[str, Any]:
    """``--actions``: inline JSON (``{"orders": {"create": true}}``) or a path to a JSON file."""
    text = value if value.lstrip().startswith(("{", "[")) else _read(value)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigurationError(f"actions are not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ConfigurationError("actions must be a JSON object")
    return data


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as error:
        raise ConfigurationError(f"cannot read actions file {path!r}: {error.strerror}") from None


def read_only_config(
    tools: Iterable[Tool[Any]], actions: Mapping[str, Any] | None = None
) -> ToolkitConfig:
    """Every read-only tool on, then ``actions`` on top (``false`` there turns one off)."""
    tools = list(tools)
    merged: dict[str, dict[str, bool]] = {}
    for t in tools:
        if t.annotations.read_only:
            merged.setdefault(t.family, {})[t.action] = True
    if actions:
        extra = ToolkitConfig.from_mapping(actions)
        extra.check_against((t.family, t.action) for t in tools)
        for family, entries in extra.actions.items():
            merged.setdefault(family, {}).update(entries)
    return ToolkitConfig(merged)


def parse_limits(per_call: Sequence[str] = (), total: Sequence[str] = ()) -> SpendLimits:
    """``["USD=100", "EUR=80"]`` per call and in total into :class:`SpendLimits`."""
    return SpendLimits(per_call=_amounts(per_call), total=_amounts(total))


def _amounts(entries: Sequence[str]) -> dict[str, Decimal]:
    limits: dict[str, Decimal] = {}
    for entry in entries:
        currency, equals, amount = entry.partition("=")
        currency = currency.strip().upper()
        if not equals or currency not in CURRENCY_DECIMALS:
            raise ConfigurationError(
                f"spend limit {entry!r}: expected CURRENCY=AMOUNT, e.g. USD=100"
            )
        try:
            value = Decimal(amount.strip())
        except InvalidOperation:
            raise ConfigurationError(f"spend limit {entry!r}: {amount!r} is not a number") from None
        if not value.is_finite() or value < 0:
            raise ConfigurationError(f"spend limit {entry!r}: the amount must be 0 or more")
        limits[currency] = value
    return limits


def _allow(request: ApprovalRequest) -> bool:
    return True


def build_toolkit(
    client: AsyncPayPalClient,
    *,
    actions: Mapping[str, Any] | None = None,
    allow_money_moving: bool = False,
    limits: SpendLimits | None = None,
    tools: Sequence[Tool[Any]] = ALL_TOOLS,
) -> Toolkit:
    """The toolkit an MCP server serves, under the policy described in this module."""
    limits = limits or SpendLimits()
    toolkit = Toolkit(
        client,
        tools,
        config=read_only_config(tools, actions),
        # No callback: gated tools answer "needs approval" rather than running.
        approve=_allow if allow_money_moving else None,
        limits=limits,
    )
    movers = [t.name for t in toolkit.tools if t.moves_money]
    if allow_money_moving and movers and not limits.active:
        raise ConfigurationError(
            f"money moving is allowed for {', '.join(movers)} but no spend limit is set; "
            "set a per-call or total limit for each currency these tools may use"
        )
    return toolkit


def refused_tools(toolkit: Toolkit, allow_money_moving: bool) -> list[str]:
    """Enabled tools every call of which will be refused (for a startup warning)."""
    if allow_money_moving:
        return []
    return [t.name for t in toolkit.tools if t.needs_approval]
