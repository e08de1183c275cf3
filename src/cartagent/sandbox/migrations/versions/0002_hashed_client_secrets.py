"""Merchants' client secrets are stored hashed: ``client_secret`` becomes ``client_secret_hash``
and each secret stored as it was given is replaced by its salted scrypt hash.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cartagent.sandbox.identity.client_secrets import hash_secret, is_hashed

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("merchants") as batch:
        batch.alter_column(
            "client_secret",
            new_column_name="client_secret_hash",
            existing_type=sa.String(128),
            existing_nullable=False,
        )
    merchants = sa.table(
        "merchants", sa.column("id", sa.String), sa.column("client_secret_hash", sa.String)
    )
    conn = op.get_bind()
    rows = conn.execute(sa.select(merchants.c.id, merchants.c.client_secret_hash)).all()
    for merchant_id, stored in rows:
        if not is_hashed(stored):
            conn.execute(
                merchants.update()
                .where(merchants.c.id == merchant_id)
                .values(client_secret_hash=hash_secret(stored))
            )


def downgrade() -> None:
    # A hash cannot be turned back into its secret: the column keeps the hashes, and merchants
    # must be given their secrets again (ensure_merchant) to authenticate.
    with op.batch_alter_table("merchants") as batch:
        batch.alter_column(
            "client_secret_hash",
            new_column_name="client_secret",
            existing_type=sa.String(128),
            existing_nullable=False,
        )
