"""Shipment tracking: add a tracking number to a captured payment, show it, update it."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import Field

from ..errors import ToolError
from ..paypal import api_path
from ._models import Args, PayPalId, id_field
from ._tool import ToolContext, tool

BASE = "/v1/shipping/trackers"
TRACKER_FIELDS = (
    "transaction_id",
    "tracking_number",
    "status",
    "carrier",
    "carrier_name_other",
    "shipment_date",
    "notify_buyer",
)
Status = Literal[
    "SHIPPED", "ON_HOLD", "DELIVERED", "CANCELLED", "LOCAL_PICKUP", "IN_TRANSIT", "RETURNED"
]


def _summary(tracker: dict[str, Any]) -> dict[str, Any]:
    keys = (*TRACKER_FIELDS, "last_updated_time")
    summary = {k: tracker[k] for k in keys if k in tracker}
    summary["tracker_id"] = f"{tracker['transaction_id']}-{tracker.get('tracking_number')}"
    return summary


class TrackerKey(Args):
    transaction_id: PayPalId = id_field(
        "The PayPal capture (transaction) id of the shipped payment.", max_length=50
    )
    tracking_number: PayPalId = id_field("The carrier's tracking number.", max_length=64)


def _tracker(args: TrackerKey) -> str:
    """A tracker's path: its id is the transaction id and the tracking number, joined by '-'."""
    return api_path(BASE + "/{}", f"{args.transaction_id}-{args.tracking_number}")


class CarrierFields(Args):
    carrier_name_other: str | None = Field(
        default=None, description="The carrier's name when carrier is OTHER.", max_length=64
    )
    notify_buyer: bool | None = Field(
        default=None, description="E-mail the buyer the tracking details."
    )
    shipment_date: date | None = Field(default=None, description="Date shipped, YYYY-MM-DD.")


class CreateTrackingArgs(CarrierFields, TrackerKey):
    carrier: str = Field(
        description="PayPal carrier code, e.g. USPS, UPS, FEDEX, DHL; OTHER with "
        "carrier_name_other.",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Z0-9_]+$",
    )
    status: Status = Field(default="SHIPPED", description="Shipment status.")


def _field(detail_field: str | None) -> str | None:
    """``/trackers/0/carrier`` → ``carrier``."""
    if not detail_field:
        return None
    return detail_field.rstrip("/").rsplit("/", 1)[-1] or None


@tool(family="tracking", action="create")
async def create_shipment_tracking(ctx: ToolContext, args: CreateTrackingArgs) -> dict[str, Any]:
    """Add shipment tracking (carrier and tracking number) to a captured PayPal payment."""
    if args.carrier == "OTHER" and not args.carrier_name_other:
        raise ToolError("carrier OTHER needs the carrier's name", field="carrier_name_other")
    tracker = args.model_dump(exclude_none=True, mode="json")
    result = await ctx.client.post(f"{BASE}-batch", {"trackers": [tracker]})
    errors = result.get("errors") or []
    if errors:
        error = errors[0]
        details = error.get("details") or [{}]
        issue = details[0].get("issue")
        text = details[0].get("description") or error.get("message") or "tracker refused"
        raise ToolError(
            f"{issue}: {text}" if issue else text,
            field=_field(details[0].get("field")),
            details=details,
        )
    return _summary(await ctx.client.get(_tracker(args)))


class GetTrackingArgs(Args):
    transaction_id: PayPalId = id_field("The capture (transaction) id.", max_length=50)
    tracking_number: PayPalId | None = id_field(
        "Only this tracking number.", max_length=64, default=None
    )


@tool(family="tracking", action="get", read_only=True, idempotent=True)
async def get_shipment_tracking(ctx: ToolContext, args: GetTrackingArgs) -> dict[str, Any]:
    """Show the shipment trackers of a captured payment."""
    params = {"transaction_id": args.transaction_id}
    if args.tracking_number:
        params["tracking_number"] = args.tracking_number
    found = await ctx.client.get(BASE, params=params)
    return {"trackers": [_summary(t) for t in found.get("trackers", [])]}


class UpdateTrackingArgs(CarrierFields, TrackerKey):
    status: Status | None = Field(default=None, description="New shipment status.")
    carrier: str | None = Field(
        default=None,
        description="New PayPal carrier code.",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Z0-9_]+$",
    )


@tool(family="tracking", action="update", idempotent=True)
async def update_shipment_tracking(ctx: ToolContext, args: UpdateTrackingArgs) -> dict[str, Any]:
    """Change a tracker's status, carrier, shipment date or buyer notification."""
    changes = args.model_dump(exclude_none=True, mode="json", exclude=set(TrackerKey.model_fields))
    if not changes:
        raise ToolError("nothing to change: give status, carrier or another field", field="status")
    path = _tracker(args)
    current = await ctx.client.get(path)
    # PUT replaces the whole tracker, so send what is there with the changes on top.
    body = {k: current[k] for k in TRACKER_FIELDS if k in current}
    body.update(changes)
    await ctx.client.put(path, body)
    return _summary(await ctx.client.get(path))


TOOLS = (create_shipment_tracking, get_shipment_tracking, update_shipment_tracking)
