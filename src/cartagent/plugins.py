"""Open registries: what cartagent has built in, plus what installed packages add.

A package adds an understanding model, an embedder or a specialist by declaring an entry point
in one of :data:`GROUPS` (``pyproject.toml``)::

    [project.entry-points."cartagent.understanders"]
    echo = "my_plugin:make_understander"

and nothing in cartagent is edited. Each registry is a mapping from name to factory; a plugin's
object is imported only when its name is asked for, so a broken plugin breaks only itself (a
:class:`~cartagent.errors.ConfigurationError` naming the package), never the names beside it. A
built-in name always wins over a plugin's: a plugin that takes one is ignored with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from importlib import metadata
from typing import Generic, TypeVar

from .errors import ConfigurationError

__all__ = ["GROUPS", "PluginGroup"]

T = TypeVar("T")

GROUPS = {
    "understanders": "cartagent.understanders",
    "embedders": "cartagent.embedders",
    "specialists": "cartagent.specialists",
}
"""The entry-point groups cartagent reads, by what they register."""


def _distribution(entry: metadata.EntryPoint) -> str:
    found = entry.dist
    return found.name if found is not None else "an unnamed distribution"


class PluginGroup(MutableMapping[str, T], Generic[T]):
    """Factories by name: the ``built_in`` ones, then the entry points of ``group``.

    Reading the entry points is deferred to the first look-up of a name that is not built in
    (or a listing), and done once. Setting a name registers a factory in code, as a built-in.
    """

    def __init__(self, group: str, built_in: Mapping[str, T]) -> None:
        self.group = group
        self._built_in: dict[str, T] = dict(built_in)
        self._entries: dict[str, metadata.EntryPoint] | None = None
        self._loaded: dict[str, T] = {}

    def _plugins(self) -> dict[str, metadata.EntryPoint]:
        if self._entries is None:
            entries: dict[str, metadata.EntryPoint] = {}
            for entry in metadata.entry_points(group=self.group):
                if entry.name in self._built_in:
                    warnings.warn(
                        f"{_distribution(entry)}: {self.group} plugin {entry.name!r} is "
                        "ignored: the name is built in",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                elif entry.name in entries:
                    warnings.warn(
                        f"{self.group} plugin {entry.name!r} is declared by both "
                        f"{_distribution(entries[entry.name])} and {_distribution(entry)}; "
                        f"the first is used",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                else:
                    entries[entry.name] = entry
            self._entries = entries
        return self._entries

    def __getitem__(self, name: str) -> T:
        if name in self._built_in:
            return self._built_in[name]
        if name in self._loaded:
            return self._loaded[name]
        entry = self._plugins()[name]  # KeyError: no such name
        try:
            loaded: T = entry.load()
        except Exception as error:  # a plugin's import may fail in any way: say whose it is
            raise ConfigurationError(
                f"{self.group} plugin {name!r} ({_distribution(entry)}, {entry.value}) "
                f"failed to load: {type(error).__name__}: {error}"
            ) from error
        if not callable(loaded):
            raise ConfigurationError(
                f"{self.group} plugin {name!r} ({_distribution(entry)}, {entry.value}) is "
                f"not a factory: {type(loaded).__name__}"
            )
        self._loaded[name] = loaded
        return loaded

    def __iter__(self) -> Iterator[str]:
        yield from self._built_in
        yield from (name for name in self._plugins() if name not in self._built_in)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._built_in or name in self._plugins()

    def __setitem__(self, name: str, factory: T) -> None:
        self._built_in[name] = factory

    def __delitem__(self, name: str) -> None:
        del self._built_in[name]

    def origin(self, name: str) -> str:
        """``"cartagent"`` for a built-in name, else the distribution that declared it."""
        if name in self._built_in:
            return "cartagent"
        return _distribution(self._plugins()[name])
