"""``cartagent mcp``: serve the PayPal tools to MCP hosts over stdio or streamable HTTP."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

import click

from ..errors import ConfigurationError
from .ports import ensure_free
from .settings import option_or, run_settings

if TYPE_CHECKING:
    from ..mcp_transport.oauth import OAuthResource
    from ..tools import Tool


def resolve_base_url(value: str) -> str:
    """``live``, ``sandbox`` or an http(s) URL (e.g. a local ``cartagent sandbox``)."""
    from ..paypal import Environment

    named = {e.name.lower(): e.value for e in Environment}
    url = named.get(value.lower(), value)
    if not url.startswith(("http://", "https://")):
        raise ConfigurationError(f"--base-url {value!r}: expected live, sandbox or an http(s) URL")
    return url.rstrip("/")


def _search_tool(catalog_path: str, model: str) -> Tool[Any]:
    """``search_products`` over the catalog at ``catalog_path`` (hybrid, its vectors cached)."""
    from ..retrieval import UNDERSTANDERS, get_understander, search_tool
    from .search import default_searcher, load_catalog, locate_catalog

    if model not in UNDERSTANDERS:
        known = ", ".join(sorted(UNDERSTANDERS))
        raise ConfigurationError(f"--search-model {model!r}: expected one of {known}")
    try:
        products = load_catalog(locate_catalog(None if catalog_path == "tau" else catalog_path))
    except click.UsageError as error:
        raise ConfigurationError(f"--catalog: {error.format_message()}") from None
    searcher = default_searcher(products, get_understander(model, run_settings()))
    how = "hybrid" if searcher.dense is not None else "lexical"
    click.echo(f"cartagent mcp: search_products over {len(products)} products ({how})", err=True)
    return search_tool(searcher)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _http_auth(
    transport: str,
    token: str | None,
    *,
    issuer: str | None,
    jwks_url: str | None,
    resource_url: str | None,
    audience: str | None,
    required_scopes: tuple[str, ...],
    default_resource: str,
) -> OAuthResource | None:
    """The OAuth resource server for --issuer; otherwise checks --token (HTTP only)."""
    from ..mcp_transport.auth import StaticTokenVerifier
    from ..mcp_transport.oauth import oauth_resource

    if issuer is None:
        named = {"--jwks-url": jwks_url, "--resource-url": resource_url, "--audience": audience}
        given = [name for name, value in named.items() if value is not None]
        given += ["--required-scope"] if required_scopes else []
        if given:
            raise ConfigurationError(f"{', '.join(given)}: only with --issuer")
        if transport == "http":
            StaticTokenVerifier(token)
        return None
    if transport != "http":
        raise ConfigurationError("--issuer applies to --transport http only")
    if token is not None:
        raise ConfigurationError(
            "--token (CARTAGENT_MCP_TOKEN) and --issuer are exclusive: a static bearer token "
            "is for local use, OAuth access tokens for remote clients; give one of them"
        )
    return oauth_resource(
        issuer=issuer,
        resource=resource_url or default_resource,
        jwks_url=jwks_url,
        audience=audience,
        required_scopes=required_scopes,
    )


@click.command("mcp")
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: interface to bind.")
@click.option("--port", default=8811, show_default=True, type=int, help="HTTP: port.")
@click.option(
    "--token",
    default=None,
    help="HTTP: the bearer token every request must carry (16+ characters); or use --issuer  "
    "[env var: CARTAGENT_MCP_TOKEN].",
)
@click.option(
    "--issuer",
    default=None,
    help="HTTP: accept OAuth access tokens (JWTs) from this authorization server instead of "
    "--token, and publish it in /.well-known/oauth-protected-resource  "
    "[env var: CARTAGENT_MCP_ISSUER].",
)
@click.option(
    "--jwks-url",
    default=None,
    help="HTTP, with --issuer: the issuer's key set [default: the jwks_uri of its metadata; "
    "env var: CARTAGENT_MCP_JWKS_URL].",
)
@click.option(
    "--resource-url",
    default=None,
    help="HTTP, with --issuer: this server's public URL [default: http://HOST:PORT/mcp].",
)
@click.option(
    "--audience",
    default=None,
    help="HTTP, with --issuer: the aud tokens must name [default: the resource URL].",
)
@click.option(
    "--required-scope",
    multiple=True,
    metavar="SCOPE",
    help="HTTP, with --issuer: a scope every token must hold (repeatable; otherwise 403).",
)
@click.option(
    "--base-url",
    default=None,
    show_default="sandbox",
    help="PayPal: live, sandbox, or any URL (e.g. a local cartagent sandbox)  "
    "[env var: CARTAGENT_PAYPAL_BASE_URL].",
)
@click.option("--client-id", default=None, help="[env var: CARTAGENT_PAYPAL_CLIENT_ID]")
@click.option("--client-secret", default=None, help="[env var: CARTAGENT_PAYPAL_CLIENT_SECRET]")
@click.option(
    "--actions",
    default=None,
    help="Tools to enable beyond the read-only ones, as JSON or a JSON file path, e.g. "
    '{"orders": {"create": true}}; false turns a read-only tool off  '
    "[env var: CARTAGENT_MCP_ACTIONS].",
)
@click.option(
    "--allow-money-moving",
    is_flag=True,
    help="Let enabled money-moving and destructive tools run (otherwise every such call is "
    "refused); money-moving tools then need --spend-limit or --spend-total.",
)
@click.option(
    "--spend-limit",
    multiple=True,
    metavar="CUR=AMOUNT",
    help="Per-call limit, e.g. USD=100 (repeatable). Unlisted currencies are refused.",
)
@click.option(
    "--spend-total", multiple=True, metavar="CUR=AMOUNT", help="Cumulative limit per server run."
)
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="Also serve search_products over this catalog: a products file (.json/.jsonl/.csv/"
    ".parquet), a tau-bench retail folder, or 'tau' for the store shipped with cartagent  "
    "[env var: CARTAGENT_CATALOG].",
)
@click.option(
    "--search-model",
    default="rules",
    show_default=True,
    help="How search_products understands requests (a `cartagent understand --model` name).",
)
def mcp(
    transport: str,
    host: str,
    port: int,
    token: str | None,
    issuer: str | None,
    jwks_url: str | None,
    resource_url: str | None,
    audience: str | None,
    required_scope: tuple[str, ...],
    base_url: str | None,
    client_id: str | None,
    client_secret: str | None,
    actions: str | None,
    allow_money_moving: bool,
    spend_limit: tuple[str, ...],
    spend_total: tuple[str, ...],
    catalog_path: str | None,
    search_model: str,
) -> None:
    """Serve cartagent's PayPal tools as an MCP server.

    Read-only tools are on by default; --actions enables more. Tools that move money or delete
    data are listed but refused unless --allow-money-moving is given, since MCP offers no way
    to ask a human first. HTTP binds 127.0.0.1 and requires a bearer token on every request:
    --token, or with --issuer, an OAuth access token that authorization server issued.
    With --catalog, the read-only search_products tool searches that catalog too.
    """
    import anyio

    from ..heap import frozen_heap
    from ..mcp import build_server, build_toolkit, load_actions, parse_limits
    from ..mcp.policy import refused_tools
    from ..mcp_transport import serve_http, serve_stdio
    from ..paypal import AsyncPayPalClient
    from ..tools import ALL_TOOLS

    # stdout is the protocol channel on stdio: everything else goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    settings = run_settings()
    token = option_or(token, settings.mcp.token)
    issuer = option_or(issuer, settings.mcp.issuer)
    jwks_url = option_or(jwks_url, settings.mcp.jwks_url)
    actions = option_or(actions, settings.mcp.actions)
    catalog_path = option_or(catalog_path, settings.mcp.catalog)
    client_id = option_or(client_id, settings.paypal.client_id)
    client_secret = option_or(client_secret, settings.paypal.client_secret)
    try:
        oauth = _http_auth(
            transport,
            token,
            issuer=issuer,
            jwks_url=jwks_url,
            resource_url=resource_url,
            audience=audience,
            required_scopes=required_scope,
            default_resource=f"http://{_url_host(host)}:{port}/mcp",
        )
        if not client_id or not client_secret:
            raise ConfigurationError(
                "PayPal credentials are required: --client-id and --client-secret "
                "(or CARTAGENT_PAYPAL_CLIENT_ID and CARTAGENT_PAYPAL_CLIENT_SECRET)"
            )
        url = resolve_base_url(option_or(base_url, settings.paypal.base_url or "sandbox"))
        mapping: dict[str, Any] | None = load_actions(actions) if actions else None
        limits = parse_limits(spend_limit, spend_total)
        tools = [*ALL_TOOLS]
        if catalog_path is not None:
            tools.append(_search_tool(catalog_path, search_model))
        client = AsyncPayPalClient(client_id, client_secret, base_url=url)
        toolkit = build_toolkit(
            client,
            actions=mapping,
            allow_money_moving=allow_money_moving,
            limits=limits,
            tools=tools,
        )
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    if transport == "http":
        ensure_free(host, port, hint="is another cartagent mcp running?")

    refused = refused_tools(toolkit, allow_money_moving)
    if refused:
        click.echo(
            f"cartagent mcp: {', '.join(refused)} will refuse every call "
            "(pass --allow-money-moving to let them run)",
            err=True,
        )
    server = build_server(toolkit)

    async def run() -> None:
        # The catalog, its indexes and the model are loaded: see cartagent.heap.
        with frozen_heap():
            await serve()

    async def serve() -> None:
        try:
            if transport == "http":
                tokens = f" (access tokens from {oauth.issuer})" if oauth else ""
                click.echo(f"cartagent mcp: serving http://{host}:{port}/mcp{tokens}", err=True)
                await serve_http(
                    server, token=None if oauth else token, oauth=oauth, host=host, port=port
                )
            else:
                await serve_stdio(server)
        finally:
            await client.aclose()

    # uvloop (from uvicorn[standard]) trims the per-message cost of both transports.
    anyio.run(run, backend_options={"use_uvloop": True})
