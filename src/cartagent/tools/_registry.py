"""Every tool cartagent defines, gathered from the family modules."""

from __future__ import annotations

from typing import Any

from . import (
    disputes,
    insights,
    invoice_automation,
    invoices,
    orders,
    plans,
    products,
    recurring_invoices,
    refunds,
    subscriptions,
    tracking,
    transactions,
)
from ._tool import Tool

ALL_TOOLS: tuple[Tool[Any], ...] = (
    *orders.TOOLS,
    *refunds.TOOLS,
    *invoices.TOOLS,
    *recurring_invoices.TOOLS,
    *invoice_automation.TOOLS,
    *products.TOOLS,
    *plans.TOOLS,
    *subscriptions.TOOLS,
    *tracking.TOOLS,
    *disputes.TOOLS,
    *transactions.TOOLS,
    *insights.TOOLS,
)
