"""Nothing in the project reads from beside the clone: a newcomer has no folder next to it.

The data the code and the tests need ships in the package (``cartagent.data``, the specs under
``cartagent.sandbox`` and ``cartagent.commerce``) or lies under ``tests/``. This test reads every
text file of the source, the tests, the scripts and the build files for a path to the sibling
folder; ``scripts/check-self-contained.sh`` runs tests from a fresh clone to prove the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

CHECKED = ("src", "tests", "scripts", ".ci", "Makefile", "pyproject.toml")
SKIPPED_FOLDERS = {"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis"}

# Written in parts, so that this file is not itself a path to the folder it forbids.
UP, NAME = "..", "shared"
# The ways a path to the folder beside the clone has been written (see the examples below): up
# a level then its name, its name then "data", from the root's parent, `Path("..", name)`, and
# the old helper names.
SIBLING = re.compile(
    rf"""\.\.[/\\]{NAME}\b"""
    rf"""|\b{NAME}[/\\]data\b"""
    rf"""|\.parents?(?:\[\d+\])?\s*/\s*["']{NAME}["']"""
    rf"""|["']\.\.["']\s*,\s*["']{NAME}["']"""
    r"""|\bROOT\.parent\b"""
    rf"""|\b{NAME.upper()}\b|\b{NAME}_file\b"""
)


def _text_files() -> Iterator[Path]:
    for name in CHECKED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            skipped = any(p in SKIPPED_FOLDERS or p.endswith(".egg-info") for p in path.parts)
            if path.is_file() and not skipped and path != Path(__file__).resolve():
                yield path


def _mentions(path: Path) -> Iterator[str]:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return  # a binary file (a GGUF adapter, an image)
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if SIBLING.search(line):
            yield f"{path.relative_to(ROOT)}:{number}: {line.strip()}"


def test_no_file_reads_the_folder_beside_the_clone() -> None:
    found = [mention for path in _text_files() for mention in _mentions(path)]
    assert found == [], "read packaged data or data under tests/ instead:\n" + "\n".join(found)


def test_the_pattern_catches_each_way_it_was_written() -> None:
    written = [
        f'{NAME.upper()} = ROOT.parent / "{NAME}"',
        f'TAU = Path(__file__).resolve().parents[2].parent / "{NAME}" / "data" / "tau"',
        f'source = {NAME.upper()} / "data/agentic-commerce/acp"',
        f'pytest.skip("needs {UP}/{NAME}/data/tau-bench-retail")',
        f'Path("{UP}", "{NAME}", "data")',
        f"return {NAME}_file(WEBSHOP_DEV)",
    ]
    assert [line for line in written if not SIBLING.search(line)] == []
    innocent = [f'{NAME} = tmp_path / "{NAME}"', f'headers={{"Idempotency-Key": "{NAME}"}}']
    assert [line for line in innocent if SIBLING.search(line)] == []
