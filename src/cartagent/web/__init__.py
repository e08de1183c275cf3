"""The assistant over HTTP: a FastAPI app with API-key principals and Server-Sent Events.

``create_api(assistant, keys)`` is the ASGI app; ``load_keys(path)`` reads a keys file and
``write_demo_keys(path)`` creates one with a random shopper key and a random merchant key.
``cartagent serve`` runs it (with the local PayPal sandbox beside it).
"""

from __future__ import annotations

from .api import MAX_BODY_BYTES, create_api
from .auth import ApiKeys, Principal, Role, load_keys, write_demo_keys

__all__ = [
    "MAX_BODY_BYTES",
    "ApiKeys",
    "Principal",
    "Role",
    "create_api",
    "load_keys",
    "write_demo_keys",
]
