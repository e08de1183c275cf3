"""Consent: the only way a money-moving or destructive tool call is approved in the assistant.

The assistant's toolkit is built with :func:`approve_granted` as its approval callback. A
specialist that has an explicit "yes" from the shopper in this turn runs the call inside
``with granting(Grant(...))``; the grant names the tool, the one argument that identifies
what is acted on (the order, the capture) and the most money it may move. Anything else a
model asks for (a capture it was never told to make, a bigger refund, another order) is
refused by the toolkit, in both modes: money never moves on a model's say-so.

Grants live in a context variable, so concurrent turns of different sessions sharing one
toolkit never see each other's grants.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..money import Money
from ..tools import ApprovalRequest

__all__ = ["Grant", "approve_granted", "granting"]


@dataclass(frozen=True)
class Grant:
    """Approval for ``tool`` acting on ``arguments[key] == value``, moving at most ``limit``."""

    tool: str
    key: str
    value: str
    limit: Money | None = None

    def covers(self, request: ApprovalRequest) -> bool:
        if request.tool != self.tool or str(request.arguments.get(self.key)) != self.value:
            return False
        if not request.moves_money:
            return True
        if request.amount is None or self.limit is None:
            return False  # money of an unknown amount, or a grant that bounds none
        return (
            request.amount.currency == self.limit.currency
            and request.amount.amount <= self.limit.amount
        )


_granted: ContextVar[tuple[Grant, ...]] = ContextVar("cartagent_consent", default=())


@contextmanager
def granting(*grants: Grant) -> Iterator[None]:
    """Approve exactly ``grants`` for the calls made inside the block."""
    token = _granted.set(_granted.get() + grants)
    try:
        yield
    finally:
        _granted.reset(token)


def approve_granted(request: ApprovalRequest) -> bool:
    """The assistant toolkit's approval callback: yes only under a matching grant."""
    return any(grant.covers(request) for grant in _granted.get())
