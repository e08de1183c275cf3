"""ACP's shapes that an agent sends and a merchant reads alike."""

from __future__ import annotations

from typing import Any

from ...addresses import Address, Contact

__all__ = ["fulfillment_details"]


def fulfillment_details(contact: Contact | None, address: Address | None) -> dict[str, Any]:
    """ACP ``FulfillmentDetails`` (empty when there is neither a contact nor an address)."""
    details: dict[str, Any] = {}
    if contact is not None:
        details |= {
            key: value
            for key, value in (
                ("name", contact.name),
                ("email", contact.email),
                ("phone_number", contact.phone),
            )
            if value
        }
    if address is not None:
        details["address"] = {
            "name": address.name,
            "line_one": address.line_one,
            **({"line_two": address.line_two} if address.line_two else {}),
            "city": address.city,
            "state": address.state,
            "country": address.country,
            "postal_code": address.postal_code,
        }
    return details
