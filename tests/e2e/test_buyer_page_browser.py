"""The approve link opened in a real browser (Debian's Chromium driven by Playwright)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from cartagent.child_process import SandboxProcess

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (scripts/ensure-chromium.sh installs it)",
    ),
]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_a_buyer_approves_an_order_by_clicking_pay_now(tmp_path: Path) -> None:
    with SandboxProcess(f"sqlite:///{tmp_path / 'browser.db'}") as server:
        api = httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {server.token()}"}
        )
        order = api.post(
            "/v2/checkout/orders",
            json={
                "intent": "CAPTURE",
                "purchase_units": [
                    {
                        "amount": {
                            "currency_code": "USD",
                            "value": "19.98",
                            "breakdown": {"item_total": {"currency_code": "USD", "value": "19.98"}},
                        },
                        "items": [
                            {
                                "name": "Ceramic mug",
                                "quantity": "2",
                                "unit_amount": {"currency_code": "USD", "value": "9.99"},
                            }
                        ],
                    }
                ],
            },
        ).json()
        approve = next(link["href"] for link in order["links"] if link["rel"] == "approve")
        with playwright.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page()
            page.goto(approve)
            assert "Ceramic mug" in page.inner_text("body")
            assert "19.98 USD" in page.inner_text("body")
            page.fill("input[name=email]", "jane@example.com")
            page.click("#approve")
            page.wait_for_selector("#status")
            assert "APPROVED" in page.inner_text("#status")
            page.screenshot(path=str(tmp_path / "approved.png"))
            browser.close()
        shown = api.get(f"/v2/checkout/orders/{order['id']}").json()
        assert shown["status"] == "APPROVED"
        assert shown["payer"]["email_address"] == "jane@example.com"
        captured = api.post(f"/v2/checkout/orders/{order['id']}/capture")
        assert captured.status_code == 201
