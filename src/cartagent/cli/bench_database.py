"""The PostgreSQL database ``bench sandbox`` and ``bench merchant`` drop and create afresh."""

from __future__ import annotations

import click

from ..errors import ConfigurationError


def announce_recreated(postgres_url: str, *, skip: str) -> None:
    """Say which database the bench will drop and create, before any run; a usage error on
    --postgres for one whose name the bench did not choose. ``skip`` says how not to."""
    from ..bench.sandbox import describe_database

    try:
        where = describe_database(postgres_url)
    except ConfigurationError as error:
        raise click.BadParameter(str(error), param_hint="--postgres") from None
    click.echo(f"PostgreSQL: recreating database {where} ({skip} to skip)", err=True)
