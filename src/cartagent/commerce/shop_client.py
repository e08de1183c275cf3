"""What an agent needs of a merchant, whichever protocol it speaks: :class:`ShopClient`.

:class:`~cartagent.commerce.acp.AcpClient` and :class:`~cartagent.commerce.ucp.client.UcpClient`
both satisfy it, so the toolkit's merchant tools and the assistant shop at either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..catalog.product import Product
from .acp.client import SessionView
from .checkout import Address, Contact

__all__ = ["ShopClient"]


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
