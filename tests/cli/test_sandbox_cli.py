"""``cartagent sandbox seed``: missing data is a clean command-line error, not a traceback."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cartagent.cli.main import cli


def test_seeding_from_a_folder_without_the_data_says_where_it_looked(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'sandbox.db'}"
    result = CliRunner().invoke(cli, ["sandbox", "--db", db, "seed", "--data", str(tmp_path)])
    assert result.exit_code == 1
    assert "does not hold the tau-bench retail files" in result.output
    assert "Traceback" not in result.output


def test_the_sandbox_library_does_not_speak_click() -> None:
    sandbox = Path(__file__).resolve().parents[2] / "src" / "cartagent" / "sandbox"
    speaking = [
        path.name
        for path in sandbox.rglob("*.py")
        if "import click" in path.read_text() or "from click" in path.read_text()
    ]
    assert speaking == []  # errors are raised as exceptions; the CLI words them
