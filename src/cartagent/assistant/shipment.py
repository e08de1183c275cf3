"""A paid order's shipment in words, from its PayPal trackers (shared by the shopper's orders
and the merchant's back office)."""

from __future__ import annotations

from typing import Any

__all__ = ["describe_shipping"]


def describe_shipping(trackers: list[dict[str, Any]] | None) -> str:
    """One line per tracker; ``None`` (trackers not read) and none at all are said too."""
    if trackers is None:
        return "Shipping: I could not read the shipment status right now."
    if not trackers:
        return "Shipping: not shipped yet; it usually leaves within one business day."
    rows = []
    for tracker in trackers:
        carrier = tracker.get("carrier_name_other") or tracker.get("carrier") or "the carrier"
        number = tracker.get("tracking_number") or "no tracking number"
        status = str(tracker.get("status") or "unknown").replace("_", " ").lower()
        rows.append(f"Shipping: {status} with {carrier}, tracking number {number}.")
    return "\n".join(rows)
