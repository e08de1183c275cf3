"""Out of scope: a clear, polite answer saying what the assistant can do; nothing else.

Greetings, thanks and goodbyes (:mod:`..small_talk`) are answered as such, not declined.
"""

from __future__ import annotations

from ..domains import Domain
from ..reply import Reply
from ..small_talk import small_talk
from ..specialist import TurnContext

__all__ = ["OutOfScopeSpecialist"]

ANSWER = (
    "Sorry, I can't help with that: I am this store's shopping assistant. I can find products "
    "and narrow them down (cheaper, another colour, a size), keep your cart, check out with "
    "PayPal, tell you where your order is, take a return, and answer questions about our "
    "shipping, returns, warranty and payment policies."
)

SHOPPER_HELP = (
    "I am this store's shopping assistant: I can find products and narrow them down, keep "
    "your cart, check out with PayPal, tell you where your order is, take a return, and answer "
    "questions about shipping, returns, warranty and payment. What are you looking for?"
)
MERCHANT_HELP = (
    "I can show the store's sales, best sellers and recent orders, refund and ship orders, "
    "make and send invoices, set up plans and subscriptions, handle disputes, and search the "
    "catalog. What would you like to see?"
)


class OutOfScopeSpecialist:
    """Declines politely; calls nothing and changes nothing."""

    name = "out_of_scope"
    domain = Domain.OUT_OF_SCOPE
    tools: tuple[str, ...] = ()
    prompt: str | None = "out_of_scope.md"

    async def handle(self, turn: TurnContext) -> Reply:
        said = small_talk(turn.text)
        if said is None:
            return Reply(ANSWER, self.domain)
        if said == "greeting":
            return Reply(f"Hello! {MERCHANT_HELP if turn.merchant else SHOPPER_HELP}", self.domain)
        items = sum(line.quantity for line in turn.conversation.cart)
        waiting = (
            f" Your cart holds {items} item{'s' if items != 1 else ''}."
            if items and not turn.merchant
            else ""
        )
        if said == "thanks":
            return Reply(f"You're welcome!{waiting} Anything else I can help with?", self.domain)
        kept = f"{waiting[:-1]}, kept for when you come back." if waiting else ""
        return Reply(f"Goodbye, and thank you!{kept}", self.domain)
