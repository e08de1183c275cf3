"""``cartagent plugins``: what each open registry holds, and which package gave each entry."""

from __future__ import annotations

import click

__all__ = ["plugins"]


@click.command()
def plugins() -> None:
    """List the understanding models, embedders and specialist plugins, with their packages.

    A package adds one with an entry point in the ``cartagent.understanders``,
    ``cartagent.embedders`` or ``cartagent.specialists`` group; see the README's Layout.
    """
    from ..assistant.specialists import SPECIALIST_PLUGINS
    from ..retrieval import EMBEDDERS, UNDERSTANDERS

    for title, group in (
        ("understanding models (--model)", UNDERSTANDERS),
        ("embedders (--embedder)", EMBEDDERS),
        ("specialist plugins", SPECIALIST_PLUGINS),
    ):
        click.echo(f"{title} [{group.group}]")
        names = list(group)
        if not names:
            click.echo("  (none installed)")
        for name in names:
            click.echo(f"  {name:<22} {group.origin(name)}")
