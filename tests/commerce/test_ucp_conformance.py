"""The official UCP conformance suite (third_party/ucp-conformance, UCP 2026-01-11) against
`cartagent merchant` seeded with its flower shop, as `make ucp-conformance` runs it: every
test passes but three, each failing for a reason the business keeps on purpose.

The suite's own dependencies (ucp-sdk 0.1.0, absl-py) are installed by `make test` into
build/ucp-conformance/site (`scripts/ucp-conformance.py --install-only`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "ucp-conformance.py"
SITE = REPO / "build" / "ucp-conformance" / "site"

FAILING = {
    # It expects Google Pay and Shop Pay handlers (the suite's sample business takes both);
    # this business declares only the handlers it can charge: PayPal (and the test handler).
    "protocol_test.py::test_discovery",
    # It fetches every spec and schema URL of the profile; the capabilities' are on ucp.dev
    # (the spec's namespace rule), which this machine cannot reach.
    "protocol_test.py::test_discovery_urls",
    # It sends UCP-Agent: profile="..." and expects the request to pass on its version
    # parameter alone; the spec makes the business fetch the profile (400 for "...").
    "protocol_test.py::test_version_negotiation",
}


@pytest.mark.slow
def test_the_suite_passes_but_for_the_three_kept_on_purpose(tmp_path: Path) -> None:
    if not (SITE / "ucp_sdk").is_dir():
        pytest.fail(f"the suite's dependencies are missing: run {SCRIPT} --install-only")
    report = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(report.read_text())
    outcomes = {
        f"{file}::{test}": outcome
        for file, tests in results.items()
        for test, outcome in tests.items()
    }
    assert len(outcomes) == 59, done.stdout
    failed = {name for name, outcome in outcomes.items() if outcome != "passed"}
    assert failed <= FAILING, (sorted(failed - FAILING), done.stdout)
    assert len(outcomes) - len(failed) >= 56, done.stdout
