"""The run's :class:`~cartagent.settings.Settings`: read from the environment once per command."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar, cast

import click

from ..files import private_folder
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


def data_folder() -> Path:
    """The run's data folder, where keys, secrets and databases are kept: created, or left,
    readable by its owner only (0700; one made more open, e.g. by an older version, is
    tightened)."""
    folder = run_settings().data_dir
    private_folder(folder)
    try:
        if folder.stat().st_mode & 0o077:
            folder.chmod(0o700)
    except PermissionError:  # a folder someone else owns: theirs to set
        pass
    return folder


def option_or(value: T | None, setting: T) -> T:
    """The option's value when it was given on the command line, else the setting's."""
    return setting if value is None else value
