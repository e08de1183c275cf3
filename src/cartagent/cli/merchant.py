"""``cartagent merchant``: the store as an agentic-commerce merchant (ACP), paying through PayPal.

Without ``--paypal`` the local PayPal sandbox starts beside it in a child process, so the
whole checkout runs on one machine with no account. Agents authenticate with a bearer token
(``--agent-token``; a random one is made and printed if none is given) and, with
``--signing-secret``, must sign their requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigurationError
from .assistant_setup import paypal_endpoint, paypal_options
from .ports import ensure_free, sandbox_running
from .settings import data_folder, option_or, run_settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..settings import SandboxSettings

DEFAULT_PORT = 8780
UCP_PREFIX = "/ucp"  # where cartagent.commerce.server mounts UCP unless told otherwise
SANDBOX_STARTUP = 120.0  # seconds; the first start seeds the demo store
SANDBOX_JWKS = "/v1/agentic-commerce/jwks"
TOKEN_FILE = "merchant-agent-token"


def _token(data_dir: Path) -> str:
    """The demo agent token kept in the data folder (created readable by its owner only), so
    restarts keep working for the agent."""
    path = data_dir / TOKEN_FILE
    if path.is_file():
        return path.read_text().strip()
    token = "acp_" + secrets.token_urlsafe(24)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    return token


@click.command("merchant")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int, help="Port to bind.")
@click.option(
    "--base-url",
    default=None,
    help="The URL agents reach this merchant at (discovery, order links); "
    "default: http://HOST:PORT.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=int,
    help="Server processes (the sandbox beside them then runs in a process of its own).",
)
@click.option(
    "--mcp-port",
    type=int,
    default=None,
    help="Also serve ACP's MCP binding (streamable HTTP at /mcp, same agent tokens) here.",
)
@click.option(
    "--ucp-mcp-port",
    type=int,
    default=None,
    help="Also serve UCP's MCP binding (streamable HTTP at /mcp, same agent tokens) here.",
)
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="A products file, a tau-bench retail folder or a UCP sample shop folder; default: "
    "the tau-bench store.",
)
@click.option(
    "--terms",
    "terms_path",
    default=None,
    type=click.Path(exists=True, dir_okay=True),
    help="The store's terms (tax by region, shipping rates, free-shipping promotions): a TOML "
    "file (README, 'Store terms') or a UCP sample shop folder; default: the demo store's (8% "
    "tax, 5.99 shipping, free from 50), or a UCP shop --catalog's own.",
)
@click.option(
    "--db",
    "db_url",
    default=None,
    help="Where checkouts are kept: sqlite:///path or postgresql://user@host/db; "
    "default: merchant.db in cartagent's data folder  [env var: CARTAGENT_MERCHANT_DB].",
)
@click.option(
    "--agent-token",
    default=None,
    help="The bearer token agents send; default: a random one kept in the data folder  "
    "[env var: CARTAGENT_MERCHANT_AGENT_TOKEN].",
)
@click.option(
    "--signing-secret",
    default=None,
    help="If set, agents must sign each request with this secret: over ACP (Signature, "
    "Timestamp), over UCP as an RFC 9421 message signature (hmac-sha256), REST and MCP alike  "
    "[env var: CARTAGENT_MERCHANT_SIGNING_SECRET].",
)
@click.option(
    "--webhook-url",
    default=None,
    help="The agent platform's order-events receiver (order_create on each completed checkout)  "
    "[env var: CARTAGENT_MERCHANT_WEBHOOK_URL].",
)
@click.option(
    "--webhook-secret",
    default=None,
    help="The secret order events are signed with (Merchant-Signature); needed with "
    "--webhook-url  [env var: CARTAGENT_MERCHANT_WEBHOOK_SECRET].",
)
@paypal_options
@click.option(
    "--paypal-merchant-id",
    default=None,
    help="Serve PayPal's Cart API (Store Sync) for this PayPal merchant id (the JWT audience); "
    "default with the local sandbox: its demo merchant  [env var: CARTAGENT_PAYPAL_MERCHANT_ID].",
)
@click.option(
    "--ucp-platform",
    "ucp_platforms",
    multiple=True,
    metavar="URL=FILE",
    help="A UCP platform profile known in advance (repeatable): agents naming URL in UCP-Agent "
    "get FILE's profile; other profiles are fetched over HTTPS.",
)
@click.option(
    "--paypal-jwks-url",
    default=None,
    help="Where PayPal's JWT signing keys are; default: the sandbox's /v1/agentic-commerce/jwks.",
)
@click.option(
    "--allow-private-urls",
    is_flag=True,
    help="Let platform profiles be fetched from, and order events go to the webhook URLs they "
    "name at, loopback or private addresses, over plain http too. For local development and "
    "testing only.",
)
@click.option(
    "--ucp-version",
    type=click.Choice(["2026-08-25", "2026-04-08", "2026-01-11"]),
    default="2026-04-08",
    show_default=True,
    help="The UCP release /.well-known/ucp declares; platforms at any of them are answered in "
    "theirs (each release's profile is at /.well-known/ucp/VERSION).",
)
@click.option(
    "--ucp-open",
    is_flag=True,
    help="UCP platforms need no token: they are known by their profile (and by their "
    "signatures where they sign).",
)
@click.option(
    "--ucp-all-capabilities",
    is_flag=True,
    help="Answer every UCP platform with all of this business's capabilities instead of "
    "the intersection with its profile's (UCP 2026-01-11's conformance suite presents a "
    "profile that lists only the order capability).",
)
@click.option(
    "--ucp-prefix",
    default=UCP_PREFIX,
    show_default=True,
    help="Where the UCP operations are served ('' for the root, beside ACP's).",
)
@click.option(
    "--storefront-url",
    default=None,
    help="The store's web shop, where UCP's continue_url and order links lead; default: the "
    "merchant's own buyer pages (BASE_URL/shop).",
)
@click.option(
    "--simulation-secret",
    default=None,
    help="Turn on UCP's testing surface (conformance suites, local development): a test "
    "payment handler (token success_token pays, fail_token is declined), PUT on orders, and "
    "POST /testing/simulate-shipping/ORDER_ID guarded by this secret in a Simulation-Secret "
    "header. Never in production.",
)
def merchant(
    host: str,
    port: int,
    base_url: str | None,
    workers: int,
    mcp_port: int | None,
    ucp_mcp_port: int | None,
    catalog_path: str | None,
    terms_path: str | None,
    db_url: str | None,
    agent_token: str | None,
    signing_secret: str | None,
    webhook_url: str | None,
    webhook_secret: str | None,
    paypal_url: str | None,
    client_id: str | None,
    client_secret: str | None,
    paypal_merchant_id: str | None,
    paypal_jwks_url: str | None,
    ucp_platforms: tuple[str, ...],
    allow_private_urls: bool,
    ucp_version: str,
    ucp_open: bool,
    ucp_all_capabilities: bool,
    simulation_secret: str | None,
    ucp_prefix: str,
    storefront_url: str | None,
) -> None:
    """Serve the store to shopping agents over ACP, with PayPal taking the payments."""
    import uvicorn

    from ..catalog.ucp_shop import is_ucp_shop
    from ..commerce.server import PAYPAL_CART_PREFIX
    from ..web.server import serve_together
    from .search import locate_catalog

    settings = run_settings()
    chosen = settings.merchant
    db_url = option_or(db_url, chosen.db_url)
    agent_token = option_or(agent_token, chosen.agent_token)
    signing_secret = option_or(signing_secret, chosen.signing_secret)
    webhook_url = option_or(webhook_url, chosen.webhook_url)
    webhook_secret = option_or(webhook_secret, chosen.webhook_secret)
    paypal_merchant_id = option_or(paypal_merchant_id, settings.paypal.merchant_id)
    url, paypal_id, paypal_secret = paypal_endpoint(paypal_url, client_id, client_secret)
    if workers < 1:
        raise click.BadParameter("must be at least 1", param_hint="--workers")
    if workers > 1 and (mcp_port or ucp_mcp_port):
        raise click.UsageError("the MCP bindings are served by a single process: drop --workers")
    _ensure_ports_free(host, port, mcp_port, ucp_mcp_port)
    local = settings.sandbox
    start_sandbox = paypal_url is None and not sandbox_running(local)
    if paypal_url is None:
        paypal_merchant_id = paypal_merchant_id or _sandbox_merchant(
            local, paypal_id, paypal_secret
        )
        paypal_jwks_url = paypal_jwks_url or f"{url}{SANDBOX_JWKS}"
    elif paypal_merchant_id and not paypal_jwks_url:
        raise click.UsageError("--paypal-merchant-id with --paypal needs --paypal-jwks-url")
    catalog = locate_catalog(catalog_path)
    if terms_path is None and is_ucp_shop(catalog):
        terms_path = str(catalog)
    setup = MerchantSetup(
        catalog=str(catalog),
        terms=terms_path,
        database=db_url or f"sqlite:///{data_folder() / 'merchant.db'}",
        base_url=(base_url or f"http://{host}:{port}").rstrip("/"),
        paypal_url=url,
        paypal_id=paypal_id,
        paypal_secret=paypal_secret,
        agent_token=agent_token or _token(data_folder()),
        signing_secret=signing_secret,
        webhook_url=webhook_url,
        webhook_secret=webhook_secret,
        mcp_url=_mcp_url(host, mcp_port) if mcp_port else None,
        ucp_mcp_url=_mcp_url(host, ucp_mcp_port) if ucp_mcp_port else None,
        paypal_merchant_id=paypal_merchant_id,
        paypal_jwks_url=paypal_jwks_url,
        ucp_platforms=tuple(_platform(option) for option in ucp_platforms),
        allow_private_urls=allow_private_urls,
        ucp_version=ucp_version,
        ucp_open=ucp_open,
        ucp_intersect=not ucp_all_capabilities,
        simulation_secret=simulation_secret,
        ucp_prefix=ucp_prefix.rstrip("/"),
        storefront_url=storefront_url,
    )
    app = build_app(setup)  # also in the parent with --workers: it checks the setup first
    store = app.state.acp.merchant
    public = setup.base_url
    lines = [
        f"ACP merchant on {public}  (discovery: {public}/.well-known/acp.json)"
        + (f", {workers} worker processes" if workers > 1 else ""),
        f"UCP business on {public}{setup.ucp_prefix}  (profile: {public}/.well-known/ucp; "
        "platforms also send 'UCP-Agent: profile=\"https://...\"')",
        f"  {len(store.catalog)} items from {len(store.catalog.products)} products; "
        f"checkouts in {setup.database}",
        f"  agents send 'Authorization: Bearer {setup.agent_token}' and 'API-Version: 2026-04-17'",
    ]
    if setup.mcp_url:
        lines.append(f"  ACP's MCP binding on {setup.mcp_url} (the same bearer token)")
    if setup.ucp_mcp_url:
        lines.append(f"  UCP's MCP binding on {setup.ucp_mcp_url} (the same bearer token)")
    if signing_secret:
        lines.append(
            "  requests must be signed (ACP: Signature, Timestamp; UCP: RFC 9421 hmac-sha256)"
        )
    if webhook_url:
        lines.append(f"  order events to {webhook_url}")
    if simulation_secret:
        lines.append(
            "  UCP testing surface on: test payment handler, PUT orders, "
            f"{public}/testing/simulate-shipping/ORDER_ID (Simulation-Secret header)"
        )
    if setup.paypal_merchant_id:
        lines.append(
            f"PayPal Cart API (Store Sync) on {public}{PAYPAL_CART_PREFIX}/merchant-cart, "
            f"for PayPal merchant {setup.paypal_merchant_id}"
            + (f"; JWTs from {url}/v1/sandbox/agentic-commerce/token" if paypal_url is None else "")
        )
    configs = [uvicorn.Config(app, host=host, port=port, log_level="warning")]
    if mcp_port:
        from ..commerce.acp.mcp import acp_mcp_app

        binding = acp_mcp_app(app.state.acp, host=host, port=mcp_port)
        configs.append(
            uvicorn.Config(binding, host=host, port=mcp_port, log_level="warning", lifespan="on")
        )
    if ucp_mcp_port:
        from ..commerce.ucp.mcp import ucp_mcp_app

        ucp_binding = ucp_mcp_app(app.state.ucp, host=host, port=ucp_mcp_port)
        configs.append(
            uvicorn.Config(
                ucp_binding, host=host, port=ucp_mcp_port, log_level="warning", lifespan="on"
            )
        )
    sandbox: subprocess.Popen[bytes] | None = None
    if start_sandbox:
        sandbox = _sandbox_process(local, paypal_id, paypal_secret)
        lines.append(f"PayPal sandbox on {url}")
    elif paypal_url is not None:
        lines.append(f"payments through PayPal at {url}")
    try:
        if sandbox is not None:
            _wait_for_sandbox(sandbox, url)
        click.echo("\n".join(lines))
        if workers > 1:
            os.environ[_SETUP_ENV] = json.dumps(asdict(setup))
            uvicorn.run(
                "cartagent.cli.merchant:app_for_worker",
                factory=True,
                host=host,
                port=port,
                workers=workers,
                log_level="warning",
            )
        else:
            asyncio.run(serve_together(configs))
    finally:
        if sandbox is not None:
            sandbox.terminate()
            sandbox.wait(10)


_SETUP_ENV = "CARTAGENT_MERCHANT_WORKER_SETUP"


def _ensure_ports_free(
    host: str, port: int, mcp_port: int | None, ucp_mcp_port: int | None
) -> None:
    hint = "is another cartagent merchant running?"
    ensure_free(host, port, hint=hint)
    for option, chosen in (("--mcp-port", mcp_port), ("--ucp-mcp-port", ucp_mcp_port)):
        if chosen:
            ensure_free(host, chosen, hint=hint, choose=option)


def _mcp_url(host: str, port: int) -> str:
    from ..commerce.acp.mcp import MCP_PATH

    return f"http://{host}:{port}{MCP_PATH}"


@dataclass(frozen=True)
class MerchantSetup:
    """Everything a merchant process is built from (handed to ``--workers`` processes)."""

    catalog: str
    database: str
    base_url: str
    paypal_url: str
    paypal_id: str
    paypal_secret: str
    agent_token: str
    signing_secret: str | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = None
    mcp_url: str | None = None
    ucp_mcp_url: str | None = None
    paypal_merchant_id: str | None = None
    paypal_jwks_url: str | None = None
    ucp_platforms: tuple[tuple[str, str], ...] = ()
    allow_private_urls: bool = False
    terms: str | None = None
    ucp_version: str = "2026-04-08"
    ucp_open: bool = False
    ucp_intersect: bool = True
    simulation_secret: str | None = None
    ucp_prefix: str = UCP_PREFIX
    storefront_url: str | None = None


def build_app(setup: MerchantSetup) -> FastAPI:
    from ..catalog.ucp_shop import is_ucp_shop
    from ..commerce import (
        AgentKey,
        Agents,
        CheckoutRecords,
        Merchant,
        MerchantCatalog,
        PayPalPayments,
        create_merchant_app,
    )
    from ..commerce.paypal_cart import JwksKeys, JwtVerifier, http_jwks
    from ..commerce.terms import DEMO_STORE
    from ..commerce.terms_file import load_terms
    from ..commerce.ucp import FetchedProfiles, KnownProfiles, PlatformProfiles, UcpPolicy
    from ..commerce.ucp.address_book import seed_rows
    from ..commerce.webhooks import WebhookSender
    from ..database import create_engine
    from ..paypal import PayPalClient
    from .search import load_catalog

    products = load_catalog(Path(setup.catalog))
    paypal = PayPalClient(setup.paypal_id, setup.paypal_secret, base_url=setup.paypal_url)
    records = CheckoutRecords(create_engine(setup.database))
    try:
        terms = DEMO_STORE if setup.terms is None else load_terms(Path(setup.terms))
    except ConfigurationError as error:
        raise click.UsageError(str(error)) from None
    try:
        store = Merchant(MerchantCatalog(products), records, PayPalPayments(paypal), terms=terms)
        key = AgentKey(
            "agent",
            setup.agent_token,
            setup.signing_secret,
            setup.webhook_url,
            setup.webhook_secret,
        )
        agents = Agents([key])
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    # Always: ACP events go to --webhook-url, UCP events to the URL each platform's profile gives
    # (someone else's say-so: public addresses only, unless --allow-private-urls).
    sender = WebhookSender(records, agents, allow_private=setup.allow_private_urls)
    cart = None
    if setup.paypal_merchant_id and setup.paypal_jwks_url:
        keys = JwksKeys(http_jwks(setup.paypal_jwks_url))
        cart = JwtVerifier(keys, issuer=setup.paypal_url, audience=setup.paypal_merchant_id)
    profiles: PlatformProfiles = FetchedProfiles(allow_private=setup.allow_private_urls)
    if setup.ucp_platforms:
        known = {url: _profile_file(path) for url, path in setup.ucp_platforms}
        profiles = KnownProfiles(known, fallback=profiles)
    app = create_merchant_app(
        store,
        agents,
        base_url=setup.base_url,
        webhooks=sender,
        mcp_url=setup.mcp_url,
        paypal_cart=cart,
        ucp_mcp_url=setup.ucp_mcp_url,
        ucp_profiles=profiles,
        ucp_policy=UcpPolicy(
            version=setup.ucp_version,
            allow_private_urls=setup.allow_private_urls,
            open_access=setup.ucp_open,
            intersect=setup.ucp_intersect,
            simulation_secret=setup.simulation_secret,
        ),
        ucp_prefix=setup.ucp_prefix,
        storefront_url=setup.storefront_url,
    )
    book = app.state.ucp.book  # the testing surface's: seeded from a UCP shop's customers
    if book is not None and is_ucp_shop(Path(setup.catalog)):
        try:
            book.seed(seed_rows(Path(setup.catalog)))
        except ConfigurationError as error:
            raise click.UsageError(str(error)) from None
    return app


def _platform(option: str) -> tuple[str, str]:
    url, sep, path = option.partition("=")
    if not sep or not url or not Path(path).is_file():
        raise click.BadParameter(f"{option!r} is not URL=FILE", param_hint="--ucp-platform")
    return url, path


def _profile_file(path: str) -> dict[str, Any]:
    try:
        loaded = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise click.UsageError(f"{path}: {error}") from None
    if not isinstance(loaded, dict):
        raise click.UsageError(f"{path}: a platform profile is a JSON object")
    return loaded


def app_for_worker() -> FastAPI:
    """The factory uvicorn calls in each ``--workers`` process."""
    return build_app(MerchantSetup(**json.loads(os.environ[_SETUP_ENV])))


def _sandbox_merchant(local: SandboxSettings, client_id: str, secret: str) -> str:
    """The local sandbox's id of the merchant these credentials belong to (made if new)."""
    from ..sandbox import ensure_merchant, open_sandbox

    sandbox = open_sandbox(local.db_url)
    try:
        return ensure_merchant(sandbox, client_id, secret)
    finally:
        sandbox.store.engine.dispose()


def _sandbox_process(
    local: SandboxSettings, client_id: str, secret: str
) -> subprocess.Popen[bytes]:
    """The seeded sandbox in a process of its own, which exits when this one does (even
    killed). Not in this process: the merchant's requests and the PayPal calls they make would
    share one interpreter lock, and one core."""
    command = [
        sys.executable, "-m", "cartagent", "sandbox", "--host", local.host,
        "--port", str(local.port), "--db", local.db_url, "--client-id", client_id,
        "--client-secret", secret, "--seed", "--exit-with-parent",
    ]  # fmt: skip
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def _wait_for_sandbox(
    sandbox: subprocess.Popen[bytes], url: str, timeout: float = SANDBOX_STARTUP
) -> None:
    """Return once the sandbox answers HTTP; a sandbox that exits or stays silent is an error."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sandbox.poll() is not None:
            raise click.ClickException(
                f"the PayPal sandbox exited with {sandbox.returncode} before it served {url}"
            )
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise click.ClickException(f"the PayPal sandbox did not answer on {url} in {timeout:g}s")
