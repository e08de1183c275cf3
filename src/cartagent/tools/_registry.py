"""Every tool cartagent defines, gathered from the family modules."""

from __future__ import annotations

from typing import Any

from . import invoices, orders, refunds
from ._tool import Tool

ALL_TOOLS: tuple[Tool[Any], ...] = (*orders.TOOLS, *invoices.TOOLS, *refunds.TOOLS)
