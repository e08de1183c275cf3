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

from .search import load_catalog, locate_catalog
from .understanders import model_option, understander_for

if TYPE_CHECKING:
    from ..assistant import Assistant, ProductCard, Reply


def _default_db() -> str:
    from ..settings import _data_dir

    return f"sqlite:///{_data_dir() / 'chat.db'}"


def _build(model: str, db_url: str, catalog_path: str | None) -> Assistant:
    from ..assistant import Assistant, ConversationStore, EmbeddingRouter, ModelRouter, Router
    from ..retrieval.embeddings import MiniLMEmbedder, minilm_model_dir
    from ..retrieval.lexical import LexicalIndex
    from ..retrieval.search import Searcher
    from ..retrieval.understanding import ModelUnderstander

    try:
        minilm_model_dir()
    except FileNotFoundError as error:
        raise click.UsageError(f"the router needs the MiniLM embedder: {error}") from None
    understand = understander_for(model)
    products = load_catalog(locate_catalog(catalog_path))
    searcher = Searcher(LexicalIndex.build(products), understand=understand)
    embedded = EmbeddingRouter(MiniLMEmbedder())
    embedded.warm_up()
    router: Router = embedded
    capable = None
    if model == "openai" and isinstance(understand, ModelUnderstander):
        capable = understand.model
        router = ModelRouter(capable, fallback=embedded)
    store = ConversationStore.open(db_url)
    return Assistant(router, store, searcher=searcher, model=capable)


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
@model_option
@click.option("--session", "session_id", default=None, help="Continue (or start) this session.")
@click.option(
    "--db",
    "db_url",
    default=None,
    help="SQLAlchemy URL of the conversation store: sqlite:///path.db or "
    "postgresql://user@host/db; default: chat.db in cartagent's data folder.",
)
@click.option(
    "--catalog",
    "catalog_path",
    default=None,
    help="A products file or a tau-bench retail folder; default: the tau-bench store.",
)
@click.option("--timings", "show_timings", is_flag=True, help="Print each turn's latency.")
def chat(
    model: str,
    session_id: str | None,
    db_url: str | None,
    catalog_path: str | None,
    show_timings: bool,
) -> None:
    """Chat with the shopping assistant (one turn per line when stdin is not a terminal)."""
    assistant = _build(model, db_url or _default_db(), catalog_path)
    try:
        session = assistant.open_session(session_id)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--session") from None
    interactive = sys.stdin.isatty()
    click.echo(f"session {session}", err=not interactive)
    with asyncio.Runner() as runner:
        if not interactive:
            for line in sys.stdin:
                reply = runner.run(assistant.turn(session, line.rstrip("\r\n")))
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
            reply = runner.run(assistant.turn(session, text))
            click.echo(reply.text)
            if reply.cards:
                for row in _table(reply.cards):
                    click.echo("  " + row)
            if show_timings:
                click.echo(_timings(reply))
