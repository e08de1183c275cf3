"""Request paths with outside values in them, built one way.

An id in a path may come from a model, a shopper or an earlier answer. Each one is encoded as
exactly one path segment, so ``../../v1/billing/plans`` or ``X/capture?y#z`` can never reach
another endpoint: separators, ``?``, ``#`` and ``%`` are percent-encoded, and the segments that
mean "this folder" or "the parent" are refused outright (percent-encoding leaves dots alone).
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["ORDER", "ORDERS", "ORDER_CAPTURE", "api_path", "path_segment"]

ORDERS = "/v2/checkout/orders"
ORDER = ORDERS + "/{}"
ORDER_CAPTURE = ORDER + "/capture"

MAX_SEGMENT = 255
_DOT_SEGMENTS = frozenset({".", ".."})


def path_segment(value: str) -> str:
    """``value`` percent-encoded as one path segment; ``ValueError`` if it cannot be one."""
    if not isinstance(value, str):
        raise ValueError(f"a path segment must be a string, not {type(value).__name__}")
    if not value:
        raise ValueError("a path segment cannot be empty")
    if len(value) > MAX_SEGMENT:
        raise ValueError(f"a path segment is at most {MAX_SEGMENT} characters")
    if value in _DOT_SEGMENTS:
        raise ValueError(f"{value!r} is not an id")
    return quote(value, safe="")


def api_path(template: str, *values: str) -> str:
    """``template`` with each ``{}`` replaced by the next value, encoded by :func:`path_segment`.

    ``api_path("/v2/checkout/orders/{}/capture", order_id)``. The template is code, never
    input: only the values are encoded.
    """
    parts = template.split("{}")
    if len(parts) != len(values) + 1:
        raise ValueError(f"{template!r} has {len(parts) - 1} placeholders, given {len(values)}")
    encoded = [path_segment(v) for v in values]
    return parts[0] + "".join(seg + rest for seg, rest in zip(encoded, parts[1:], strict=True))
