"""API keys and the principals they stand for.

A keys file (TOML or JSON) lists every key with the principal it authenticates::

    [[keys]]
    key = "a long random secret"
    name = "alice"
    role = "shopper"        # or "merchant"

(JSON: ``{"keys": [{"key": ..., "name": ..., "role": ...}]}``.) Several keys may name one
principal (to rotate keys); a name always has one role. :func:`write_demo_keys` creates a file
with one random shopper key and one random merchant key.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..files import private_folder

__all__ = ["MIN_KEY_LENGTH", "ApiKeys", "Principal", "Role", "load_keys", "write_demo_keys"]

MIN_KEY_LENGTH = 16


class Role(StrEnum):
    """What a principal may do: shoppers shop; merchants also do the store's back office."""

    SHOPPER = "shopper"
    MERCHANT = "merchant"


@dataclass(frozen=True)
class Principal:
    """Who is calling: the name their sessions are owned by, and their role."""

    name: str
    role: Role


class ApiKeys:
    """Bearer keys mapped to principals; lookups compare in constant time."""

    def __init__(self, entries: Iterable[tuple[str, Principal]]) -> None:
        self._entries: list[tuple[bytes, Principal]] = []
        roles: dict[str, Role] = {}
        for key, principal in entries:
            if len(key) < MIN_KEY_LENGTH:
                raise ConfigurationError(
                    f"the key of {principal.name!r} is shorter than {MIN_KEY_LENGTH} characters"
                )
            if roles.setdefault(principal.name, principal.role) is not principal.role:
                raise ConfigurationError(f"{principal.name!r} is listed with two roles")
            if any(hmac.compare_digest(key.encode(), known) for known, _ in self._entries):
                raise ConfigurationError(f"the key of {principal.name!r} is listed twice")
            self._entries.append((key.encode(), principal))
        if not self._entries:
            raise ConfigurationError("no API keys are configured")

    @property
    def principals(self) -> list[Principal]:
        return list(dict.fromkeys(p for _, p in self._entries))

    def listing(self) -> list[tuple[str, Principal]]:
        """Every key with its principal (to show the demo keys to their operator)."""
        return [(key.decode(), principal) for key, principal in self._entries]

    def principal(self, key: str) -> Principal | None:
        """The principal of ``key``, or ``None``."""
        offered = key.encode()
        found = None
        # Every key is compared, so the time taken says nothing about which key was close.
        for known, principal in self._entries:
            if hmac.compare_digest(offered, known):
                found = principal
        return found


def _entry(item: Any, where: str) -> tuple[str, Principal]:
    if not isinstance(item, Mapping):
        raise ConfigurationError(f"{where}: each key is a table with key, name and role")
    key, name, role = item.get("key"), item.get("name"), item.get("role")
    if not isinstance(key, str) or not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"{where}: key and name must be non-empty strings")
    try:
        return key, Principal(name, Role(str(role)))
    except ValueError:
        raise ConfigurationError(
            f"{where}: role must be 'shopper' or 'merchant', not {role!r}"
        ) from None


def load_keys(path: Path) -> ApiKeys:
    """The keys in the TOML or JSON file ``path`` (by suffix; TOML unless ``.json``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"cannot read the API keys file {path}: {error}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise ConfigurationError(f"{path} is not valid: {error}") from None
    items = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ConfigurationError(f"{path}: expected a list of keys under 'keys'")
    return ApiKeys(_entry(item, f"{path}, key {n}") for n, item in enumerate(items, 1))


DEMO_PRINCIPALS = (
    Principal("demo-shopper", Role.SHOPPER),
    Principal("demo-merchant", Role.MERCHANT),
)


def write_demo_keys(path: Path) -> ApiKeys:
    """Create ``path`` (readable by its owner only) with a random key per demo principal.

    Raises ``FileExistsError`` if it exists: an existing file is never overwritten.
    """
    entries = [(secrets.token_urlsafe(32), p) for p in DEMO_PRINCIPALS]
    lines = ["# cartagent API keys: send one as 'Authorization: Bearer <key>'.\n"]
    for key, principal in entries:
        # token_urlsafe's alphabet needs no escaping in a TOML string.
        lines.append(
            f'\n[[keys]]\nkey = "{key}"\nname = "{principal.name}"\nrole = "{principal.role}"\n'
        )
    private_folder(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write("".join(lines))
    return ApiKeys(entries)
