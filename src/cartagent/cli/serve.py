"""``cartagent serve``: the assistant's HTTP API, and beside it (without ``--paypal``) the local
PayPal sandbox with the demo store, both in this one process.

API keys come from ``--keys`` (``CARTAGENT_API_KEYS_FILE``); without one, a demo keys file in
cartagent's data folder is used (created on first start with a random shopper key and a random
merchant key) and its keys are printed. The same port serves the web app: ``/shop`` for
shoppers (guest tokens, no key; their secret is kept in the data folder) and ``/merchant`` for
the merchant's key. Ctrl-C or SIGTERM stops both servers gracefully: requests
in flight are answered first.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .assistant_setup import AssistantOptions, assistant_options, build_assistant, paypal_client
from .ports import ensure_free, sandbox_running
from .settings import data_folder, option_or, run_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..settings import SandboxSettings
    from ..web import ApiKeys

DEMO_KEYS_FILE = "api-keys.toml"
GUEST_SECRET_FILE = "guest-secret"


def _api_keys(path: Path | None, data_dir: Path) -> tuple[ApiKeys, Path, bool]:
    """The keys, the file they came from, and whether it is the demo file."""
    from ..errors import ConfigurationError
    from ..web import load_keys, write_demo_keys

    try:
        if path is not None:
            return load_keys(path), path, False
        demo = data_dir / DEMO_KEYS_FILE
        try:
            return write_demo_keys(demo), demo, True
        except FileExistsError:
            return load_keys(demo), demo, True
    except ConfigurationError as error:
        raise click.UsageError(str(error)) from None


def _sandbox_app(settings: SandboxSettings, client_id: str, client_secret: str) -> FastAPI:
    """The sandbox app on its database, with the merchant the assistant pays through and the
    demo store loaded (seeding again adds nothing)."""
    from ..data import tau_retail
    from ..sandbox import create_app, ensure_merchant, open_sandbox
    from ..sandbox.seed import SeedDataNotFound, seed_store

    sandbox = open_sandbox(settings.db_url)
    ensure_merchant(sandbox, client_id, client_secret)
    try:
        summary = seed_store(
            settings.db_url,
            client_id,
            client_secret,
            data_dir=tau_retail(),
            base_url=settings.base_url,
        )
        click.echo(summary)
    except SeedDataNotFound as error:
        click.echo(f"the sandbox starts without the demo store: {error.message}", err=True)
    return create_app(sandbox, deliver_webhooks=True)


def _log_requests() -> None:
    """The API's access log (no message texts, no keys) goes to stderr."""
    log = logging.getLogger("cartagent.web")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO)


@click.command("serve")
@assistant_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface the API binds.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port of the API.")
@click.option(
    "--keys",
    "keys_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="API keys file (TOML or JSON: [[keys]] key, name, role = shopper|merchant); "
    "default: a demo file in cartagent's data folder, created with one key per role  "
    "[env var: CARTAGENT_API_KEYS_FILE].",
)
def serve(options: AssistantOptions, host: str, port: int, keys_path: Path | None) -> None:
    """Serve the assistant's HTTP API (and, without --paypal, the local PayPal sandbox)."""
    import uvicorn
    from sqlalchemy.engine import make_url

    from ..web import GuestTokens, create_api, guest_secret
    from ..web.server import serve_together

    settings = run_settings()
    data_dir = settings.data_dir
    if data_dir.is_dir():
        data_folder()  # tighten a folder an older version left open; made only when needed
    keys, keys_file, demo = _api_keys(option_or(keys_path, settings.api_keys_file), data_dir)
    ensure_free(host, port, hint="is another cartagent serve running?")
    client = paypal_client(options)
    configs: list[uvicorn.Config] = []
    lines = [
        f"cartagent API on http://{host}:{port}/api  (docs: http://{host}:{port}/docs)",
        f"web app: shop on http://{host}:{port}/shop, merchant on http://{host}:{port}/merchant",
    ]
    if options.paypal_url is None and not sandbox_running(settings.sandbox):
        local = settings.sandbox
        client_id = options.client_id or local.client_id
        secret = options.client_secret or local.client_secret
        sandbox = _sandbox_app(local, client_id, secret)
        config = uvicorn.Config(sandbox, host=local.host, port=local.port, log_level="warning")
        configs.append(config)
        shown = make_url(local.db_url).render_as_string(hide_password=True)
        lines.append(f"PayPal sandbox on http://{local.host}:{local.port}  ({shown})")
    # PayPal sends the shopper back to the shop page, which picks the session up again.
    return_url = f"http://{host}:{port}/shop?session={{session}}"
    assistant = build_assistant(options, client, return_url=return_url)
    secret_file = data_dir / GUEST_SECRET_FILE
    api = create_api(
        assistant,
        keys,
        guests=GuestTokens(lambda: guest_secret(secret_file)),
        pictures=_catalog_folder(options.catalog_path),
    )
    config = uvicorn.Config(api, host=host, port=port, log_level="warning", access_log=False)
    configs.insert(0, config)
    if demo:
        lines.append(f"demo API keys ({keys_file}); send one as 'Authorization: Bearer <key>':")
        lines += [f"  {p.role:<8}  {p.name:<14}  {key}" for key, p in keys.listing()]
    else:
        principals = ", ".join(f"{p.name} ({p.role})" for p in keys.principals)
        lines.append(f"API keys from {keys_file}: {principals}")
    click.echo("\n".join(lines))
    _log_requests()

    async def run() -> None:
        try:
            await serve_together(configs)
        finally:
            await client.aclose()

    try:
        asyncio.run(run())
    finally:
        assistant.store.close()


def _catalog_folder(catalog: str | None) -> Path | None:
    """The folder a catalog's picture files are relative to: its own, or the shop folder."""
    from .search import locate_catalog

    if catalog is None:
        return None  # the shipped store has no pictures
    path = locate_catalog(catalog)
    return path if path.is_dir() else path.parent
