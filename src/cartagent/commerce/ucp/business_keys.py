"""The business's own UCP signing keys, kept in the merchant database (the message signatures
themselves are :mod:`cartagent.protocols.ucp.signatures`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine

from ...protocols.ucp.signatures import SigningKey

__all__ = ["BusinessKeys", "signing_keys"]

_metadata = sa.MetaData()
signing_keys = sa.Table(
    "ucp_signing_keys",
    _metadata,
    sa.Column("slot", sa.String(64), primary_key=True),
    sa.Column("kid", sa.String(64), nullable=False, unique=True),
    sa.Column("private_key", sa.Text, nullable=False),  # PKCS#8 PEM
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)


class BusinessKeys:
    """The business's signing keys in the merchant database; the first use makes one.

    Two processes starting together agree on one key: the insert of the ``current`` slot is
    ``ON CONFLICT DO NOTHING`` and everyone then reads the row that won.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        _metadata.create_all(engine)
        self._current: SigningKey | None = None

    def current(self) -> SigningKey:
        """The key that signs now (made and stored if there is none yet)."""
        if self._current is None:
            self._current = self._load_or_make()
        return self._current

    def _load_or_make(self) -> SigningKey:
        where = signing_keys.c.slot == "current"
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(signing_keys).where(where)).first()
        if row is None:
            made = SigningKey.generate()
            pem = made.private.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ).decode()
            values = {
                "slot": "current",
                "kid": made.kid,
                "private_key": pem,
                "created_at": datetime.now(UTC),
            }
            with self.engine.begin() as conn:
                insert = (
                    postgresql_insert(signing_keys)
                    if conn.dialect.name == "postgresql"
                    else sqlite_insert(signing_keys)
                )
                conn.execute(insert.values(**values).on_conflict_do_nothing())
                row = conn.execute(sa.select(signing_keys).where(where)).one()
        return _stored(row)

    def jwks(self) -> list[dict[str, str]]:
        """Every stored key's public JWK (the profile's ``signing_keys``), current first."""
        current = self.current()
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(signing_keys).order_by(signing_keys.c.created_at)).all()
        others = [_stored(row).jwk() for row in rows if row.kid != current.kid]
        return [current.jwk(), *others]


def _stored(row: Any) -> SigningKey:
    private = serialization.load_pem_private_key(row.private_key.encode(), password=None)
    if not isinstance(private, ec.EllipticCurvePrivateKey):
        raise ValueError(f"signing key {row.kid} is not an EC key")
    return SigningKey(row.kid, private)
