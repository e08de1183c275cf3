"""The merchant's back office: invoices (drafted, previewed, sent), payments and refunds,
sales, shipping and subscriptions, each family in its module; :class:`BackOfficeSpecialist`
routes a merchant's turn to them."""

from __future__ import annotations

from .specialist import BackOfficeSpecialist

__all__ = ["BackOfficeSpecialist"]
