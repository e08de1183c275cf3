"""A local, stateful, PayPal-compatible REST sandbox.

It is the oracle the rest of cartagent is tested against, so it re-derives PayPal's rules on
its own and imports nothing of the client it tests: of the rest of cartagent only the
outbound-URL guard (:mod:`cartagent.outbound`, for its webhooks), the request body limit
(:mod:`cartagent.body_limit`; the client uses neither) and the exception classes.
"""

from __future__ import annotations

from .app import create_app, ensure_merchant, open_sandbox
from .clock import Clock
from .ids import IdFactory
from .state import Sandbox

__all__ = ["Clock", "IdFactory", "Sandbox", "create_app", "ensure_merchant", "open_sandbox"]
