"""A UCP 2026-08-25 platform built from ``ucp-sdk`` 0.5.0 (the release's official models) buys
from ``cartagent merchant`` over REST, in a process of its own (tests/e2e/ucp_sdk_0_5_platform.py,
which shares no code with cartagent), and PayPal captures the total once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cartagent.child_process import free_port
from tests.e2e.test_merchant_server import TOKEN, MerchantProcess, sandbox_captures

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "build" / "ucp-sdk-0.5.0" / "site"
PLATFORM_SCRIPT = Path(__file__).with_name("ucp_sdk_0_5_platform.py")
PLATFORM = "https://sdk-0825-platform.test/.well-known/ucp"
VERSION = "2026-08-25"
ITEM = "9612497925"  # a tau-bench item in stock


def platform_profile() -> dict[str, Any]:
    site = f"https://ucp.dev/{VERSION}"

    def capability(name: str, **extra: str) -> list[dict[str, str]]:
        short = name.rsplit(".", 1)[-1]
        return [
            {
                "version": VERSION,
                "spec": f"{site}/specification/{short}",
                "schema": f"{site}/schemas/shopping/{short}.json",
                **extra,
            }
        ]

    checkout = "dev.ucp.shopping.checkout"
    return {
        "ucp": {
            "version": VERSION,
            "services": {
                "dev.ucp.shopping": [
                    {
                        "version": VERSION,
                        "spec": f"{site}/specification/overview",
                        "transport": "rest",
                        "schema": f"{site}/services/shopping/rest.openapi.json",
                    }
                ]
            },
            "capabilities": {
                checkout: capability(checkout),
                "dev.ucp.shopping.fulfillment": capability(
                    "dev.ucp.shopping.fulfillment", extends=checkout
                ),
                "dev.ucp.shopping.order": capability("dev.ucp.shopping.order"),
            },
            "payment_handlers": {
                "com.paypal.checkout": [
                    {
                        "id": "sdk_0825_paypal",
                        "version": VERSION,
                        "spec": "https://developer.paypal.com/docs/api/orders/v2/",
                        "schema": "https://sdk-0825-platform.test/schemas/paypal.json",
                        "available_instruments": [{"type": "paypal"}],
                    }
                ]
            },
        }
    }


@pytest.mark.timeout(300)
def test_a_2026_08_25_platform_buys_and_paypal_captures_once(tmp_path: Path) -> None:
    if not (SITE / "ucp_sdk").is_dir():
        pytest.fail("ucp-sdk 0.5.0 is missing: run scripts/ucp-conformance.py --install-only")
    profile = tmp_path / "platform.json"
    profile.write_text(json.dumps(platform_profile()))
    sandbox_port = free_port()
    process = MerchantProcess(tmp_path, sandbox_port, "http://127.0.0.1:9/none")
    process.extra = ["--ucp-platform", f"{PLATFORM}={profile}", "--ucp-version", VERSION]
    with process:
        env = {**os.environ, "PYTHONPATH": str(SITE)}
        bought = subprocess.run(
            [sys.executable, str(PLATFORM_SCRIPT), process.base_url, TOKEN, PLATFORM, ITEM],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        assert bought.returncode == 0, bought.stdout + bought.stderr
        paid = json.loads(bought.stdout.strip().splitlines()[-1])
        captures = sandbox_captures(sandbox_port, paid["checkout_id"])
    assert (paid["sdk"], paid["version"]) == ("0.5.0", VERSION)
    assert paid["order_total"] == paid["total"]
    assert len(captures) == 1
    assert round(float(captures[0]["transaction_amount"]["value"]) * 100) == paid["total"]
