"""A toolkit with every registered tool, on the in-process sandbox."""

from __future__ import annotations

from datetime import date

import pytest

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ALL_TOOLS, Toolkit, ToolkitConfig

TODAY = date(2026, 11, 21)
ITEMS = [{"name": "Mug", "quantity": 2, "unit_price": "12.50"}]


@pytest.fixture
def toolkit(paypal_client: AsyncPayPalClient) -> Toolkit:
    known = [(t.family, t.action) for t in ALL_TOOLS]
    config = ToolkitConfig.everything(known)
    return Toolkit(paypal_client, ALL_TOOLS, config=config, today=lambda: TODAY)
