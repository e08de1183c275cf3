"""A local, stateful, PayPal-compatible REST sandbox.

It is the oracle the rest of cartagent is tested against, so it imports nothing else of
cartagent and re-derives PayPal's rules on its own.
"""

from __future__ import annotations

from .app import create_app, ensure_merchant, open_sandbox
from .clock import Clock
from .ids import IdFactory
from .state import Sandbox

__all__ = ["Clock", "IdFactory", "Sandbox", "create_app", "ensure_merchant", "open_sandbox"]
