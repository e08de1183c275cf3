"""Typed PayPal REST client, sync and async, sharing one request core and one set of operations.

::

    with PayPalClient(client_id, secret, base_url=Environment.SANDBOX) as paypal:
        order = paypal.post("/v2/checkout/orders", body)
        paypal.post(api_path("/v2/checkout/orders/{}/capture", order["id"]))

Every write carries a ``PayPal-Request-Id`` (fresh, or ``idempotency_key``) that is reused on
each retry; errors are raised as ``cartagent.errors.PayPalError`` subclasses.
"""

from ._async import AsyncPayPalClient
from ._config import Credentials, Environment, RetryPolicy
from ._paths import api_path, path_segment
from ._sync import PayPalClient

__all__ = [
    "AsyncPayPalClient",
    "Credentials",
    "Environment",
    "PayPalClient",
    "RetryPolicy",
    "api_path",
    "path_segment",
]
