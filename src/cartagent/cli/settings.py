"""The run's :class:`~cartagent.settings.Settings`: read from the environment once per command."""

from __future__ import annotations

from typing import TypeVar, cast

import click

from ..settings import Settings

_KEY = "cartagent.settings"

T = TypeVar("T")


def run_settings() -> Settings:
    """The settings of the command being run, read on first use (click's ``meta`` is shared by
    the whole run: a group and its subcommands see the same object)."""
    meta = click.get_current_context().meta
    if _KEY not in meta:
        meta[_KEY] = Settings.from_env()
    return cast(Settings, meta[_KEY])


def option_or(value: T | None, setting: T) -> T:
    """The option's value when it was given on the command line, else the setting's."""
    return setting if value is None else value
