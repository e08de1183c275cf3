"""``cartagent sandbox``: run, seed and migrate the local PayPal-compatible sandbox."""

from __future__ import annotations

import os
import signal
import threading
import time

import click

from .ports import ensure_free
from .settings import data_folder, option_or, run_settings

# sandbox.engine.DB_CALLS, not imported: that would load SQLAlchemy for every command.
DB_CALLS_CHOICE = click.Choice(("auto", "inline", "threads"))


@click.group(invoke_without_command=True)
@click.option(
    "--host",
    default=None,
    show_default="CARTAGENT_SANDBOX_HOST, else 127.0.0.1",
    help="Interface to bind.",
)
@click.option("--port", default=None, show_default="CARTAGENT_SANDBOX_PORT, else 8765", type=int)
@click.option(
    "--db",
    "db_url",
    default=None,
    show_default="CARTAGENT_SANDBOX_DB, else sandbox.db in cartagent's data folder",
    help="SQLAlchemy URL: sqlite:///path.db or postgresql://user@host/db.",
)
@click.option(
    "--client-id",
    default=None,
    show_default="CARTAGENT_SANDBOX_CLIENT_ID, else cartagent-sandbox-client",
    help="Merchant API client id (created if missing).",
)
@click.option(
    "--client-secret",
    default=None,
    show_default="CARTAGENT_SANDBOX_CLIENT_SECRET, else cartagent-sandbox-secret",
)
@click.option("--seed/--no-seed", default=False, help="Load the demo store first.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=int,
    help="Server processes (SQLite handles a few; PostgreSQL more).",
)
@click.option(
    "--pool-size",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="PostgreSQL connections per server process, and so its requests at once.",
)
@click.option(
    "--db-calls",
    type=DB_CALLS_CHOICE,
    default="auto",
    show_default=True,
    help="Where requests make their database calls: on each process's event loop (inline; "
    "auto for SQLite) or in threads (auto for PostgreSQL: they overlap its round trips). "
    "Inline spends less CPU per request on a PostgreSQL on this machine but needs more "
    "--workers.",
)
@click.option(
    "--allow-private-urls",
    is_flag=True,
    help="Let webhooks be registered at, and delivered to, loopback and private addresses "
    "(plain http too, to this machine). For local development only.",
)
@click.option(
    "--exit-with-parent",
    is_flag=True,
    hidden=True,
    help="Stop when the process that started this one is gone (a server's child sandbox).",
)
@click.pass_context
def sandbox(
    ctx: click.Context,
    host: str | None,
    port: int | None,
    db_url: str | None,
    client_id: str | None,
    client_secret: str | None,
    seed: bool,
    workers: int,
    pool_size: int,
    db_calls: str,
    allow_private_urls: bool,
    exit_with_parent: bool,
) -> None:
    """Serve the PayPal-compatible REST sandbox (OAuth2, Orders, Payments, Invoicing, ...)."""
    local = run_settings().sandbox
    data_folder()  # the default database's folder: readable by its owner only
    db_url = option_or(db_url, local.db_url)
    client_id = option_or(client_id, local.client_id)
    client_secret = option_or(client_secret, local.client_secret)
    ctx.obj = {"db_url": db_url, "client_id": client_id, "client_secret": client_secret}
    if ctx.invoked_subcommand is not None:
        return
    if exit_with_parent:
        _exit_with_parent()
    from ..data import tau_retail
    from ..sandbox.seed import SeedDataNotFound
    from ..sandbox.server import serve

    host = option_or(host, local.host)
    port = option_or(port, local.port)
    ensure_free(host, port, hint="is another cartagent sandbox running?")
    try:
        serve(
            host=host,
            port=port,
            db_url=db_url,
            client_id=client_id,
            client_secret=client_secret,
            seed_data=tau_retail() if seed else None,
            workers=workers,
            pool_size=pool_size,
            db_calls=db_calls,
            allow_private_webhooks=allow_private_urls,
        )
    except SeedDataNotFound as error:
        raise click.ClickException(error.message) from None


@sandbox.command()
@click.option("--db", "db_url", default=None, help="Overrides the group's --db.")
@click.option("--client-id", default=None)
@click.option("--client-secret", default=None)
@click.option(
    "--data",
    "data_dir",
    default=None,
    help="tau-bench retail folder (products.json, users.json, orders.json); "
    "default: the one shipped with cartagent.",
)
@click.pass_context
def seed(
    ctx: click.Context,
    db_url: str | None,
    client_id: str | None,
    client_secret: str | None,
    data_dir: str | None,
) -> None:
    """Load the tau-bench retail store: products, customers and past orders with captures."""
    from ..data import tau_retail
    from ..sandbox.seed import SeedDataNotFound, seed_store

    opts = ctx.obj
    try:
        summary = seed_store(
            db_url or opts["db_url"],
            client_id or opts["client_id"],
            client_secret or opts["client_secret"],
            data_dir=tau_retail() if data_dir is None else data_dir,
            progress=True,
        )
    except SeedDataNotFound as error:
        raise click.ClickException(error.message) from None
    click.echo(summary)


@sandbox.command()
@click.option("--db", "db_url", default=None, help="Overrides the group's --db.")
@click.pass_context
def migrate(ctx: click.Context, db_url: str | None) -> None:
    """Bring the sandbox database to the latest schema."""
    from ..sandbox.database import migrate as run_migrations
    from ..sandbox.engine import create_engine

    url = db_url or ctx.obj["db_url"]
    run_migrations(create_engine(url))
    click.echo(f"migrated {url}")


def _exit_with_parent(every: float = 0.5) -> None:
    """Send this process SIGTERM (a clean server shutdown) once its parent is gone, however
    it ended: a parent killed with SIGKILL runs no code that could stop its children."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
