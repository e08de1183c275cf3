"""Merchant insights: a period's sales or orders, cut into intervals (``/v1/merchant/insights``).

PayPal's agent toolkit calls this on live PayPal only; cartagent's sandbox serves it from its own
ledger and orders, so the tool works against both.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from ._models import Args
from ._tool import ToolContext, tool


class InsightsArgs(Args):
    start_date: date = Field(description="First day, YYYY-MM-DD.")
    end_date: date = Field(description="Last day, YYYY-MM-DD (included).")
    insight_type: Literal["SALES", "ORDERS"] = Field(
        default="SALES", description="SALES: money in and out; ORDERS: checkout orders."
    )
    time_interval: Literal["DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"] = Field(
        default="MONTHLY", description="How the period is cut up."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end_date < self.start_date:
            raise ValueError("end_date is before start_date")
        return self


@tool(family="insights", action="get", read_only=True, idempotent=True)
async def get_merchant_insights(ctx: ToolContext, args: InsightsArgs) -> dict[str, Any]:
    """Sales (money in, refunds, fees, net) or orders (created, completed, average value) for a
    period, per day, week, month, quarter or year and in total, per currency."""
    params = {
        "start_date": args.start_date.isoformat(),
        "end_date": args.end_date.isoformat(),
        "insight_type": args.insight_type,
        "time_interval": args.time_interval,
    }
    answer: dict[str, Any] = await ctx.client.get("/v1/merchant/insights", params=params)
    return answer


TOOLS = (get_merchant_insights,)
