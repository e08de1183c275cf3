"""What a running sandbox holds: its store, clock, id factory and signing keys."""

from __future__ import annotations

from dataclasses import dataclass, field

from .clock import Clock
from .ids import IdFactory
from .store import Store


@dataclass
class Sandbox:
    store: Store
    clock: Clock = field(default_factory=Clock)
    ids: IdFactory = field(default_factory=IdFactory)
    token_key: bytes = b""
    token_ttl_seconds: int = 32400
    buyer_email: str = "sb-buyer@personal.example.com"
