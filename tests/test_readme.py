"""The README's commands exist: every `cartagent ...` line names a real command and options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands_in(text: str) -> list[str]:
    """The ``cartagent ...`` commands of ``text``'s shell blocks and inline code, each as one
    line (continuations joined, comments dropped, pipelines and ``&&`` split)."""
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.DOTALL)
    joined = [block.replace("\\\n", " ") for block in blocks]  # line continuations
    lines = [line.split("  #")[0].strip() for block in joined for line in block.splitlines()]
    lines += re.findall(
        r"(?<!`)`(cartagent [^`]+)`", re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    )
    parts = [
        " ".join(part.split()) for line in lines for part in re.split(r"\|(?!\|)|&&|\$\(", line)
    ]
    return [part for part in parts if part.startswith("cartagent ")]


def readme_commands() -> list[str]:
    return [
        f"{path.relative_to(ROOT)}: {command}"
        for path in DOCUMENTS
        for command in commands_in(path.read_text())
    ]


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
    line = line.split(": ", 1)[1]
    words = shlex.split(line.replace("<", "").replace("|", " "))
    path = command_path(words)
    assert path, f"no cartagent command in {line!r}"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line):
        assert option in result.output, f"{option} is not an option of cartagent {' '.join(path)}"


def test_the_readme_shows_commands() -> None:
    assert len(readme_commands()) >= 10


def test_commands_are_found_in_blocks_pipelines_and_inline_code() -> None:
    text = (
        "Run `cartagent search x --k 3` or `cartagent[dense]`.\n"
        "```bash\nprintf 'a\\n' | cartagent chat \\\n  --session s  # comment\n"
        "K=$(cartagent keys --json)\n```\n"
    )
    assert commands_in(text) == [
        "cartagent chat --session s",
        "cartagent keys --json)",
        "cartagent search x --k 3",
    ]
