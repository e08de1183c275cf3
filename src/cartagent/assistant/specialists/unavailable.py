"""The stand-in for a domain this version does not serve yet: it says so, and does nothing.

Each use in ``specialists/__init__.py`` is replaced by that domain's real specialist when it
is built.
"""

from __future__ import annotations

from ..domains import Domain
from ..reply import Reply
from ..specialist import TurnContext

__all__ = ["NotAvailableYet"]

_SUBJECTS = {
    Domain.CART_CHECKOUT: "Checking out and changing your cart",
    Domain.ORDERS: "Order status and shipment tracking",
    Domain.RETURNS_REFUNDS: "Returns and refunds",
    Domain.BACK_OFFICE: "Merchant tasks (invoices, products, plans, disputes, transactions)",
    Domain.STORE_QUESTIONS: "Answering questions about the store's policies",
}


class NotAvailableYet:
    """Answers honestly that ``domain`` is not available in this version; no side effect."""

    tools: tuple[str, ...] = ()
    prompt: str | None = None

    def __init__(self, domain: Domain) -> None:
        if domain not in _SUBJECTS:
            raise ValueError(f"{domain.value} is served by a specialist of its own")
        self.domain = domain
        self.name = f"{domain.value}_not_available"

    async def handle(self, turn: TurnContext) -> Reply:
        return Reply(
            f"{_SUBJECTS[self.domain]} is not available in this version of the assistant "
            "yet. I can find products for you, show one of the results and add it to your "
            "cart.",
            self.domain,
        )
