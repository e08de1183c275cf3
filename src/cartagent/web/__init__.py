"""The assistant over HTTP: a FastAPI app with API-key principals and Server-Sent Events.

``create_api(assistant, keys)`` is the ASGI app; ``load_keys(path)`` reads a keys file and
``write_demo_keys(path)`` creates one with a random shopper key and a random merchant key.
``GuestTokens`` signs the tokens of shoppers without a key (its secret kept by
``guest_secret(path)``). The same app serves the web app's pages: ``/shop`` and ``/merchant``.
``cartagent serve`` runs it (with the local PayPal sandbox beside it).
"""

from __future__ import annotations

from .api import MAX_BODY_BYTES, create_api
from .auth import ApiKeys, Principal, Role, load_keys, write_demo_keys
from .guest import GuestTokens, guest_secret

__all__ = [
    "MAX_BODY_BYTES",
    "ApiKeys",
    "GuestTokens",
    "Principal",
    "Role",
    "create_api",
    "guest_secret",
    "load_keys",
    "write_demo_keys",
]
