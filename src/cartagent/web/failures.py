"""What an HTTP client is told when a turn fails: a status and a clear message, never a trace."""

from __future__ import annotations

from ..assistant import ConversationConflict, UnknownSession
from ..errors import ModelError, PayPalError

__all__ = ["CONFLICT", "NOT_FOUND", "failure"]

NOT_FOUND = "no such session"
CONFLICT = "another message on this session is being answered; retry"


def failure(error: BaseException) -> tuple[int, str]:
    """The status and message for ``error`` (500 for anything unexpected)."""
    if isinstance(error, UnknownSession):
        return 404, NOT_FOUND
    if isinstance(error, ConversationConflict):
        return 409, CONFLICT
    if isinstance(error, ModelError):
        return 502, "the language model did not answer; try again"
    if isinstance(error, PayPalError):
        return 502, "the payments service failed this request; try again"
    return 500, "internal error: the message was not answered"
