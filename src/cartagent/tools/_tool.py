"""A tool: one typed async function, from which every adapter derives what it needs."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_type_hints

from pydantic import BaseModel

from ..money import Money

if TYPE_CHECKING:
    from ..paypal import AsyncPayPalClient
    from ..shopping import ShopClient

Args = TypeVar("Args", bound=BaseModel)


@dataclass(frozen=True)
class ToolAnnotations:
    """MCP tool annotations (hints a host uses to decide what needs confirmation)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = True

    def to_mcp(self) -> dict[str, bool]:
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


@dataclass
class ToolContext:
    """What a tool may use: the PayPal client, today's date (injectable for tests) and, for
    checkouts at another merchant, that merchant's protocol client."""

    client: AsyncPayPalClient
    today: Callable[[], date] = date.today
    merchant: ShopClient | None = None


@dataclass(frozen=True)
class Tool(Generic[Args]):
    """One tool. ``family``/``action`` are what the enablement config switches on and off.

    ``spend`` works out the money a call would move (for approval and spend limits; it may ask
    PayPal, e.g. an order's amount before capturing it); tools that move money or destroy data
    always pass the approval policy first. ``aliases`` are other names a call may use for it
    (PayPal's agent toolkit's name for the same operation): listings show ``name`` only.
    """

    name: str
    family: str
    action: str
    description: str
    args: type[Args]
    fn: Callable[[ToolContext, Args], Awaitable[dict[str, Any]]]
    annotations: ToolAnnotations
    moves_money: bool = False
    spend: Callable[[ToolContext, Args], Awaitable[Money | None]] | None = field(
        default=None, repr=False
    )
    aliases: tuple[str, ...] = ()

    @property
    def needs_approval(self) -> bool:
        return self.moves_money or self.annotations.destructive

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, self-contained (``$defs`` inline)."""
        return self.args.model_json_schema()

    async def run(self, context: ToolContext, args: Args) -> dict[str, Any]:
        return await self.fn(context, args)


def tool(
    *,
    family: str,
    action: str,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = True,
    moves_money: bool = False,
    spend: Callable[[ToolContext, Any], Awaitable[Money | None]] | None = None,
    aliases: tuple[str, ...] = (),
) -> Callable[[Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]], Tool[Any]]:
    """Turn ``async def verb_noun(ctx, args: ArgsModel) -> dict`` into a :class:`Tool`.

    The function's name is the tool's name, its docstring the description, and the type of its
    second parameter the argument model.
    """

    def wrap(fn: Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]) -> Tool[Any]:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__} must be an async function")
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        if len(params) != 2:
            raise TypeError(f"tool {fn.__name__} must take (ctx, args)")
        model = hints.get(params[1])
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"tool {fn.__name__}: args must be a pydantic model")
        description = inspect.cleandoc(fn.__doc__ or "")
        if not description:
            raise TypeError(f"tool {fn.__name__} needs a docstring: it is the description")
        return Tool(
            name=fn.__name__,
            family=family,
            action=action,
            description=description,
            args=model,
            fn=fn,
            annotations=ToolAnnotations(read_only, destructive, idempotent, open_world),
            moves_money=moves_money,
            spend=spend,
            aliases=aliases,
        )

    return wrap
