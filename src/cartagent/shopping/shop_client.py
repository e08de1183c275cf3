"""What an agent needs of a merchant, whichever protocol it speaks: :class:`ShopClient`.

:class:`~cartagent.shopping.acp.AcpClient` and :class:`~cartagent.shopping.ucp.UcpClient`
both satisfy it, so the toolkit's merchant tools and the assistant shop at either. A session
comes back as a :class:`SessionView` whichever protocol carried it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..addresses import Address, Contact
from ..catalog.product import Product
from ..money import Money

__all__ = ["SessionLine", "SessionView", "ShopClient"]


@dataclass(frozen=True)
class SessionLine:
    item_id: str
    name: str
    quantity: int
    unit_price: Money
    total: Money


@dataclass(frozen=True)
class SessionView:
    """A checkout session as the merchant last described it (``raw`` is the whole answer)."""

    id: str
    status: str
    currency: str
    lines: tuple[SessionLine, ...]
    totals: dict[str, Money]
    messages: tuple[dict[str, Any], ...]
    order: dict[str, Any] | None
    raw: dict[str, Any]

    @property
    def total(self) -> Money:
        return self.totals.get("total", Money.zero(self.currency))

    @property
    def ready(self) -> bool:
        return self.status == "ready_for_payment"

    @property
    def problems(self) -> list[str]:
        """The merchant's error messages, as text."""
        return [m["content"] for m in self.messages if m.get("type") == "error"]


class ShopClient(Protocol):
    base_url: str

    def products(self) -> list[Product]: ...

    def create(
        self,
        items: Sequence[tuple[str, int]],
        *,
        address: Address | None = None,
        contact: Contact | None = None,
        buyer: dict[str, str] | None = None,
    ) -> SessionView: ...

    def get(self, session_id: str) -> SessionView: ...

    def complete(
        self, session_id: str, payment_token: str, *, buyer: dict[str, str] | None = None
    ) -> SessionView: ...

    def cancel(self, session_id: str) -> SessionView: ...

    def close(self) -> None: ...
