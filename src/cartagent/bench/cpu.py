"""CPU time of a benchmark's processes, read from ``/proc`` (Linux), so a run can say where
its cores went: the server under test, the servers it calls, the load generator itself.

On a machine without ``/proc`` every reading is empty and callers print "-".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["CpuMeter", "process_tree"]

PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """``(parent pid, user + system seconds)`` of ``pid``; None if it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ")".
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def process_tree(root: int) -> dict[int, tuple[str, float]]:
    """``root`` and every descendant: pid → (command line, CPU seconds used so far)."""
    if not PROC.is_dir():
        return {}
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
            parents[int(entry.name)], used[int(entry.name)] = found
    tree = {root} if root in used else set()
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return {pid: (_command(pid), used[pid]) for pid in tree}


Role = Callable[[str], str]
"""Names the role of a process from its command line (e.g. "merchant", "sandbox")."""


class CpuMeter:
    """CPU seconds per role between :meth:`start` and :meth:`stop`: the process tree under
    ``root`` split by ``role``, and this process as ``"client"``."""

    def __init__(self, root: int, role: Role) -> None:
        self.root = root
        self.role = role
        self._before: dict[str, float] = {}

    def _now(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for command, seconds in process_tree(self.root).values():
            name = self.role(command)
            totals[name] = totals.get(name, 0.0) + seconds
        if totals:
            times = os.times()
            totals["client"] = times.user + times.system
        return totals

    def start(self) -> None:
        self._before = self._now()

    def stop(self) -> Mapping[str, float]:
        after = self._now()
        return {name: after[name] - self._before.get(name, 0.0) for name in after}
