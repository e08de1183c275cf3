"""Bringing a sandbox database to the current schema with Alembic."""

from __future__ import annotations

from importlib import resources

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("cartagent.sandbox").joinpath("migrations"))
    )
    return config


def migrate(engine: Engine) -> None:
    """Apply every pending migration (idempotent; safe to call at each start)."""
    config = alembic_config()
    with engine.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        conn.commit()
