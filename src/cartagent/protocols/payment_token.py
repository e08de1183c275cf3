"""What a PayPal payment token handed over a protocol can look like: checked before PayPal is
asked, by the merchant taking it and by the protocol shapes carrying it."""

from __future__ import annotations

import re

__all__ = ["is_payment_token"]

_TOKEN = re.compile(r"[0-9A-Za-z_-]{1,255}", re.ASCII)  # Orders v2's payment_source.token.id


def is_payment_token(value: str) -> bool:
    """Whether ``value`` can be a PayPal payment token at all (Orders v2's ``token.id``: 1 to
    255 letters, digits, ``-`` and ``_``); a protocol refuses anything else as the agent's
    mistake before PayPal is asked (PayPal would answer 400, a merchant bug)."""
    return _TOKEN.fullmatch(value) is not None
