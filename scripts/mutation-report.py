"""Write build/mutation/report.md from mutmut's results (`make mutation` runs it).

The guard modules and functions under test are the globs of tests/mutation/targets.txt; the
mutants that cannot be killed are declared, one a line with the reason, in
tests/mutation/equivalent.txt. Per module: mutants, killed, timeout (the tests did not finish:
caught too), survived, no tests, not run (the run was cut short), equivalent, and the score
(killed + timeout) / (mutants - equivalent). Then every survivor not declared equivalent, with
its diff, and the equivalent mutants with their reasons.

Run from the repository root after `mutmut run`. `--fail-under 95` exits 1 below 95 % in any
module, or when an equivalent entry names no surviving mutant (a stale or mistyped entry).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.format_utils import get_module_from_key, mangled_name_from_mutant_name

TARGETS = Path("tests/mutation/targets.txt")
EQUIVALENT = Path("tests/mutation/equivalent.txt")
MUTANTS = Path("mutants")
OUT = Path("build/mutation/report.md")
COLUMNS = ("killed", "timeout", "survived", "no tests", "not run", "other")


def entries(path: Path) -> list[str]:
    """The file's lines without comments and blank lines."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def equivalents(path: Path) -> dict[str, str]:
    """Mutant name -> why it is equivalent (the rest of its line)."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, reason = line.strip().partition(" ")
        found[name] = reason.strip()
    return found


def results() -> dict[str, int | None]:
    """Every mutant mutmut made, with its exit code (``None``: not run)."""
    codes: dict[str, int | None] = {}
    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def outcome(code: int | None) -> str:
    status = status_by_exit_code[code]
    if status in ("killed", "caught by type check"):
        return "killed"
    if status in ("timeout", "survived", "no tests"):
        return status
    return "not run" if status == "not checked" else "other"


def source_path(mutant: str) -> Path:
    module = get_module_from_key(mangled_name_from_mutant_name(mutant))
    base = Path("src", *module.split("."))
    return base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"


def located(mutant: str, diff: str) -> str:
    """``path:line`` of the first line the mutant changes (the diff's lines count from the
    function's ``def``)."""
    path = source_path(mutant)
    function = mangled_name_from_mutant_name(mutant).rpartition(".")[2]
    cls, _, name = function[2:].rpartition("ǁ") if "ǁ" in function else ("", "", function[2:])
    cls = cls.strip("ǁ")
    lines = path.read_text().splitlines()
    start = next((n for n, text in enumerate(lines) if text.startswith(f"class {cls}")), 0)
    start = next(
        (n for n in range(start, len(lines)) if re.match(rf"\s*(async )?def {name}\(", lines[n])),
        None,
    )
    hunk = re.search(r"^@@ -(\d+)", diff, flags=re.MULTILINE)
    if start is None or hunk is None:
        return str(path)
    body = diff[hunk.end() :].split("\n")[1:]
    first = next((n for n, text in enumerate(body) if text.startswith(("-", "+"))), 0)
    return f"{path}:{start + int(hunk.group(1)) + first}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, help="how long the mutmut run took")
    parser.add_argument("--fail-under", type=float, help="exit 1 if a module scores below this")
    args = parser.parse_args()

    globs = entries(TARGETS)
    declared = equivalents(EQUIVALENT)
    codes = {
        name: code
        for name, code in results().items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in globs)
    }
    if not codes:
        print("no mutmut results for tests/mutation/targets.txt: run `make mutation`")
        return 1

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[str] = []
    # Declared equivalent, yet no such mutant any more (the code changed) or it was killed.
    stale = sorted(name for name in declared if name not in codes)
    for name, code in sorted(codes.items()):
        module = get_module_from_key(mangled_name_from_mutant_name(name))
        kind = outcome(code)
        counts[module]["mutants"] += 1
        if name in declared and kind == "survived":
            counts[module]["equivalent"] += 1
            continue
        if name in declared and kind in ("killed", "timeout"):
            stale.append(name)
        counts[module][kind] += 1
        if kind in ("survived", "no tests"):
            survivors.append(name)

    def score(row: Counter[str]) -> float:
        judged = row["mutants"] - row["equivalent"]
        return 100.0 * (row["killed"] + row["timeout"]) / judged if judged else 100.0

    total: Counter[str] = sum(counts.values(), Counter())
    header = ["module", "mutants", *COLUMNS, "equivalent", "score"]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for module, row in [*sorted(counts.items()), ("**all**", total)]:
        cells = [str(row[c]) for c in ("mutants", *COLUMNS, "equivalent")]
        table.append(f"| {module} | " + " | ".join(cells) + f" | {score(row):.1f} % |")

    lines = ["# Mutation testing of the guard modules", ""]
    if args.seconds is not None:
        lines.append(f"mutmut run: {args.seconds // 60} min {args.seconds % 60} s.")
    lines += [
        "Score = (killed + timeout) / (mutants - equivalent). Targets: "
        f"`{TARGETS}`; equivalent mutants: `{EQUIVALENT}`.",
        "",
        *table,
        "",
    ]
    if total["not run"]:
        lines += [f"**{total['not run']} mutants were not run: the run was cut short.**", ""]
    if stale:
        lines += ["## Stale equivalent entries (no such surviving mutant)", ""]
        lines += [f"- `{name}`" for name in stale] + [""]
    lines += [f"## Survivors ({len(survivors)})", ""]
    for name in survivors:
        diff = get_diff_for_mutant(name, path=source_path(name))
        status = status_by_exit_code[codes[name]]
        lines += [f"### `{name}` ({status}, {located(name, diff)})", "", "```diff", diff, "```", ""]
    lines += [f"## Equivalent mutants ({len(declared)})", ""]
    lines += [f"- `{name}`: {reason}" for name, reason in sorted(declared.items())]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")

    print("\n".join(table))
    print(f"{len(survivors)} survivors; report: {OUT}")
    low = [m for m, row in counts.items() if score(row) < (args.fail_under or 0)]
    if args.fail_under is not None and (low or stale or total["not run"]):
        print(f"below {args.fail_under} %: {', '.join(low) or '-'}; stale: {len(stale)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
