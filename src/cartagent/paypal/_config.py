"""Where the client talks to, as whom, and how hard it retries."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from enum import StrEnum

from cartagent.errors import ConfigurationError

__all__ = ["DEFAULT_RETRY", "Credentials", "Environment", "RetryPolicy"]


class Environment(StrEnum):
    """PayPal's REST base URLs; any other base URL (a local sandbox) works as a plain ``str``."""

    LIVE = "https://api-m.paypal.com"
    SANDBOX = "https://api-m.sandbox.paypal.com"


@dataclass(frozen=True)
class Credentials:
    """A REST app's client id and secret (the secret stays out of ``repr``)."""

    client_id: str
    client_secret: str = field(repr=False)

    def __post_init__(self) -> None:
        if not self.client_id or not self.client_secret:
            raise ConfigurationError("PayPal client id and client secret are both required")

    def basic_authorization(self) -> str:
        pair = f"{self.client_id}:{self.client_secret}".encode()
        return "Basic " + base64.b64encode(pair).decode()


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter for 429, 5xx and transport errors.

    ``max_attempts`` counts the first try. A ``Retry-After`` longer than ``max_retry_after``
    is not waited out: the error is raised instead of blocking the caller for minutes.
    """

    max_attempts: int = 3
    base_delay: float = 0.2
    max_delay: float = 5.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError("RetryPolicy.max_attempts must be at least 1")
        if min(self.base_delay, self.max_delay, self.max_retry_after) < 0:
            raise ConfigurationError("RetryPolicy delays must not be negative")

    def backoff(self, attempt: int, rand: float) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based); ``rand`` in [0, 1)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + rand / 2)


DEFAULT_RETRY = RetryPolicy()
