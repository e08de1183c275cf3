"""What importing a part of cartagent costs a fresh process: wall time, and how many of
cartagent's modules (and modules in all) it loads.

Each statement runs ``runs`` times, each in a new interpreter (the operating system's file cache
warm, as it is for a command typed twice), timed inside the process around the statement alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .report import percentile, table

__all__ = ["STATEMENTS", "ImportFigures", "measure", "report"]

STATEMENTS = (
    "import cartagent.tools",
    "from cartagent.tools import ALL_TOOLS, MERCHANT_TOOLS, Toolkit",
    "import cartagent.paypal",
    "from cartagent.shopping import AcpClient",
    "from cartagent.shopping import UcpClient",
    "from cartagent.commerce import create_merchant_app",
)
"""What the layering promises to keep light, and what it costs to go further."""

_PROBE = """
import sys, time, json
start = time.perf_counter()
exec(compile(sys.argv[1], "<statement>", "exec"))
spent = time.perf_counter() - start
ours = sum(1 for name in sys.modules if name == "cartagent" or name.startswith("cartagent."))
print(json.dumps({"ms": spent * 1000, "ours": ours, "all": len(sys.modules)}))
"""


@dataclass(frozen=True)
class ImportFigures:
    statement: str
    ms: tuple[float, ...]
    ours: int
    modules: int

    def row(self) -> list[object]:
        low, mid, high = min(self.ms), percentile(self.ms, 50), max(self.ms)
        return [f"`{self.statement}`", self.ours, self.modules, f"{low:.0f}", f"{mid:.0f}",
                f"{high:.0f}"]  # fmt: skip


def measure(statement: str, runs: int, *, python: str = sys.executable) -> ImportFigures:
    """``statement`` timed in ``runs`` fresh interpreters (``python``)."""
    times: list[float] = []
    ours = modules = 0
    for _ in range(max(1, runs)):
        done = subprocess.run(
            [python, "-c", _PROBE, statement], capture_output=True, text=True, check=True
        )
        found = json.loads(done.stdout.splitlines()[-1])
        times.append(float(found["ms"]))
        ours, modules = int(found["ours"]), int(found["all"])
    return ImportFigures(statement, tuple(times), ours, modules)


def report(figures: Sequence[ImportFigures]) -> str:
    headers = ("statement", "cartagent modules", "modules", "min ms", "median ms", "max ms")
    return table(headers, [f.row() for f in figures])
