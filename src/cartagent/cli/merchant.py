"""``cartagent merchant``: the store as an agentic-commerce merchant (ACP), paying through PayPal.

Without ``--paypal`` the local PayPal sandbox starts beside it in the same process, so the
whole checkout runs on one machine with no account. Agents authenticate with a bearer token
(``--agent-token``; a random one is made and printed if none is given) and, with
``--signing-secret``, must sign their requests.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import click

from .assistant_setup import paypal_endpoint

DEFAULT_PORT = 8780
TOKEN_FILE = "merchant-agent-token"


def _token(data_dir: Path) -> str:
    """The demo agent token kept in the data folder, so restarts keep working for the agent."""
    path = data_dir / TOKEN_FILE
    if path.is_file():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    token = "acp_" + secrets.token_urlsafe(24)
    path.write_text(token + "\n")
    path.chmod(0o600)
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
    "--mcp-port",
    type=int,
    default=None,
    help="Also serve ACP's MCP binding (streamable HTTP at /mcp, same agent tokens) here.",
)
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="A products file or a tau-bench retail folder; default: the tau-bench store.",
)
@click.option(
    "--db",
    "db_url",
    envvar="CARTAGENT_MERCHANT_DB",
    show_envvar=True,
    default=None,
    help="Where checkouts are kept: sqlite:///path or postgresql://user@host/db; "
    "default: merchant.db in cartagent's data folder.",
)
@click.option(
    "--agent-token",
    envvar="CARTAGENT_MERCHANT_AGENT_TOKEN",
    show_envvar=True,
    default=None,
    help="The bearer token agents send; default: a random one kept in the data folder.",
)
@click.option(
    "--signing-secret",
    envvar="CARTAGENT_MERCHANT_SIGNING_SECRET",
    show_envvar=True,
    default=None,
    help="If set, agents must sign each request (Signature, Timestamp) with this secret.",
)
@click.option(
    "--webhook-url",
    envvar="CARTAGENT_MERCHANT_WEBHOOK_URL",
    show_envvar=True,
    default=None,
    help="The agent platform's order-events receiver (order_create on each completed checkout).",
)
@click.option(
    "--webhook-secret",
    envvar="CARTAGENT_MERCHANT_WEBHOOK_SECRET",
    show_envvar=True,
    default=None,
    help="The secret order events are signed with (Merchant-Signature); needed with --webhook-url.",
)
@click.option(
    "--paypal",
    "paypal_url",
    envvar="CARTAGENT_PAYPAL_BASE_URL",
    show_envvar=True,
    default=None,
    help="PayPal for payments: live, sandbox or a URL; default: the local sandbox.",
)
@click.option("--client-id", envvar="CARTAGENT_PAYPAL_CLIENT_ID", show_envvar=True)
@click.option("--client-secret", envvar="CARTAGENT_PAYPAL_CLIENT_SECRET", show_envvar=True)
def merchant(
    host: str,
    port: int,
    base_url: str | None,
    mcp_port: int | None,
    catalog_path: str | None,
    db_url: str | None,
    agent_token: str | None,
    signing_secret: str | None,
    webhook_url: str | None,
    webhook_secret: str | None,
    paypal_url: str | None,
    client_id: str | None,
    client_secret: str | None,
) -> None:
    """Serve the store to shopping agents over ACP, with PayPal taking the payments."""
    import uvicorn

    from ..commerce import (
        AgentKey,
        Agents,
        CheckoutRecords,
        Merchant,
        MerchantCatalog,
        PayPalPayments,
        create_merchant_app,
    )
    from ..commerce.acp.mcp import MCP_PATH, acp_mcp_app
    from ..commerce.webhooks import WebhookSender
    from ..database import create_engine
    from ..paypal import PayPalClient
    from ..settings import SandboxSettings, _data_dir
    from ..web.server import serve_together
    from .search import load_catalog, locate_catalog
    from .serve import _sandbox_app

    products = load_catalog(locate_catalog(catalog_path))
    url, paypal_id, paypal_secret = paypal_endpoint(paypal_url, client_id, client_secret)
    token = agent_token or _token(_data_dir())
    database = db_url or f"sqlite:///{_data_dir() / 'merchant.db'}"
    public = (base_url or f"http://{host}:{port}").rstrip("/")
    paypal = PayPalClient(paypal_id, paypal_secret, base_url=url)
    records = CheckoutRecords(create_engine(database))
    try:
        store = Merchant(MerchantCatalog(products), records, PayPalPayments(paypal))
        agents = Agents([AgentKey("agent", token, signing_secret, webhook_url, webhook_secret)])
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    sender = WebhookSender(records, agents) if webhook_url else None
    mcp_url = f"http://{host}:{mcp_port}{MCP_PATH}" if mcp_port else None
    app = create_merchant_app(store, agents, base_url=public, webhooks=sender, mcp_url=mcp_url)
    configs = [uvicorn.Config(app, host=host, port=port, log_level="warning")]
    if mcp_port:
        binding = acp_mcp_app(app.state.acp, host=host, port=mcp_port)
        configs.append(
            uvicorn.Config(binding, host=host, port=mcp_port, log_level="warning", lifespan="on")
        )
    lines = [
        f"ACP merchant on {public}  (discovery: {public}/.well-known/acp.json)",
        f"  {len(store.catalog)} items from {len(products)} products; checkouts in {database}",
        f"  agents send 'Authorization: Bearer {token}' and 'API-Version: 2026-04-17'",
    ]
    if mcp_url:
        lines.append(f"  ACP's MCP binding on {mcp_url} (the same bearer token)")
    if signing_secret:
        lines.append("  requests must be signed (Signature, Timestamp)")
    if webhook_url:
        lines.append(f"  order events to {webhook_url}")
    if paypal_url is None:
        local = SandboxSettings.from_env()
        sandbox = _sandbox_app(local, paypal_id, paypal_secret)
        configs.append(
            uvicorn.Config(sandbox, host=local.host, port=local.port, log_level="warning")
        )
        lines.append(f"PayPal sandbox on {url}")
    else:
        lines.append(f"payments through PayPal at {url}")
    click.echo("\n".join(lines))
    try:
        asyncio.run(serve_together(configs))
    finally:
        paypal.close()
