"""``cartagent chat``: talk to the assistant in the terminal, or script it through stdin.

On a terminal it is a prompt loop that prints product cards as a compact table. When stdin is
not a terminal it reads one user turn per line and prints one reply block per turn (the
domain and the answer, one line per card, then an empty line), so it can be scripted. The
session id goes to stderr; pass it back with ``--session`` to continue the conversation.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .assistant_setup import (
    AssistantOptions,
    assistant_options,
    build_assistant,
    load_shopper,
    paypal_client,
)
from .settings import option_or, run_settings

log = logging.getLogger(__name__)

_FAILED = "That turn failed on our side; the conversation is as it was and goes on."

if TYPE_CHECKING:
    from ..assistant import ProductCard, Reply
    from ..shopping import ShopClient


def _card_line(card: ProductCard) -> str:
    ids = f"[product {card.id}" + (f", variant {card.variant_id}]" if card.variant_id else "]")
    line = f"  {card.rank}. {card.describe()}  {ids}"
    return line + (f"\n     not a match: {'; '.join(card.breaks)}" if card.breaks else "")


def _table(cards: tuple[ProductCard, ...]) -> list[str]:
    from ..assistant.cards import option_words

    rows: list[tuple[str, ...]] = [
        (
            str(c.rank),
            c.title,
            option_words(c.options),
            "-" if c.price is None else f"{c.price} {c.currency}",
            "in stock" if c.available else "out of stock",
            "; ".join(c.breaks),
        )
        for c in cards
    ]
    header: tuple[str, ...] = ("#", "product", "options", "price", "stock", "not a match")
    if not any(c.breaks for c in cards):
        header, rows = header[:-1], [row[:-1] for row in rows]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    rule = "  ".join("-" * w for w in widths)
    head = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    return [head, rule, *lines]


def _timings(reply: Reply) -> str:
    return "(" + ", ".join(f"{name} {ms:.1f} ms" for name, ms in reply.timings.items()) + ")"


@click.command("chat")
@assistant_options
@click.option("--session", "session_id", default=None, help="Continue (or start) this session.")
@click.option("--merchant", is_flag=True, help="Speak as the store's merchant (back office).")
@click.option("--timings", "show_timings", is_flag=True, help="Print each turn's latency.")
@click.option(
    "--merchant-url",
    default=None,
    help="Shop at this ACP merchant (its product feed, its checkout) instead of the built-in "
    "store, e.g. http://127.0.0.1:8780 (cartagent merchant).",
)
@click.option(
    "--merchant-token",
    default=None,
    help="The bearer token the merchant gave this agent  "
    "[env var: CARTAGENT_MERCHANT_AGENT_TOKEN].",
)
@click.option(
    "--ucp-profile",
    default=None,
    help="Shop at --merchant-url over UCP, presenting this platform profile URL (UCP-Agent); "
    "without it the merchant is spoken to over ACP.",
)
@click.option(
    "--allow-private-urls",
    is_flag=True,
    help="Let --merchant-url (and the endpoints its discovery document names) be at loopback "
    "or private addresses, e.g. a merchant on 127.0.0.1. For local development only.",
)
@click.option(
    "--buyer",
    "buyer_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="TOML with the shopper's name, email, line_one, [line_two], city, state, "
    "postal_code, country and PayPal payment_token; default: a demo buyer "
    "(fine against the local sandbox only).",
)
def chat(
    options: AssistantOptions,
    session_id: str | None,
    merchant: bool,
    show_timings: bool,
    merchant_url: str | None,
    merchant_token: str | None,
    ucp_profile: str | None,
    allow_private_urls: bool,
    buyer_file: Path | None,
) -> None:
    """Chat with the shopping assistant (one turn per line when stdin is not a terminal)."""
    client = paypal_client(options)
    chosen = run_settings().merchant
    token = option_or(merchant_token, chosen.agent_token)
    shop = (
        None
        if merchant_url is None
        else _merchant(
            merchant_url,
            token,
            ucp_profile,
            allow_private=allow_private_urls,
            signing_secret=chosen.signing_secret,
        )
    )
    shopper = None if shop is None else load_shopper(buyer_file)
    assistant = build_assistant(options, client, merchant=shop, shopper=shopper)
    try:
        session = assistant.open_session(session_id)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--session") from None
    interactive = sys.stdin.isatty()
    click.echo(f"session {session}", err=not interactive)
    with asyncio.Runner() as runner:
        try:
            if not interactive:
                failed = 0
                for line in sys.stdin:
                    try:
                        reply = runner.run(
                            assistant.turn(session, line.rstrip("\r\n"), merchant=merchant)
                        )
                    except Exception as error:  # one turn's bug must not end the conversation
                        failed += 1
                        log.exception("turn failed")
                        click.echo(f"[error] {_FAILED} ({type(error).__name__})\n")
                        continue
                    domain = reply.domain.value if reply.domain else "refused"
                    click.echo(f"[{domain}] {reply.text}")
                    for card in reply.cards:
                        click.echo(_card_line(card))
                    if show_timings:
                        click.echo(_timings(reply))
                    click.echo()
                if failed:
                    raise SystemExit(1)
                return
            click.echo("Ask for products, refine ('cheaper', 'in red'), pick ('the second one').")
            click.echo("Ctrl-D to leave.")
            while True:
                try:
                    text = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
                except (EOFError, click.Abort):
                    click.echo()
                    return
                try:
                    reply = runner.run(assistant.turn(session, text, merchant=merchant))
                except Exception as error:  # one turn's bug must not end the conversation
                    log.exception("turn failed")
                    click.echo(f"{_FAILED} ({type(error).__name__})", err=True)
                    continue
                click.echo(reply.text)
                if reply.cards:
                    for row in _table(reply.cards):
                        click.echo("  " + row)
                if show_timings:
                    click.echo(_timings(reply))
        finally:
            runner.run(client.aclose())
            if shop is not None:
                shop.close()


def _merchant(
    url: str,
    token: str | None,
    ucp_profile: str | None,
    *,
    allow_private: bool,
    signing_secret: str | None = None,
) -> ShopClient:
    """The merchant's client; with ``signing_secret`` (``CARTAGENT_MERCHANT_SIGNING_SECRET``,
    what a merchant started with ``--signing-secret`` shares) every request is signed."""
    from ..errors import CheckoutError, ConfigurationError
    from ..shopping import AcpClient, UcpClient

    if not token:
        raise click.UsageError(
            "--merchant-url needs --merchant-token (or CARTAGENT_MERCHANT_AGENT_TOKEN)"
        )
    try:
        if ucp_profile is not None:
            return UcpClient.discover(
                url,
                token,
                profile_url=ucp_profile,
                allow_private=allow_private,
                signing_secret=signing_secret,
            )
        return AcpClient.discover(
            url, token, allow_private=allow_private, signing_secret=signing_secret
        )
    except (CheckoutError, ConfigurationError) as error:
        refused = isinstance(error, CheckoutError) and error.code == "destination_refused"
        hint = " (pass --allow-private-urls for a merchant on this machine)" if refused else ""
        raise click.UsageError(f"{url}: {error}{hint}") from None
