"""What a merchant's message says of a shipment: carrier, tracking number, status."""

from __future__ import annotations

import pytest

from cartagent.assistant.specialists.back_office.shipping import SHIPMENT, Shipment, read_shipment


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "ship order 5O190127TN364715T with UPS 1Z999AA10123456784",
            Shipment("SHIPPED", "UPS", None, "1Z999AA10123456784"),
        ),
        (
            "the last order went out via usps, tracking 9400111899223197428490",
            Shipment("SHIPPED", "USPS", None, "9400111899223197428490"),
        ),
        (
            "shipped the last order by Acme Couriers, tracking number: AC-123456",
            Shipment("SHIPPED", "OTHER", "Acme Couriers", None),
        ),
        (
            "dispatched order 5O190127TN364715T with Royal Mail tracking no. RM123456785GB",
            Shipment("SHIPPED", "ROYAL_MAIL", None, "RM123456785GB"),
        ),
        ("order 5O190127TN364715T was delivered", Shipment("DELIVERED")),
        (
            "the fedex parcel 612345678901 is in transit",
            Shipment("IN_TRANSIT", "FEDEX", None, "612345678901"),
        ),
    ],
)
def test_the_carrier_number_and_status_are_read(text: str, expected: Shipment) -> None:
    assert SHIPMENT.search(text) is not None
    assert read_shipment(text) == expected


def test_an_order_id_is_not_taken_for_the_tracking_number() -> None:
    assert read_shipment("ship order # 5O190127TN364715T via DHL").number is None
    assert read_shipment("ship 5O190127TN364715T via DHL").number is None
    assert read_shipment("ship 5O190127TN364715T via DHL 1234567890").number == "1234567890"
    assert SHIPMENT.search("sales this week") is None
