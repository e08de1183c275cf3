"""Where an order goes and who receives it: the same two values for the merchant that takes a
checkout and for the agent that sends one, whichever protocol carries them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Address", "Contact"]


@dataclass(frozen=True)
class Address:
    """Where the goods go, as far as it is known: UCP makes every field optional, so a platform
    may send a country alone (enough to offer shipping) and the rest later. ``id`` is the id
    the platform gave the destination, kept so its selection still names it."""

    name: str = ""
    line_one: str = ""
    city: str = ""
    state: str = ""
    country: str = ""
    postal_code: str = ""
    line_two: str = ""
    id: str = ""

    def missing(self) -> list[str]:
        """The fields a parcel needs that are not known yet (neutral names)."""
        needed = ("name", "line_one", "city", "postal_code", "country")
        return [name for name in needed if not getattr(self, name)]


@dataclass(frozen=True)
class Contact:
    """Who receives the goods and the messages about them."""

    name: str = ""
    email: str = ""
    phone: str = ""
