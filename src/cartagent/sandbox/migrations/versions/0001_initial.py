"""Initial sandbox schema: merchants, resources, idempotency keys, ledger, events, webhooks.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "merchants",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("client_id", sa.String(128), nullable=False, unique=True),
        sa.Column("client_secret", sa.String(128), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "resources",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(32), primary_key=True),
        sa.Column("merchant_id", sa.String(32), nullable=False),
        sa.Column("status", sa.String(40), nullable=False, server_default=""),
        sa.Column("parent_id", sa.String(64), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index(
        "ix_resources_merchant_kind_created", "resources", ["merchant_id", "kind", "created_at"]
    )
    op.create_index("ix_resources_parent", "resources", ["parent_id"])
    op.create_table(
        "idempotency_keys",
        sa.Column("merchant_id", sa.String(32), primary_key=True),
        sa.Column("operation", sa.String(64), primary_key=True),
        sa.Column("request_id", sa.String(108), primary_key=True),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
    )
    op.create_table(
        "ledger",
        sa.Column("transaction_id", sa.String(64), primary_key=True),
        sa.Column("merchant_id", sa.String(32), nullable=False),
        sa.Column("event_code", sa.String(8), nullable=False),
        sa.Column("status", sa.String(1), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("amount", sa.Numeric(18, 2), nullable=False),
        sa.Column("fee", sa.Numeric(18, 2), nullable=False),
        sa.Column("occurred_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("ix_ledger_merchant_time", "ledger", ["merchant_id", "occurred_at"])
    op.create_table(
        "counters",
        sa.Column("merchant_id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("merchant_id", sa.String(32), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("resource_id", sa.String(64), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("ix_events_merchant_created", "events", ["merchant_id", "created_at"])
    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("event_id", sa.String(64), nullable=False),
        sa.Column("webhook_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
    )
    op.create_index("ix_deliveries_due", "deliveries", ["status", "next_attempt_at"])
    op.create_table(
        "sandbox_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "sandbox_meta",
        "deliveries",
        "events",
        "counters",
        "ledger",
        "idempotency_keys",
        "resources",
        "merchants",
    ):
        op.drop_table(table)
