"""Run the official UCP conformance suite (third_party/ucp-conformance) against `cartagent
merchant` seeded with the suite's flower shop, and print a table per test file.

    .venv/bin/python scripts/ucp-conformance.py [--json FILE] [--only protocol_test.py ...]

The suite's own dependencies (ucp-sdk 0.1.0, whose models it imports, and absl-py) are
installed, pinned, into build/ucp-conformance/site, apart from the project's ucp-sdk; fastapi,
uvicorn, httpx and pydantic come from the project's environment. The merchant runs on a free
loopback port with a throwaway data folder; the suite's mock agent-profile and webhook
servers get free ports too. Each file runs as its README runs it, with absltest's XML report
read for the outcome of every test.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "third_party" / "ucp-conformance"
SHOP = SUITE / "test_data" / "flower_shop"
SITE = REPO / "build" / "ucp-conformance" / "site"
PINS = ("ucp-sdk==0.1.0", "absl-py==2.5.1")
# The UCP 2026-08-25 models for the platform tests/e2e/ucp_sdk_0_5_platform.py (the project
# itself pins ucp-sdk 0.4.6, release 2026-04-08).
SDK_SITE = REPO / "build" / "ucp-sdk-0.5.0" / "site"
SDK_PINS = ("ucp-sdk==0.5.0",)
SECRET = "conformance-simulation-secret"
FILE_TIMEOUT = 300.0
SERVER_START = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_site(site: Path = SITE, pins: tuple[str, ...] = PINS) -> None:
    """Pinned packages, installed once into ``site`` (their own dependencies come from the
    project's environment)."""
    wanted = {pin.replace("-", "_").replace("==", "-") for pin in pins}
    have = {path.name.removesuffix(".dist-info") for path in site.glob("*.dist-info")}
    if wanted <= have:
        return
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade"]
    subprocess.run([*pip, "--target", str(site), *pins], check=True)


def start_merchant(port: int, data: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARTAGENT_")}
    env["XDG_DATA_HOME"] = str(data)
    env["CARTAGENT_SANDBOX_PORT"] = str(free_port())  # its own PayPal sandbox, not a shared one
    cartagent = Path(sys.executable).with_name("cartagent")
    command = [
        str(cartagent),
        "merchant",
        "--port",
        str(port),
        "--catalog",
        str(SHOP),
        "--db",
        f"sqlite:///{data / 'merchant.db'}",
        # The suite's platform: http://localhost profiles and webhooks, no token, a profile
        # at UCP 2026-01-11 that lists only the order capability; it reads orders at the
        # root and uses the testing surface.
        "--allow-private-urls",
        "--ucp-version",
        "2026-01-11",
        "--ucp-open",
        "--ucp-all-capabilities",
        "--ucp-prefix",
        "",
        "--simulation-secret",
        SECRET,
    ]
    handle = log.open("wb")
    server = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/.well-known/ucp"
    deadline = time.monotonic() + SERVER_START
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"cartagent merchant exited ({server.returncode}); see {log}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    server.terminate()
    raise SystemExit(f"cartagent merchant did not answer {url} in {SERVER_START:.0f} s")


def run_file(name: str, server_url: str, reports: Path) -> dict[str, str]:
    """Each test of one suite file with its outcome: passed, failed, error or skipped."""
    report = reports / (name.removesuffix(".py") + ".xml")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [
        sys.executable,
        name,
        f"--server_url={server_url}",
        f"--simulation_secret={SECRET}",
        "--conformance_input=test_data/flower_shop/conformance_input.json",
        "--test_data_dir=test_data/flower_shop",
        f"--mock_webhook_port={free_port()}",
        f"--mock_agent_port={free_port()}",
        f"--xml_output_file={report}",
    ]
    try:
        done = subprocess.run(
            command, cwd=SUITE, env=env, capture_output=True, timeout=FILE_TIMEOUT, check=False
        )
        (reports / (name.removesuffix(".py") + ".log")).write_bytes(done.stdout + done.stderr)
    except subprocess.TimeoutExpired:
        return {name: "timeout"}
    if not report.is_file():
        return {name: "crashed"}
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("failure") is not None:
            outcome = "failed"
        elif case.find("error") is not None:
            outcome = "error"
        elif case.find("skipped") is not None or case.get("result") == "suppressed":
            outcome = "skipped"
        else:
            outcome = "passed"
        outcomes[case.get("name", "?")] = outcome
    return outcomes


def _timed(name: str, url: str, reports: Path) -> tuple[dict[str, str], float]:
    started = time.monotonic()
    outcomes = run_file(name, url, reports)
    return outcomes, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every test's outcome here")
    parser.add_argument("--only", nargs="*", help="suite files to run (default: all)")
    parser.add_argument("--server-url", help="a merchant already running (default: start one)")
    parser.add_argument(
        "--install-only",
        action="store_true",
        help="install the suite's dependencies (and ucp-sdk 0.5.0 for the 2026-08-25 platform "
        "test) and stop",
    )
    args = parser.parse_args()
    ensure_site()
    if args.install_only:
        ensure_site(SDK_SITE, SDK_PINS)
        return 0
    files = args.only or sorted(path.name for path in SUITE.glob("*_test.py"))
    with tempfile.TemporaryDirectory(prefix="ucp-conformance-") as folder:
        work = Path(folder)
        reports = REPO / "build" / "ucp-conformance" / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        server = None
        url = args.server_url
        if url is None:
            port = free_port()
            server = start_merchant(port, work, reports / "merchant.log")
            url = f"http://127.0.0.1:{port}"
        results: dict[str, dict[str, str]] = {}
        try:
            # Two files at a time: each is a process of its own, mostly waiting on HTTP.
            with ThreadPoolExecutor(max_workers=2) as pool:
                timed = pool.map(lambda name: _timed(name, url, reports), files)
                for name, (outcomes, took) in zip(files, timed, strict=True):
                    results[name] = outcomes
                    passed = sum(outcome == "passed" for outcome in outcomes.values())
                    print(f"{name:34} {passed:3}/{len(outcomes):<3} {took:5.1f} s", flush=True)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
    total = sum(len(tests) for tests in results.values())
    passed = sum(o == "passed" for tests in results.values() for o in tests.values())
    print(f"{'all':34} {passed:3}/{total:<3}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
