"""Building the assistant the commands serve: the understanding model is ready before the
first turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from cartagent.cli.assistant_setup import AssistantOptions, build_assistant
from cartagent.retrieval.rules import parse
from tests.web.test_serve import needs_minilm


class _Warmed:
    def __init__(self) -> None:
        self.warmed = 0

    def __call__(self, text: str, context: Any = ()) -> Any:
        return parse(text, context=context)

    def warm_up(self) -> None:
        self.warmed += 1


@needs_minilm
def test_the_understanding_model_is_loaded_when_the_assistant_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    understander = _Warmed()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setattr("cartagent.cli.assistant_setup.understander_for", lambda name: understander)
    options = AssistantOptions("tuned", f"sqlite:///{tmp_path / 'chat.db'}", None, None, None, None)
    with click.Context(click.Command("serve")):  # settings are read inside a command
        assistant = build_assistant(options, None)
    try:
        assert understander.warmed == 1
    finally:
        assistant.store.close()
