"""The business's testing surface, for conformance suites and local development: off unless
the business is given a simulation secret (``UcpPolicy.simulation_secret``,
``cartagent merchant --simulation-secret``).

* **A test payment handler**, ``mock_payment_handler`` (``dev.ucp.testing.mock_payment``),
  offered beside PayPal: a token credential ``success_token`` pays, ``fail_token`` is
  declined (402); a card credential with the test card 4242 4242 4242 4242 pays, any other
  number is declined (card numbers are read, never stored or echoed). Nothing reaches PayPal:
  the order records a ``TEST-`` capture.
* **Simulated shipping**: ``POST /testing/simulate-shipping/{order_id}`` with the
  ``Simulation-Secret`` header (403 without it or with another) ships every line of the order:
  a ``shipped`` fulfillment event with a tracking number, and the platform's order webhook.
* **Order updates**: ``PUT {endpoint}/orders/{id}`` takes the order with new fulfillment
  ``events`` and ``adjustments`` (checked against the release's order schema, 422 otherwise),
  the stand-in for the business's own fulfillment and refund systems.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from typing import Any

from ..checkout import Bill, Checkout
from ..payment import PaymentDeclined, Receipt

__all__ = [
    "DECLINE_TOKEN",
    "HANDLER_ID",
    "HANDLER_NAME",
    "SECRET_HEADER",
    "SUCCESS_TOKEN",
    "handlers",
    "mock_charge",
    "secret_matches",
]

HANDLER_NAME = "dev.ucp.testing.mock_payment"
HANDLER_ID = "mock_payment_handler"
SUCCESS_TOKEN = "success_token"
DECLINE_TOKEN = "fail_token"
TEST_CARD = "4242424242424242"
SECRET_HEADER = "simulation-secret"
INSTRUMENT_TYPE = "card"


def handlers(version: str) -> dict[str, list[dict[str, Any]]]:
    """The test handler's declaration (v2026-04-08's shape, keyed by name)."""
    return {
        HANDLER_NAME: [
            {
                "id": HANDLER_ID,
                "version": version,
                "spec": "https://ucp.dev/specification/payment-handler-guide",
                "available_instruments": [{"type": INSTRUMENT_TYPE}],
                "config": {
                    "test_mode": True,
                    "success_token": SUCCESS_TOKEN,
                    "decline_token": DECLINE_TOKEN,
                },
            }
        ]
    }


def mock_charge(credential: Mapping[str, Any]) -> Callable[[Checkout, Bill], Receipt]:
    """How the test handler charges ``credential``: a receipt for :data:`SUCCESS_TOKEN` or
    :data:`TEST_CARD`, a decline otherwise."""
    pays = credential.get("token") == SUCCESS_TOKEN or credential.get("number") == TEST_CARD
    reason = "TEST_DECLINE" if credential.get("token") == DECLINE_TOKEN else "TEST_CARD_DECLINED"

    def charge(checkout: Checkout, bill: Bill) -> Receipt:
        if not pays:
            raise PaymentDeclined(reason)
        attempt = f"{checkout.id}-{checkout.payment.attempt}"
        return Receipt(paypal_order_id=f"TEST-{attempt}", capture_id=f"TEST-CAPTURE-{attempt}")

    return charge


def secret_matches(given: str | None, secret: str) -> bool:
    """Whether the ``Simulation-Secret`` header is the secret (compared in constant time)."""
    return given is not None and hmac.compare_digest(given.encode(), secret.encode())
