"""The README's shell blocks, read as a newcomer reads them, and a terminal that runs them.

Every ```bash block of the README is a command a newcomer copies. A block runs in one persistent
bash session (as in a terminal: what a block exports, later blocks see), in the repository's
folder, with a throwaway data folder. An HTML comment on the line before a block says how it runs:

- ``<!-- readme-test: server ready=URL -->``: a server the reader starts in another terminal; it is
  started in the background and the next blocks run once URL answers. Servers stop at the end
  of their ``##`` section.
- ``<!-- readme-test: run expect="TEXT" ... -->``: a block whose output must contain each TEXT
  (a ``curl -s`` that gets an error answer still exits 0).
- ``<!-- readme-test: skip REASON -->``: not run (the set-up block only: ``make test`` is what runs
  this test).

The documented ports are replaced by free ones (each block's ``127.0.0.1:PORT``, ``--port PORT``,
URLs and a server command without ``--port``), so the run never meets a server the developer
has running. ``<placeholder>`` words are the reader's own values: the test supplies them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

README = Path(__file__).resolve().parents[1] / "README.md"

# The ports the README documents: the sandbox, the assistant's API, the merchant, its two MCP
# bindings, and the MCP server over HTTP (with a token, with OAuth).
DOCUMENTED_PORTS = (8765, 8000, 8780, 8781, 8782, 8811, 8812)
# A server command whose default port is documented, with that port.
DEFAULT_PORTS = {"serve": 8000, "merchant": 8780}

_DIRECTIVE = re.compile(r"<!--\s*readme-test:\s*(\w+)\s*(.*?)\s*-->")
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced shell block, where it sits and how it runs."""

    section: str
    line: int
    text: str
    kind: str = "run"  # run | server | skip
    argument: str = ""

    @property
    def expected(self) -> list[str]:
        """What the block's output must contain (``expect="..."``, any number)."""
        return re.findall(r'expect="([^"]*)"', self.argument)

    @property
    def ready(self) -> str:
        match = re.search(r"ready=(\S+)", self.argument)
        return match.group(1) if match else ""


@dataclass
class Ports:
    """Documented port -> the free port the run uses instead."""

    mapping: dict[int, int] = field(default_factory=dict)

    @classmethod
    def free(cls) -> Ports:
        return cls({port: _free_port() for port in DOCUMENTED_PORTS})

    def apply(self, text: str) -> str:
        def swap(match: re.Match[str]) -> str:
            port = int(match.group(2))
            return f"{match.group(1)}{self.mapping.get(port, port)}"

        text = re.sub(r"((?:127\.0\.0\.1|localhost):)(\d{4,5})\b", swap, text)
        text = re.sub(r"(--(?:[a-z]+-)*port[ =])(\d{4,5})\b", swap, text)
        return "\n".join(self._default_port(line) for line in text.splitlines())

    def _default_port(self, line: str) -> str:
        match = re.match(r"(\s*cartagent (serve|merchant))\b(.*)$", line)
        if match is None or re.search(r"--port\b", match.group(3)):
            return line
        port = self.mapping[DEFAULT_PORTS[match.group(2)]]
        return f"{match.group(1)} --port {port}{match.group(3)}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def blocks(text: str | None = None) -> list[Block]:
    """The README's bash blocks in order, each with its ``##`` section and directive."""
    lines = (README.read_text() if text is None else text).splitlines()
    found: list[Block] = []
    section = ""
    directive: tuple[str, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence is None:
            if line.startswith("## "):
                section = line[3:].strip()
            if (match := _DIRECTIVE.search(line)) is not None:
                directive = (match.group(1), match.group(2))
            elif line.strip():
                directive = None
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        if fence.group(1) in ("bash", "sh", "shell"):
            kind, argument = directive or ("run", "")
            body = "\n".join(lines[index + 1 : end])
            found.append(Block(section, index + 1, body, kind, argument))
        directive = None
        index = end + 1
    return found


def placeholders(text: str) -> set[str]:
    """The ``<word ...>`` values a reader must put in (not shell redirections)."""
    return set(re.findall(r"<([a-z][a-z -]*[a-z])>", text))


class BlockFailed(AssertionError):
    pass


class Terminal:
    """One bash session, as a reader's terminal: blocks are sourced into it one by one."""

    def __init__(self, cwd: Path, env: dict[str, str], logs: Path) -> None:
        self.cwd, self.env, self.logs = cwd, env, logs
        shutil.rmtree(logs, ignore_errors=True)  # a pid file of an earlier run is not a server
        logs.mkdir(parents=True)
        self._out = (logs / "terminal.out").open("w+")
        self._err = (logs / "terminal.err").open("w+")
        self._shell = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            stdin=subprocess.PIPE,
            stdout=self._out,
            stderr=self._err,
            cwd=cwd,
            env=env,
            text=True,
        )
        self._servers: list[tuple[int, Path]] = []
        self._count = 0
        self._send("set -o pipefail; trap 'echo \"__ERR__ $? line $LINENO\" >&2' ERR")

    def _send(self, command: str) -> None:
        assert self._shell.stdin is not None
        self._shell.stdin.write(command + "\n")
        self._shell.stdin.flush()

    def _script(self, text: str) -> Path:
        self._count += 1
        path = self.logs / f"block-{self._count:02d}.sh"
        path.write_text(text + "\n")
        return path

    def run(self, text: str, timeout: float) -> str:
        """Source the block; its output, or BlockFailed naming the failing line."""
        script = self._script(text)
        out_start, err_start = self._out.tell(), _size(self._err)
        marker = f"__DONE__{self._count}"
        self._send(f"source {shlex.quote(str(script))} < /dev/null; echo {marker}")
        deadline = time.monotonic() + timeout
        while marker not in _read_from(self._out, out_start):
            if self._shell.poll() is not None:
                raise BlockFailed(f"the shell exited ({self._shell.returncode})")
            if time.monotonic() > deadline:
                raise BlockFailed(f"still running after {timeout:.0f} s")
            time.sleep(0.1)
        output = _read_from(self._out, out_start).split(marker)[0]
        errors = _read_from(self._err, err_start)
        failed = re.findall(r"__ERR__ (\d+) line (\d+)", errors)
        if failed:
            code, line = failed[0]
            shown = text.splitlines()[int(line) - 1] if int(line) <= len(text.splitlines()) else ""
            raise BlockFailed(
                f"exit status {code} at block line {line}: {shown.strip()}\n"
                f"stdout:\n{output[-3000:]}\nstderr:\n{errors[-3000:]}"
            )
        return output

    def start(self, text: str, ready: str, timeout: float) -> None:
        """Start a server block as another terminal would, and wait until ``ready`` answers."""
        script = self._script(text)
        log = self.logs / f"server-{self._count:02d}.log"
        pid_file = self.logs / f"server-{self._count:02d}.pid"
        self._send(
            f"setsid bash {shlex.quote(str(script))} > {shlex.quote(str(log))} 2>&1 < /dev/null &"
            f" echo $! > {shlex.quote(str(pid_file))}"
        )
        deadline = time.monotonic() + timeout
        while not pid_file.exists() or not pid_file.read_text().strip():
            if time.monotonic() > deadline:
                raise BlockFailed("the server did not start")
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        self._servers.append((pid, log))
        while not _answers(ready):
            if not _alive(pid):
                raise BlockFailed(f"the server exited:\n{log.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise BlockFailed(
                    f"{ready} did not answer in {timeout:.0f} s:\n{log.read_text()[-4000:]}"
                )
            time.sleep(0.25)

    def stop_servers(self) -> None:
        for pid, _ in reversed(self._servers):
            _stop(pid)
        self._servers.clear()

    def close(self) -> None:
        self.stop_servers()
        if self._shell.poll() is None:
            self._send("exit")
            try:
                self._shell.wait(10)
            except subprocess.TimeoutExpired:
                self._shell.kill()
        self._out.close()
        self._err.close()


def _size(handle: IO[str]) -> int:
    handle.flush()
    return os.fstat(handle.fileno()).st_size


def _read_from(handle: IO[str], offset: int) -> str:
    with open(handle.name, errors="replace") as reader:
        reader.seek(offset)
        return reader.read()


def _answers(url: str) -> bool:
    try:
        with httpx.Client(timeout=2, verify=False, trust_env=False) as http:
            return http.get(url).status_code < 500
    except httpx.HTTPError:
        return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stop(pid: int) -> None:
    for sig, wait in ((signal.SIGINT, 15.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _alive(pid):
            return
