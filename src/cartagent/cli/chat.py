"""``cartagent chat``: talk to the assistant in the terminal, or script it through stdin.

On a terminal it is a prompt loop that prints product cards as a compact table. When stdin is
not a terminal it reads one user turn per line and prints one reply block per turn (the
domain and the answer, one line per card, then an empty line), so it can be scripted. The
session id goes to stderr; pass it back with ``--session`` to continue the conversation.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

import click

from .assistant_setup import AssistantOptions, assistant_options, build_assistant, paypal_client

if TYPE_CHECKING:
    from ..assistant import ProductCard, Reply


def _card_line(card: ProductCard) -> str:
    ids = f"[product {card.id}" + (f", variant {card.variant_id}]" if card.variant_id else "]")
    return f"  {card.rank}. {card.describe()}  {ids}"


def _table(cards: tuple[ProductCard, ...]) -> list[str]:
    rows = [
        (
            str(c.rank),
            c.title,
            ", ".join(c.options.values()),
            "-" if c.price is None else f"{c.price} {c.currency}",
            "in stock" if c.available else "out of stock",
        )
        for c in cards
    ]
    header = ("#", "product", "options", "price", "stock")
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
def chat(
    options: AssistantOptions, session_id: str | None, merchant: bool, show_timings: bool
) -> None:
    """Chat with the shopping assistant (one turn per line when stdin is not a terminal)."""
    client = paypal_client(options)
    assistant = build_assistant(options, client)
    try:
        session = assistant.open_session(session_id)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--session") from None
    interactive = sys.stdin.isatty()
    click.echo(f"session {session}", err=not interactive)
    with asyncio.Runner() as runner:
        try:
            if not interactive:
                for line in sys.stdin:
                    reply = runner.run(
                        assistant.turn(session, line.rstrip("\r\n"), merchant=merchant)
                    )
                    domain = reply.domain.value if reply.domain else "refused"
                    click.echo(f"[{domain}] {reply.text}")
                    for card in reply.cards:
                        click.echo(_card_line(card))
                    if show_timings:
                        click.echo(_timings(reply))
                    click.echo()
                return
            click.echo("Ask for products, refine ('cheaper', 'in red'), pick ('the second one').")
            click.echo("Ctrl-D to leave.")
            while True:
                try:
                    text = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
                except (EOFError, click.Abort):
                    click.echo()
                    return
                reply = runner.run(assistant.turn(session, text, merchant=merchant))
                click.echo(reply.text)
                if reply.cards:
                    for row in _table(reply.cards):
                        click.echo("  " + row)
                if show_timings:
                    click.echo(_timings(reply))
        finally:
            runner.run(client.aclose())
