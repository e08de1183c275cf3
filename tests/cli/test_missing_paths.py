"""A file or folder given on the command line that is not there is a usage error naming the
option and the path, not a traceback, whichever command takes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.cli.main import cli

CASES = [
    (["search", "red", "--catalog", "nofile.json"], "--catalog"),
    (["catalog", "build", "nofile.json", "--out", "index"], "SOURCE"),
    (["eval", "retrieval", "--no-dense", "--catalog", "nofile.json"], "--catalog"),
    (["eval", "retrieval", "--no-dense", "--set", "nofile.jsonl"], "--set"),
    (["eval", "retrieval", "--no-dense", "--webshop", "nofile"], "--webshop"),
    (["eval", "understanding", "--set", "nofile.jsonl"], "--set"),
    (["eval", "discovery", "--set", "nofile.jsonl"], "--set"),
    (["bench", "retrieval-slm", "--models", "rules", "--test", "nofile.jsonl"], "--test"),
    (["bench", "retrieval-slm", "--models", "rules"], "--test"),  # its default, tune-data/
    (["bench", "search", "--sizes", "10", "--workdir", "nodir"], "--workdir"),
    (["bench", "merchant", "--catalog", "nofile.json"], "--catalog"),
    (["merchant", "--terms", "nofile.toml"], "--terms"),
    (["tune", "data", "--catalog", "nofile.json", "--size", "10"], "--catalog"),
    (["tune", "train", "--data", "nodir"], "--data"),
    (["tune", "train"], "--data"),  # its default, tune-data/
    (["tune", "train", "--config", "nofile.toml"], "--config"),
    (["tune", "sweep", "--data", "nodir"], "--data"),
    (["tune", "sweep", "--config", "nofile.toml"], "--config"),
]


@pytest.mark.parametrize(("args", "option"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_missing_path_is_a_usage_error_naming_the_option_and_the_path(
    args: list[str], option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # an empty folder: the relative paths are not there
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # click's exit, not an escaped error
    assert "Traceback" not in result.output
    error = result.output.splitlines()[-1]
    path = next((a for a in args if a.startswith("no")), "tune-data")
    assert error.startswith("Error: Invalid value for ") and option in error, error
    assert path in error, error


def test_a_workdir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    given = tmp_path / "file"
    given.write_text("")
    result = CliRunner().invoke(cli, ["bench", "search", "--workdir", str(given)])
    assert result.exit_code == 2
    assert "Invalid value for '--workdir'" in result.output and "is a file" in result.output
