"""Saved shipping addresses by buyer email, in the merchant database: part of the testing
surface (:mod:`.testing`), seeded from a UCP sample shop folder's ``customers.csv`` and
``addresses.csv``.

A platform that asks for shipping without a destination is offered the buyer's saved addresses;
a destination it gives without an id is saved (the same content keeps its id). Only under the
testing surface: without identity linking an email says nothing about who is asking, and
handing a stranger the addresses saved under someone's email would leak them.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ...addresses import Address
from ...errors import ConfigurationError
from ..terms_file import csv_rows

__all__ = ["AddressBook", "seed_rows"]

MAX_SAVED = 20  # addresses kept per email
_metadata = sa.MetaData()
saved_addresses = sa.Table(
    "ucp_saved_addresses",
    _metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("email", sa.String(320), nullable=False, index=True),
    sa.Column("address", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
_POSTAL = ("line_one", "line_two", "city", "state", "postal_code", "country")


def _key(address: Address) -> tuple[str, ...]:
    """What makes two addresses the same place (case and spacing aside)."""
    return tuple(" ".join(getattr(address, name).split()).casefold() for name in _POSTAL)


class AddressBook:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        _metadata.create_all(engine)

    def saved(self, email: str) -> list[Address]:
        """The addresses saved under ``email``, oldest first."""
        query = (
            sa.select(saved_addresses.c.id, saved_addresses.c.address)
            .where(saved_addresses.c.email == email.strip().casefold())
            .order_by(saved_addresses.c.created_at, saved_addresses.c.id)
            .limit(MAX_SAVED)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [Address(**{**orjson.loads(row.address), "id": row.id}) for row in rows]

    def remember(self, email: str, address: Address) -> Address:
        """``address`` saved under ``email`` (with the id of a saved one at the same place)."""
        for known in self.saved(email):
            if _key(known) == _key(address):
                return replace(address, id=known.id)
        made = replace(address, id=f"addr_{secrets.token_hex(6)}")
        self._insert(made.id, email, made)
        return made

    def seed(self, entries: Iterable[tuple[str, str, Address]]) -> None:
        """Saved addresses given as (id, email, address); ids already saved are kept."""
        with self.engine.connect() as conn:
            existing = {row.id for row in conn.execute(sa.select(saved_addresses.c.id))}
        for address_id, email, address in entries:
            if address_id not in existing:
                self._insert(address_id, email, address)

    def _insert(self, address_id: str, email: str, address: Address) -> None:
        fields = {name: getattr(address, name) for name in ("name", *_POSTAL)}
        with self.engine.begin() as conn:
            conn.execute(
                saved_addresses.insert().values(
                    id=address_id,
                    email=email.strip().casefold(),
                    address=orjson.dumps(fields).decode(),
                    created_at=datetime.now(UTC),
                )
            )


def seed_rows(folder: Path) -> list[tuple[str, str, Address]]:
    """A UCP sample shop folder's saved addresses: ``addresses.csv`` rows (``id, customer_id,
    street_address, city, state, postal_code, country``) under the email ``customers.csv``
    gives their customer."""
    customers = csv_rows(folder / "customers.csv")
    emails = {row.get("id", ""): row for row in customers}
    entries = []
    for line, row in enumerate(csv_rows(folder / "addresses.csv"), start=2):
        customer = emails.get(row.get("customer_id", ""))
        if customer is None or not row.get("id") or not customer.get("email"):
            raise ConfigurationError(f"{folder / 'addresses.csv'}:{line}: an unknown customer")
        address = Address(
            name=customer.get("name", ""),
            line_one=row.get("street_address", ""),
            city=row.get("city", ""),
            state=row.get("state", ""),
            postal_code=row.get("postal_code", ""),
            country=row.get("country", "").upper(),
        )
        entries.append((row["id"], customer["email"], address))
    return entries
