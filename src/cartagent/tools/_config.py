"""Which tools are on: PayPal-toolkit-style ``actions`` per family, failing closed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError


@dataclass(frozen=True)
class ToolkitConfig:
    """``actions={"invoices": {"create": True, "list": True}, "orders": {"get": True}}``.

    A tool is enabled only when its family and action are both named and set to ``True``;
    anything absent is off. Unknown families or actions are a configuration error rather
    than being silently ignored.
    """

    actions: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)

    def enables(self, family: str, action: str) -> bool:
        return bool(self.actions.get(family, {}).get(action, False))

    def check_against(self, known: Iterable[tuple[str, str]]) -> None:
        known_set = set(known)
        families = {f for f, _ in known_set}
        for family, actions in self.actions.items():
            if family not in families:
                raise ConfigurationError(
                    f"unknown tool family {family!r}; known: {', '.join(sorted(families))}"
                )
            for action in actions:
                if (family, action) not in known_set:
                    valid = sorted(a for f, a in known_set if f == family)
                    raise ConfigurationError(
                        f"unknown action {action!r} for {family!r}; known: {', '.join(valid)}"
                    )

    @classmethod
    def everything(cls, known: Iterable[tuple[str, str]]) -> ToolkitConfig:
        actions: dict[str, dict[str, bool]] = {}
        for family, action in known:
            actions.setdefault(family, {})[action] = True
        return cls(actions)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ToolkitConfig:
        """Parse ``{"actions": {...}}`` (e.g. from JSON), validating the shape."""
        raw = data.get("actions", data)
        if not isinstance(raw, Mapping):
            raise ConfigurationError("actions must be a mapping of family -> {action: bool}")
        actions: dict[str, dict[str, bool]] = {}
        for family, entries in raw.items():
            if not isinstance(entries, Mapping) or not all(
                isinstance(v, bool) for v in entries.values()
            ):
                raise ConfigurationError(f"actions[{family!r}] must map action names to true/false")
            actions[str(family)] = {str(k): bool(v) for k, v in entries.items()}
        return cls(actions)
