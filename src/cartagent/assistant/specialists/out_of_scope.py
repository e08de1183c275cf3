"""Out of scope: a clear, polite answer saying what the assistant can do; nothing else.

Greetings, thanks, goodbyes and "are you a bot?" (:mod:`..small_talk`) are answered as
such, not declined.
"""

from __future__ import annotations

from ..domains import Domain
from ..language import msg
from ..reply import Reply
from ..small_talk import reply
from ..specialist import TurnContext

__all__ = ["OutOfScopeSpecialist"]

ANSWER = msg(
    "Sorry, I can't help with that: I am this store's shopping assistant. I can find products "
    "and narrow them down (cheaper, another colour, a size), keep your cart, check out with "
    "PayPal, tell you where your order is, take a return, and answer questions about our "
    "shipping, returns, warranty and payment policies."
)


class OutOfScopeSpecialist:
    """Declines politely; calls nothing and changes nothing."""

    name = "out_of_scope"
    domain = Domain.OUT_OF_SCOPE
    tools: tuple[str, ...] = ()
    prompt: str | None = "out_of_scope.md"

    async def handle(self, turn: TurnContext) -> Reply:
        said = turn.reading.small_talk
        if said is None:
            return Reply(turn.messages.gettext(ANSWER), self.domain)
        items = sum(line.quantity for line in turn.conversation.cart)
        text = reply(said, merchant=turn.merchant, cart_items=items, tr=turn.messages)
        return Reply(text, self.domain)
