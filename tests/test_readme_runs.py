"""Every shell block of the README runs as written: in one terminal, offline, on throwaway data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.readme_blocks import README, Block, BlockFailed, Ports, Terminal, blocks, placeholders

REPO = README.parent
ARTIFACTS = REPO / "test-artifacts" / "readme"
SERVER_START = 300.0  # a first `serve` embeds the demo store and assembles the ONNX model
BLOCK_TIMEOUT = 600.0


def newcomer_environment(data: Path, ports: Ports) -> dict[str, str]:
    """This process's environment as a newcomer's shell has it: no cartagent settings, no
    virtualenv on PATH (the README's own activate line puts it there), a data folder of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARTAGENT_", "PYTEST"))}
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = os.pathsep.join(
        part for part in env.get("PATH", "").split(os.pathsep) if not part.endswith(".venv/bin")
    )
    env["XDG_DATA_HOME"] = str(data)
    # The sandbox port has a setting; `serve` and `merchant` get --port from Ports.apply.
    env["CARTAGENT_SANDBOX_PORT"] = str(ports.mapping[8765])
    env["SERVE_ARGS"] = f"--port {ports.mapping[8000]}"  # `make run` passes them to serve
    env["NO_COLOR"] = "1"
    return env


def clone_of_links(folder: Path) -> Path:
    """A folder that looks like this checkout (links to its files, .venv included), so what the
    README's commands write (an index, a CSV, training data) lands in a throwaway place."""
    folder.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in (".git", "test-artifacts"):
            (folder / entry.name).symlink_to(entry)
    return folder


def runnable(block: Block, ports: Ports) -> str:
    missing = placeholders(block.text)
    assert not missing, f"README line {block.line}: fill in {sorted(missing)} for the reader"
    return ports.apply(block.text)


def test_the_readme_blocks_are_found_and_only_the_set_up_is_skipped() -> None:
    found = blocks()
    assert len(found) >= 12
    skipped = [block for block in found if block.kind == "skip"]
    assert len(skipped) == 1 and "make test" in skipped[0].text
    assert all(block.kind in ("run", "server", "skip") for block in found)
    assert all(block.ready for block in found if block.kind == "server")


def test_ports_are_replaced_in_urls_options_and_server_commands() -> None:
    ports = Ports(
        {8765: 1111, 8000: 2222, 8780: 3333, 8781: 4444, 8782: 5555, 8811: 6666, 8812: 7777}
    )
    text = (
        "curl http://127.0.0.1:8765/v1/x\n"
        "cartagent serve\n"
        "cartagent merchant --mcp-port 8781 --ucp-mcp-port 8782\n"
        "cartagent mcp --transport http --port 8811\n"
        "cartagent serve --port 9000\n"
        "echo 8000"
    )
    assert ports.apply(text).splitlines() == [
        "curl http://127.0.0.1:1111/v1/x",
        "cartagent serve --port 2222",
        "cartagent merchant --port 3333 --mcp-port 4444 --ucp-mcp-port 5555",
        "cartagent mcp --transport http --port 6666",
        "cartagent serve --port 9000",
        "echo 8000",
    ]


def test_directives_sections_and_placeholders_are_read() -> None:
    text = (
        "## One\n\n<!-- readme-test: server ready=http://127.0.0.1:8000/api -->\n"
        '```bash\ncartagent serve\n```\n\n<!-- readme-test: run expect="a b" expect="c" -->\n'
        "```bash\necho <your key>\ncat < file\n```\n"
        "## Two\n<!-- readme-test: skip the tests run this -->\n```bash\nmake test\n```\n"
        "```json\n{}\n```\n"
    )
    first, second, third = blocks(text)
    assert (first.section, first.kind, first.ready) == (
        "One",
        "server",
        "http://127.0.0.1:8000/api",
    )
    assert (second.kind, placeholders(second.text)) == ("run", {"your key"})
    assert second.expected == ["a b", "c"]
    assert (third.section, third.kind, third.argument) == ("Two", "skip", "the tests run this")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_every_readme_shell_block_runs(tmp_path: Path) -> None:
    ports = Ports.free()
    env = newcomer_environment(tmp_path / "data", ports)
    terminal = Terminal(clone_of_links(tmp_path / "cartagent"), env, ARTIFACTS)
    section = None
    try:
        for block in blocks():
            if block.section != section:
                terminal.stop_servers()
                section = block.section
            if block.kind == "skip":
                continue
            text = runnable(block, ports)
            try:
                if block.kind == "server":
                    terminal.start(text, ports.apply(block.ready), SERVER_START)
                else:
                    output = terminal.run(text, BLOCK_TIMEOUT)
                    missing = [want for want in block.expected if want not in output]
                    if missing:
                        raise BlockFailed(f"the output lacks {missing}:\n{output[-4000:]}")
            except BlockFailed as failure:
                pytest.fail(f"README line {block.line} ({block.section}):\n{text}\n\n{failure}")
    finally:
        terminal.close()
