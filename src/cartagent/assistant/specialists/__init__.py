"""The specialists, one per domain. Adding one is a file here and one line in the tuple."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..specialist import Specialist
from ..store_catalog import CatalogOverview
from .back_office import BackOfficeSpecialist
from .checkout import CheckoutSpecialist
from .discovery import DiscoverySpecialist
from .orders import OrdersSpecialist
from .out_of_scope import OutOfScopeSpecialist
from .returns import ReturnsSpecialist
from .store_questions import StoreQuestionsSpecialist

if TYPE_CHECKING:
    from ...catalog import Product
    from ...retrieval.embeddings import Embedder
    from ..remote_checkout import Shopper

__all__ = [
    "SPECIALISTS",
    "BackOfficeSpecialist",
    "CheckoutSpecialist",
    "DiscoverySpecialist",
    "OrdersSpecialist",
    "OutOfScopeSpecialist",
    "ReturnsSpecialist",
    "StoreQuestionsSpecialist",
    "default_specialists",
]


def default_specialists(
    embedder: Embedder | None = None,
    *,
    return_url: str | None = None,
    shopper: Shopper | None = None,
    catalog: Iterable[Product] = (),
) -> tuple[Specialist, ...]:
    """One specialist per domain. ``embedder`` ranks the store's policies (pass the
    router's to share one model); ``return_url`` is where PayPal sends a shopper back after
    approving a payment. Checkout, orders and returns answer general questions ("how long do
    refunds take?") from the same policies. With ``shopper``, checkout happens at the
    toolkit's merchant (ACP) for that shopper. ``catalog`` (the products searched) answers
    "what do you sell?"."""
    policies = StoreQuestionsSpecialist(embedder)
    return (
        DiscoverySpecialist(overview=CatalogOverview.of(catalog)),
        CheckoutSpecialist(return_url=return_url, policies=policies, shopper=shopper),
        OrdersSpecialist(policies=policies),
        ReturnsSpecialist(policies=policies),
        BackOfficeSpecialist(),
        policies,
        OutOfScopeSpecialist(),
    )


SPECIALISTS: tuple[Specialist, ...] = default_specialists()
"""The default specialist for every domain."""
