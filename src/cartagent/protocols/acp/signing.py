"""ACP request signatures as cartagent's merchant checks them and its agents make them: an
HMAC-SHA256 over the ``Timestamp`` and the canonical JSON body, sent as ``Signature``."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson

__all__ = ["sign"]


def _canonical(body: Any) -> bytes:
    return b"" if body is None else orjson.dumps(body, option=orjson.OPT_SORT_KEYS)


def sign(secret: str, timestamp: str, body: Any) -> str:
    """The ``Signature`` header for ``body`` sent at ``timestamp``."""
    digest = hmac.new(
        secret.encode(), timestamp.encode() + b"." + _canonical(body), hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
