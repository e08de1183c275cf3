"""``cartagent bench sandbox``: flows, latency, and where each flow's CPU went."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cartagent.bench.cpu import CpuMeter, ceiling, processes_named
from cartagent.bench.sandbox import ROLES, Result, ceiling_lines, render
from cartagent.cli.main import cli
from tests.conftest import BACKENDS, POSTGRES_ADMIN_URL, _drop_postgres_database


def _result(flows: int = 400, cpu: dict[str, float] | None = None) -> Result:
    return Result("postgresql", 8, flows, 0, 2.0, [0.01] * 98 + [0.05] * 2, cpu or {})


def test_cpu_per_flow_by_role_and_the_ceiling_it_sets() -> None:
    run = _result(cpu={"sandbox": 2.0, "postgres": 1.2, "client": 0.8})
    assert [run.cpu_ms_per_flow(role) for role in ROLES] == [5.0, 3.0, 2.0]
    assert "CPU ms/flow: sandbox / postgres / client" in render([run])
    assert "| 200     | 10.0   | 50.0   | 5.00 / 3.00 / 2.00 " in render([run])
    # 10 CPU ms per flow: two busy cores give 200 flows/s at most
    assert ceiling_lines([run], cores=2) == [
        "postgresql, 8 client(s): 10.00 CPU ms per flow in all; "
        "2 cores fully busy would give at most 200 flows/s"
    ]
    assert run.to_json()["cpu_ms_per_flow"] == {"sandbox": 5.0, "postgres": 3.0, "client": 2.0}
    assert (run.to_json()["flows_per_s"], run.to_json()["p50_ms"]) == (200.0, 10.0)
    sqlite = _result(cpu={"sandbox": 2.0, "client": 0.8})
    assert "| 5.00 / - / 2.00 " in render([sqlite])
    assert "| - / - / - " in render([_result()])
    assert ceiling_lines([_result()], cores=2) == []
    assert math.isnan(ceiling(0, {"sandbox": 1.0}, 2)) and math.isnan(ceiling(5, {}, 2))


_BURNER = """
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME: the command name
print("ready", flush=True)
for line in sys.stdin:
    end = time.process_time() + float(line)
    while time.process_time() < end:
        pass
    print("ok", flush=True)
"""


class _Burner:
    """A child process named ``name`` that burns the CPU seconds it is sent."""

    def __init__(self, name: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BURNER, name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "ready\n"

    def burn(self, seconds: float) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{seconds}\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "ok\n"

    def end(self) -> None:
        self.proc.communicate()


linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


@linux
@pytest.mark.slow
def test_the_meter_counts_what_each_process_used_between_its_readings() -> None:
    tag = f"ca{os.getpid() % 100000}"
    tree, gone = _Burner(f"{tag}-tree"), _Burner(f"{tag}-gone")
    named = {f"{tag}-late": "late", f"{tag}-gone": "gone"}
    meter = CpuMeter(tree.proc.pid, lambda _: "worker", named)
    try:
        gone.burn(0.1)
        meter.start()
        gone.end()  # exits between the readings: counts for nothing, and never below zero
        tree.burn(0.3)
        late = _Burner(f"{tag}-late")  # starts between them: all it used counts
        late.burn(0.2)
        used = meter.stop()
        late.end()
    finally:
        tree.end()
    assert 0.28 <= used["worker"] <= 0.6, used
    assert 0.18 <= used["late"] <= 0.8, used
    assert "gone" not in used
    assert used["client"] >= 0


@linux
def test_processes_are_found_by_their_command_name() -> None:
    burner = _Burner(f"cb{os.getpid() % 100000}-named")
    try:
        found = processes_named(f"cb{os.getpid() % 100000}-named")
    finally:
        burner.end()
    assert list(found) == [burner.proc.pid]
    assert sys.executable in found[burner.proc.pid][0]


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_a_real_sandbox_is_measured_on_each_backend(tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    args = ["bench", "sandbox", "--clients", "2", "--seconds", "1", "--workers", "1"]
    args += ["--json", str(figures)]
    name = f"cartagent_bench_test_{os.getpid()}"
    if "postgresql" in BACKENDS:
        args += ["--postgres", POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"]
    else:
        args += ["--postgres", ""]
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        if "postgresql" in BACKENDS:
            _drop_postgres_database(name)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| sqlite")]
    assert len(rows) == 1 and "| 0      |" in rows[0]  # no errors
    assert "sqlite, 2 client(s):" in result.output
    runs = json.loads(figures.read_text())["runs"]
    assert runs[0]["backend"] == "sqlite" and runs[0]["clients"] == 2
    assert runs[0]["flows"] > 0 and runs[0]["errors"] == 0
    assert 0 < runs[0]["p50_ms"] <= runs[0]["p99_ms"]
    assert runs[0]["cpu_ms_per_flow"]["sandbox"] > 0
    assert runs[0]["cpu_ms_per_flow"]["postgres"] is None  # SQLite has no server
    if "postgresql" in BACKENDS:
        row = next(line for line in result.output.splitlines() if line.startswith("| postgres"))
        sandbox, postgres, client = row.split("|")[-2].strip().split(" / ")
        assert float(sandbox) > 0 and float(client) > 0
        if processes_named("postgres"):  # the server runs on this machine: its CPU is read
            assert float(postgres) > 0
        else:  # a server elsewhere (another host, another container) is not measured
            assert postgres == "-"
        assert "postgresql, 2 client(s):" in result.output
