"""``cartagent bench mcp``: tool-call round trips over MCP stdio and HTTP against a sandbox."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click


@click.command("mcp")
@click.option("--calls", default=200, show_default=True, help="Measured calls per transport.")
@click.option("--warmup", default=20, show_default=True, help="Unmeasured calls first.")
@click.option(
    "--transports",
    default="stdio,http",
    show_default=True,
    help="Comma-separated: stdio, http.",
)
def mcp_bench(calls: int, warmup: int, transports: str) -> None:
    """get_order through `cartagent mcp` vs. the same PayPal request made directly."""
    from ..bench.mcp import render, run

    chosen = [t.strip() for t in transports.split(",") if t.strip()]
    unknown = set(chosen) - {"stdio", "http"}
    if unknown:
        raise click.BadParameter(f"unknown transports: {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory() as tmp:
        results = run(Path(tmp), calls=calls, warmup=warmup, transports=chosen)
    click.echo(render(results))
