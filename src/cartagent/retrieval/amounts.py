"""Amounts in option values, in one unit per dimension: "1.5 liters" is 1500 ml, "1TB" is 1000
GB, "25ft" is 300 inches; so that values written differently compare ("at least 750ml", "which
one holds more?")."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

__all__ = ["Amount", "amount", "same_amount", "units"]

Amount = tuple[str, float]
"""(dimension, number in that dimension's unit): ("ml", 1500.0)."""

_UNIT_SCALE: Mapping[str, Amount] = {
    "ml": ("ml", 1.0), "l": ("ml", 1000.0), "liter": ("ml", 1000.0), "liters": ("ml", 1000.0),
    "litre": ("ml", 1000.0), "litres": ("ml", 1000.0), "oz": ("oz", 1.0),
    "gb": ("gb", 1.0), "tb": ("gb", 1000.0), "mb": ("gb", 0.001), "gig": ("gb", 1.0),
    "gigs": ("gb", 1.0), "mah": ("mah", 1.0), "cup": ("cup", 1.0), "cups": ("cup", 1.0),
    "hour": ("hour", 1.0), "hours": ("hour", 1.0), "hrs": ("hour", 1.0), "h": ("hour", 1.0),
    "inch": ("inch", 1.0), "inches": ("inch", 1.0), "ft": ("inch", 12.0), "feet": ("inch", 12.0),
    "cm": ("inch", 1 / 2.54), "lb": ("lb", 1.0), "lbs": ("lb", 1.0), "kg": ("lb", 2.20462),
    "mp": ("mp", 1.0), "w": ("w", 1.0), "watts": ("w", 1.0), "bar": ("bar", 1.0),
}  # fmt: skip
_AMOUNT = re.compile(r"(\d+(?:[.,]\d+)?)\s*-?\s*([a-z]+)?", re.IGNORECASE)


def amount(value: str) -> Amount | None:
    """ "1.5 liters" -> ("ml", 1500.0), "4 cups" -> ("cup", 4.0); ``None`` for a value with
    no number, or with letters before it ("i7", "IPX7": names, not amounts)."""
    match = _AMOUNT.search(value)
    if match is None or value[: match.start()].strip(" ~≈"):
        return None
    number = float(match.group(1).replace(",", "."))
    unit = (match.group(2) or "").casefold()
    dimension, scale = _UNIT_SCALE.get(unit, (unit, 1.0))
    return dimension, number * scale


def units(value: str) -> list[str]:
    """The units ``value`` writes its amounts in: "4 cups" -> ["cups"], "1000ml" -> ["ml"]."""
    return [match.group(2) for match in _AMOUNT.finditer(value) if match.group(2)]


def same_amount(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one amount written in two units ("1 l" and "1000ml", "2 ft"
    and "24 inches"): each a single number with a unit this module knows, of one dimension."""
    found = []
    for value in (a, b):
        matches = list(_AMOUNT.finditer(value))
        unit = (matches[0].group(2) or "").casefold() if len(matches) == 1 else ""
        if unit not in _UNIT_SCALE:
            return False
        found.append(amount(value))
    first, second = found
    if first is None or second is None or first[0] != second[0]:
        return False
    return math.isclose(first[1], second[1], rel_tol=1e-6)
