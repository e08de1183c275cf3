"""CPU time of a benchmark's processes, read from ``/proc`` (Linux), so a run can say where
its cores went: the server under test, the servers it calls, the load generator itself.

On a machine without ``/proc`` every reading is empty and callers print "-".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["CpuMeter", "ceiling", "ceiling_line", "ms_per", "process_tree", "processes_named"]

PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[str, int, float] | None:
    """``(command name, parent pid, user + system seconds)`` of ``pid``; None if it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ")".
    fields = text[text.rindex(")") + 2 :].split()
    name = text[text.index("(") + 1 : text.rindex(")")]
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def _all_stats() -> dict[int, tuple[str, int, float]]:
    if not PROC.is_dir():
        return {}
    return {
        int(entry.name): found
        for entry in PROC.iterdir()
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None
    }


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


Stats = Mapping[int, tuple[str, int, float]]
"""One reading of ``/proc``: pid → (command name, parent pid, CPU seconds so far)."""


def process_tree(root: int, stats: Stats | None = None) -> dict[int, tuple[str, float]]:
    """``root`` and every descendant: pid → (command line, CPU seconds used so far), from
    ``stats`` (default: ``/proc`` read now)."""
    stats = _all_stats() if stats is None else stats
    parents = {pid: parent for pid, (_, parent, _) in stats.items()}
    used = {pid: seconds for pid, (_, _, seconds) in stats.items()}
    tree = {root} if root in used else set()
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return {pid: (_command(pid), used[pid]) for pid in tree}


def processes_named(name: str, stats: Stats | None = None) -> dict[int, tuple[str, float]]:
    """Every process whose command name is ``name`` (``postgres``: a PostgreSQL server's
    processes, which are no one's children here): pid → (command line, CPU seconds so far)."""
    stats = _all_stats() if stats is None else stats
    return {
        pid: (_command(pid), seconds)
        for pid, (command, _, seconds) in stats.items()
        if command == name
    }


def ceiling(done: int, cpu: Mapping[str, float], cores: int) -> float:
    """What ``cores`` fully busy would complete per second at ``cpu`` seconds for ``done``
    units: no tuning of waits and locks beats it, only less CPU per unit (NaN: not measured)."""
    total = sum(cpu.values())
    return done * cores / total if total > 0 and done else float("nan")


def ms_per(cpu: Mapping[str, float], role: str, done: int) -> float:
    """CPU milliseconds ``role`` spent per unit of ``done`` (NaN if not measured)."""
    if role not in cpu or not done:
        return float("nan")
    return cpu[role] * 1000 / done


def ceiling_line(label: str, done: int, cpu: Mapping[str, float], cores: int, unit: str) -> str:
    """``label``'s CPU ms per ``unit`` in all, and the ``unit``s/s ``cores`` could give."""
    return (
        f"{label}: {sum(cpu.values()) * 1000 / done:.2f} CPU ms per {unit} in all; "
        f"{cores} cores fully busy would give at most {ceiling(done, cpu, cores):.0f} {unit}s/s"
    )


Role = Callable[[str], str]
"""Names the role of a process from its command line (e.g. "merchant", "sandbox")."""


class CpuMeter:
    """CPU seconds per role between :meth:`start` and :meth:`stop`: the process tree under
    ``root`` split by ``role``, each process named a key of ``named`` (anywhere on the machine)
    as that key's role, and this process as ``"client"``.

    A process that exits between the two readings counts for nothing (its CPU time is gone
    with it): measure servers whose processes live through the run (a connection pool's
    database backends do). One started in between counts all it used."""

    def __init__(self, root: int, role: Role, named: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.role = role
        self.named = dict(named or {})
        self._before: dict[int, tuple[str, float]] = {}

    def _now(self) -> dict[int, tuple[str, float]]:
        """pid → (role, CPU seconds so far); this process as ``"client"``."""
        stats = _all_stats()  # one pass over /proc for the tree and the named processes
        readings = {
            pid: (self.role(command), seconds)
            for pid, (command, seconds) in process_tree(self.root, stats).items()
        }
        for process, name in self.named.items():
            for pid, (_, seconds) in processes_named(process, stats).items():
                readings[pid] = (name, seconds)
        if readings:
            times = os.times()
            readings[os.getpid()] = ("client", times.user + times.system)
        return readings

    def start(self) -> None:
        self._before = self._now()

    def stop(self) -> Mapping[str, float]:
        totals: dict[str, float] = {}
        for pid, (name, seconds) in self._now().items():
            before = self._before.get(pid)
            used = seconds - before[1] if before is not None and before[0] == name else seconds
            totals[name] = totals.get(name, 0.0) + used
        return totals
