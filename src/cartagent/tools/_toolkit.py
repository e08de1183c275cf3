"""The toolkit: the enabled tools plus the one way to call them safely."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from ..errors import ApprovalError, ConfigurationError, PayPalError, ToolError, field_problems
from ..money import Money
from ._approval import ApprovalCallback, SpendLimits, gate
from ._config import ToolkitConfig
from ._tool import Tool, ToolContext

if TYPE_CHECKING:
    from ..paypal import AsyncPayPalClient
    from ..shopping import ShopClient

log = logging.getLogger("cartagent.tools")


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer as a model sees it: compact JSON, flagged when it is an error."""

    content: dict[str, Any]
    is_error: bool = False

    @property
    def text(self) -> str:
        return orjson.dumps(self.content).decode()


def _validation_message(error: ValidationError) -> tuple[str, str | None, list[dict[str, Any]]]:
    found = field_problems(error, whole="(arguments)")
    text = "; ".join(f"{where}: {reason}" for where, reason in found)
    problems = [{"field": where, "reason": reason} for where, reason in found]
    return f"invalid arguments: {text}", found[0][0] if found else None, problems


class Toolkit:
    """The enabled subset of ``tools``, bound to a PayPal client and a safety policy.

    ``call`` never raises for anything a model or host can act on: bad arguments, refused
    approvals, spend limits and PayPal errors all come back as ``ToolResult(is_error=True)``
    with a message naming the field and the reason.
    """

    def __init__(
        self,
        client: AsyncPayPalClient,
        tools: Sequence[Tool[Any]],
        *,
        config: ToolkitConfig,
        approve: ApprovalCallback | None = None,
        limits: SpendLimits | None = None,
        today: Callable[[], date] = date.today,
        merchant: ShopClient | None = None,
    ) -> None:
        names = [n for t in tools for n in (t.name, *t.aliases)]
        duplicated = {n for n in names if names.count(n) > 1}
        if duplicated:
            raise ConfigurationError(f"tools defined twice: {sorted(duplicated)}")
        config.check_against((t.family, t.action) for t in tools)
        self._tools = {t.name: t for t in tools if config.enables(t.family, t.action)}
        self._aliases = {a: t.name for t in self._tools.values() for a in t.aliases}
        self._context = ToolContext(client=client, today=today, merchant=merchant)
        self._approve = approve
        self._limits = limits or SpendLimits()
        self._lock = asyncio.Lock()

    @property
    def tools(self) -> list[Tool[Any]]:
        return list(self._tools.values())

    def get(self, name: str) -> Tool[Any] | None:
        """The enabled tool called ``name``, or that has ``name`` as an alias."""
        return self._tools.get(self._aliases.get(name, name))

    async def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        tool = self.get(name)
        if tool is None:
            return ToolResult(
                {
                    "error": "unknown_tool",
                    "message": f"no enabled tool {name!r}",
                    "available": sorted(self._tools),
                },
                True,
            )
        raw = arguments or {}
        try:
            args = tool.args.model_validate(raw)
        except ValidationError as error:
            message, field, problems = _validation_message(error)
            return ToolResult(
                {
                    "error": "invalid_arguments",
                    "message": message,
                    "field": field,
                    "problems": problems,
                },
                True,
            )
        try:
            amount: Money | None = await tool.spend(self._context, args) if tool.spend else None
            # Spend checks and recording must not interleave between concurrent calls.
            async with self._lock if tool.moves_money else nullcontext():
                await gate(tool, raw, amount, self._approve, self._limits)
                content = await tool.run(self._context, args)
                if amount is not None and tool.moves_money:
                    self._limits.record(amount)
            return ToolResult(content)
        except ToolError as error:
            return ToolResult(
                {
                    "error": "tool_error",
                    "message": error.message,
                    "field": error.field,
                    "details": error.details,
                },
                True,
            )
        except ApprovalError as error:
            kind = type(error).__name__
            return ToolResult({"error": "approval", "kind": kind, "message": str(error)}, True)
        except PayPalError as error:
            return ToolResult(
                {
                    "error": "paypal",
                    "status": error.http_status,
                    "name": error.name,
                    "message": error.message,
                    "issues": [
                        {"issue": d.issue, "field": d.field, "description": d.description}
                        for d in error.details
                    ],
                    "debug_id": error.debug_id,
                },
                True,
            )
        except Exception:
            log.exception("tool %s failed unexpectedly", name)
            return ToolResult(
                {
                    "error": "internal",
                    "message": f"{name} failed unexpectedly; nothing more is known",
                },
                True,
            )

    def call_sync(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """``call`` for synchronous hosts (not from inside a running event loop)."""
        return asyncio.run(self.call(name, arguments))
