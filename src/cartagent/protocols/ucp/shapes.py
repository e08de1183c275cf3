"""UCP's shapes that a platform sends and a business reads alike: the one fulfillment method and
group cartagent uses, and a postal address."""

from __future__ import annotations

from typing import Any

from ...addresses import Address

__all__ = ["GROUP_ID", "METHOD_ID", "postal_address"]

METHOD_ID = "shipping"
GROUP_ID = "package_1"


def postal_address(address: Address) -> dict[str, Any]:
    """``address`` as ``types/postal_address.json``: the fields that are known."""
    first, _, last = address.name.partition(" ")
    fields = {
        "street_address": address.line_one,
        "extended_address": address.line_two,
        "address_locality": address.city,
        "address_region": address.state,
        "postal_code": address.postal_code,
        "address_country": address.country,
        "first_name": first,
        "last_name": last,
    }
    return {name: value for name, value in fields.items() if value}
