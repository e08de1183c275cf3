"""``cartagent bench``: benchmarks that print their figures."""

from __future__ import annotations

import click


@click.group()
def bench() -> None:
    """Measure cartagent's components on this machine."""
