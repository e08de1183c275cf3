"""The README's commands exist: every `cartagent ...` line names a real command and options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_commands() -> list[str]:
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", README.read_text(), flags=re.DOTALL)
    joined = [block.replace("\\\n", " ") for block in blocks]  # line continuations
    lines = [line.split("  #")[0].strip() for block in joined for line in block.splitlines()]
    return [line for line in lines if line.startswith("cartagent ")]


def command_path(words: list[str]) -> list[str]:
    path: list[str] = []
    group = cli
    for word in words[1:]:
        commands = getattr(group, "commands", {})
        if word not in commands:
            break
        path.append(word)
        group = commands[word]
    return path


@pytest.mark.parametrize("line", readme_commands())
def test_a_readme_command_and_its_options_exist(line: str) -> None:
    words = shlex.split(line.replace("<", "").replace("|", " "))
    path = command_path(words)
    assert path, f"no cartagent command in {line!r}"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line):
        assert option in result.output, f"{option} is not an option of cartagent {' '.join(path)}"


def test_the_readme_shows_commands() -> None:
    assert len(readme_commands()) >= 10
