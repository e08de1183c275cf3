"""``cartagent``: the command-line entry point; subcommands live in their own modules."""

from __future__ import annotations

from typing import Any

import click

from .. import __version__
from ..errors import ConfigurationError
from .bench import bench
from .catalog import catalog
from .chat import chat
from .evaluate import evaluate
from .mcp import mcp
from .merchant import merchant
from .plugins import plugins
from .sandbox import sandbox
from .search import search, understand
from .serve import serve
from .tune import tune


class _Cli(click.Group):
    """The command group: a setting a subcommand finds wrong (a database URL naming no
    database, say) ends the run with its message, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigurationError as error:
            raise click.ClickException(str(error)) from None


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cartagent")
def cli() -> None:
    """cartagent: a commerce agent with a typed PayPal toolkit and a local PayPal sandbox."""


cli.add_command(sandbox)
cli.add_command(bench)
cli.add_command(catalog)
cli.add_command(mcp)
cli.add_command(search)
cli.add_command(understand)
cli.add_command(evaluate)
cli.add_command(chat)
cli.add_command(tune)
cli.add_command(serve)
cli.add_command(merchant)
cli.add_command(plugins)


def main() -> None:
    cli()
