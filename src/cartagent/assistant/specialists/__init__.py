"""The specialists, one per domain. Adding one is a file here and one line in the tuple."""

from __future__ import annotations

from ..domains import Domain
from ..specialist import Specialist
from .discovery import DiscoverySpecialist
from .out_of_scope import OutOfScopeSpecialist
from .unavailable import NotAvailableYet

__all__ = ["SPECIALISTS", "DiscoverySpecialist", "NotAvailableYet", "OutOfScopeSpecialist"]

SPECIALISTS: tuple[Specialist, ...] = (
    DiscoverySpecialist(),
    NotAvailableYet(Domain.CART_CHECKOUT),
    NotAvailableYet(Domain.ORDERS),
    NotAvailableYet(Domain.RETURNS_REFUNDS),
    NotAvailableYet(Domain.BACK_OFFICE),
    NotAvailableYet(Domain.STORE_QUESTIONS),
    OutOfScopeSpecialist(),
)
"""The default specialist for every domain."""
