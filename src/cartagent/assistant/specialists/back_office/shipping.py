"""The back office's shipments on embedded defaults: "ship order 5O190127TN364715T with UPS
1Z999AA10123456784", "the last order went out via USPS, tracking 9400111899223197428490",
"order 5O190127TN364715T was delivered".

:func:`read_shipment` finds the carrier (PayPal's code for the common names; another name
after "via", "with" or "by" is ``OTHER`` with that name), the tracking number and the status
(shipped, unless the message says delivered, in transit, on hold, returned or cancelled).
:func:`ship` finds the payment as a refund does (an order id, a payment id, the last order),
adds the tracker, or changes the status of the one it already has; the shopper's "where is my
order" then shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...domains import Domain
from ...reply import Reply
from .payments import find_payment
from .subscriptions import failure

if TYPE_CHECKING:
    from ...specialist import TurnContext

__all__ = ["SHIPMENT", "Shipment", "read_shipment", "ship"]

SHIPMENT = re.compile(
    r"\b(?:ship(?:ped|s)?|dispatch(?:ed)?|tracking\s+(?:number|no|code|#)|delivered"
    r"|in\s+transit|went\s+out|posted|mailed)\b",
    re.IGNORECASE,
)
"""A message about sending a paid order: shipped, dispatched, a tracking number, delivered."""

_CARRIERS = {
    "ups": "UPS",
    "usps": "USPS",
    "us postal service": "USPS",
    "fedex": "FEDEX",
    "fed ex": "FEDEX",
    "dhl": "DHL",
    "royal mail": "ROYAL_MAIL",
    "canada post": "CANADA_POST",
    "australia post": "AUSTRALIA_POST",
}
_CARRIER = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in _CARRIERS) + r")\b", re.I)
_OTHER = re.compile(
    r"\b(?:via|with|by|using)\s+(?!(?:tracking|number|the|a|an|ups|usps|fedex|dhl)\b)"
    r"(?P<name>[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,3})"
)
_NUMBER = re.compile(
    r"\b(?:tracking\s*(?:number|no\.?|code|#)?|number|no\.|#)\s*:?\s*(?P<n>[A-Z0-9]{6,40})\b"
    r"|\b(?:ups|usps|fedex|dhl)\s+(?P<m>[A-Z0-9]{6,40})\b",
    re.IGNORECASE,
)
# Failing a labelled number, a long run of letters and digits, most of them digits.
_BARE_NUMBER = re.compile(r"\b(?=[A-Z0-9]*(?:\d[A-Z]*){6})[A-Z0-9]{8,40}\b", re.IGNORECASE)
_ID_LENGTH = 17
_STATUSES = (
    ("DELIVERED", re.compile(r"\bdelivered\b", re.I)),
    ("IN_TRANSIT", re.compile(r"\bin\s+transit\b", re.I)),
    ("ON_HOLD", re.compile(r"\bon\s+hold\b", re.I)),
    ("RETURNED", re.compile(r"\breturned\b", re.I)),
    ("CANCELLED", re.compile(r"\bcancell?ed\b", re.I)),
)


@dataclass(frozen=True)
class Shipment:
    """What a message says of a shipment: carrier code (with a name for ``OTHER``), tracking
    number and status; the carrier and number are ``None`` when not said."""

    status: str
    carrier: str | None = None
    carrier_name: str | None = None
    number: str | None = None


def read_shipment(text: str) -> Shipment:
    """The carrier, tracking number and status ``text`` gives."""
    status = next((s for s, pattern in _STATUSES if pattern.search(text)), "SHIPPED")
    carrier, name = None, None
    known = _CARRIER.search(text)
    if known is not None:
        carrier = _CARRIERS[" ".join(known.group().casefold().split())]
    else:
        other = _OTHER.search(text)
        if other is not None:
            carrier, name = "OTHER", other["name"]
    labelled = [(m["n"] or m["m"]).upper() for m in _NUMBER.finditer(text)]
    # A bare run shaped like a PayPal id (17 letters and digits) is the order, not a parcel.
    bare = [m.group().upper() for m in _BARE_NUMBER.finditer(text) if len(m.group()) != _ID_LENGTH]
    number = next(
        (
            found
            for found in (*labelled, *bare)
            if any(c.isdigit() for c in found) and not _is_order_id(found, text)
        ),
        None,
    )
    return Shipment(status, carrier, name, number)


def _is_order_id(candidate: str, text: str) -> bool:
    """Whether ``candidate`` is the order or payment id the message names ("order <id>")."""
    named = rf"\b(?:order|payment|capture|transaction)\s+(?:id\s+|#\s*)?{candidate}\b"
    return re.search(named, text, re.IGNORECASE) is not None


def _reply(text: str, **data: Any) -> Reply:
    return Reply(text, Domain.BACK_OFFICE, data=data)


async def ship(turn: TurnContext) -> Reply:
    """Add (or update) the tracker ``turn`` describes on the payment it names."""
    shipment = read_shipment(turn.text)
    payment = await find_payment(turn, verb="ship", besides=(shipment.number,))
    if isinstance(payment, str):
        return _reply(payment)
    found = await turn.call("get_shipment_tracking", {"transaction_id": payment.capture_id})
    if found.is_error:
        return _reply(f"I could not read the shipments of {payment.label}: {failure(found)}.")
    trackers = [t for t in found.content.get("trackers") or [] if isinstance(t, dict)]
    same = [t for t in trackers if shipment.number in (None, t.get("tracking_number"))]
    if same and (shipment.number is not None or shipment.status != "SHIPPED"):
        tracker = same[-1]
        changed = await turn.call(
            "update_shipment_tracking",
            {
                "transaction_id": payment.capture_id,
                "tracking_number": tracker.get("tracking_number"),
                "status": shipment.status,
            },
        )
        if changed.is_error:
            return _reply(f"I could not update the shipment: {failure(changed)}.")
        return _said(payment.label_start, changed.content, "is now")
    if shipment.carrier is None or shipment.number is None:
        missing = " and ".join(
            what
            for what, given in (("carrier", shipment.carrier), ("tracking number", shipment.number))
            if given is None
        )
        return _reply(
            f"Which {missing}? Say, for example, 'ship {payment.label} with UPS "
            "1Z999AA10123456784'."
        )
    arguments: dict[str, Any] = {
        "transaction_id": payment.capture_id,
        "tracking_number": shipment.number,
        "carrier": shipment.carrier,
        "status": shipment.status,
    }
    if shipment.carrier_name:
        arguments["carrier_name_other"] = shipment.carrier_name
    added = await turn.call("create_shipment_tracking", arguments)
    if added.is_error:
        return _reply(f"I could not add the tracking to {payment.label}: {failure(added)}.")
    return _said(payment.label_start, added.content, "has tracking")


def _said(label: str, tracker: dict[str, Any], verb: str) -> Reply:
    carrier = tracker.get("carrier_name_other") or tracker.get("carrier")
    status = str(tracker.get("status") or "").replace("_", " ").lower()
    text = (
        f"{label} {verb}: {carrier} {tracker.get('tracking_number')}, "
        f"{status}. The buyer sees it when they ask where their order is."
    )
    return _reply(
        text,
        tracker_id=tracker.get("tracker_id"),
        status=tracker.get("status"),
        capture_id=tracker.get("transaction_id"),
    )
