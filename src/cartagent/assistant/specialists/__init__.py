"""The specialists, one per domain. Adding one is a file here and one line in the tuple."""

from __future__ import annotations

from ..domains import Domain
from ..specialist import Specialist
from .checkout import CheckoutSpecialist
from .discovery import DiscoverySpecialist
from .orders import OrdersSpecialist
from .out_of_scope import OutOfScopeSpecialist
from .returns import ReturnsSpecialist
from .unavailable import NotAvailableYet

__all__ = [
    "SPECIALISTS",
    "CheckoutSpecialist",
    "DiscoverySpecialist",
    "NotAvailableYet",
    "OrdersSpecialist",
    "OutOfScopeSpecialist",
    "ReturnsSpecialist",
]

SPECIALISTS: tuple[Specialist, ...] = (
    DiscoverySpecialist(),
    CheckoutSpecialist(),
    OrdersSpecialist(),
    ReturnsSpecialist(),
    NotAvailableYet(Domain.BACK_OFFICE),
    NotAvailableYet(Domain.STORE_QUESTIONS),
    OutOfScopeSpecialist(),
)
"""The default specialist for every domain."""
