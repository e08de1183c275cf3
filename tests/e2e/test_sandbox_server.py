"""The sandbox as a real server on 127.0.0.1: races, idempotency under load, and crash safety.

Bounded: each test sends at most a few hundred requests and stops by itself.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from cartagent.child_process import SandboxProcess
from tests.conftest import BACKENDS, _drop_postgres_database, _postgres_database

# postgres: races between requests and processes are settled by the database's locks.
pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ORDER = {
    "intent": "CAPTURE",
    "purchase_units": [{"amount": {"currency_code": "USD", "value": "12.00"}}],
}


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'server.db'}"
        return
    name = f"cartagent_e2e_{os.getpid()}"
    yield _postgres_database(name)
    _drop_postgres_database(name)


@pytest.fixture(params=["inline", "threads"])
def server(db_url: str, request: pytest.FixtureRequest) -> Iterator[SandboxProcess]:
    """The sandbox making its database calls on its event loop, and in worker threads."""
    with SandboxProcess(db_url, db_calls=request.param) as process:
        yield process


def _client(server: SandboxProcess) -> httpx.Client:
    return httpx.Client(
        base_url=server.base_url,
        headers={"Authorization": f"Bearer {server.token()}"},
        timeout=30,
        limits=httpx.Limits(max_connections=64),
    )


def test_fifty_parallel_captures_of_one_order_make_exactly_one_capture(
    server: SandboxProcess,
) -> None:
    with _client(server) as client:
        order = client.post("/v2/checkout/orders", json=ORDER).json()
        assert client.post(f"/checkoutnow?token={order['id']}", data={}).status_code == 200

        def capture(_: int) -> httpx.Response:
            return client.post(f"/v2/checkout/orders/{order['id']}/capture")

        with ThreadPoolExecutor(max_workers=50) as pool:
            responses = list(pool.map(capture, range(50)))
        statuses = sorted(r.status_code for r in responses)
        assert statuses.count(201) == 1
        assert statuses.count(422) == 49
        assert {r.json()["details"][0]["issue"] for r in responses if r.status_code == 422} == {
            "ORDER_ALREADY_CAPTURED"
        }
        shown = client.get(f"/v2/checkout/orders/{order['id']}").json()
        assert len(shown["purchase_units"][0]["payments"]["captures"]) == 1


def test_fifty_parallel_creates_with_one_request_id_make_one_order(
    server: SandboxProcess,
) -> None:
    with _client(server) as client:

        def create(_: int) -> httpx.Response:
            return client.post(
                "/v2/checkout/orders", json=ORDER, headers={"PayPal-Request-Id": "one-key"}
            )

        with ThreadPoolExecutor(max_workers=50) as pool:
            responses = list(pool.map(create, range(50)))
        assert {r.status_code for r in responses} <= {200, 201}
        assert [r.status_code for r in responses].count(201) == 1
        assert len({r.json()["id"] for r in responses}) == 1


def test_a_server_killed_mid_load_loses_no_committed_write(db_url: str) -> None:
    committed: list[str] = []
    stop = threading.Event()
    process = SandboxProcess(db_url).start()
    try:
        client = _client(process)

        def writer() -> None:
            while not stop.is_set() and len(committed) < 2000:
                try:
                    response = client.post("/v2/checkout/orders", json=ORDER)
                except httpx.TransportError:
                    return  # the server died under us; that write may or may not exist
                if response.status_code == 201:
                    committed.append(response.json()["id"])

        threads = [threading.Thread(target=writer) for _ in range(8)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(committed) < 100 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.kill()  # SIGKILL: no shutdown hook, no flush
        stop.set()
        for thread in threads:
            thread.join(10)
        client.close()
    finally:
        process.kill()
    assert len(committed) >= 100
    restarted = SandboxProcess(db_url, port=process.port)
    with restarted, _client(restarted) as client:
        missing = [
            order_id
            for order_id in committed
            if client.get(f"/v2/checkout/orders/{order_id}").status_code != 200
        ]
    assert missing == []


def test_make_run_serves_the_seeded_demo_store(tmp_path: Path) -> None:
    """What ``make run`` starts (``cartagent sandbox --seed``), on its own port and database."""
    process = SandboxProcess(f"sqlite:///{tmp_path / 'demo.db'}", seed=True, startup_timeout=120)
    with process, _client(process) as client:
        products = client.get("/v1/catalogs/products", params={"page_size": 20}).json()
        assert len(products["products"]) == 20
        history = client.get(
            "/v1/reporting/transactions",
            params={"start_date": "2026-11-01T00:00:00Z", "end_date": "2026-11-30T23:59:59Z"},
        )
        assert history.status_code == 200
        order = client.post("/v2/checkout/orders", json=ORDER).json()
        page = httpx.get(f"{process.base_url}/checkoutnow?token={order['id']}")
        assert page.status_code == 200 and "Pay Now" in page.text


def test_two_sandbox_processes_on_one_database_serve_as_one(db_url: str) -> None:
    """What running N sandboxes on several machines against one database needs: no state in a
    process that another one needs (tokens, the clock, idempotency, locks)."""
    first, second = SandboxProcess(db_url), SandboxProcess(db_url)
    # Started together on an empty database: both migrate, create the merchant and store the
    # token key, and must agree on the outcome.
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda process: process.start(), (first, second)))
    try:
        token = first.token()
        clients = [
            httpx.Client(
                base_url=process.base_url,
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
                limits=httpx.Limits(max_connections=32),
            )
            for process in (first, second)
        ]
        one, two = clients
        order = one.post("/v2/checkout/orders", json=ORDER).json()
        assert two.post(f"/checkoutnow?token={order['id']}", data={}).status_code == 200
        assert one.get(f"/v2/checkout/orders/{order['id']}").json()["status"] == "APPROVED"

        with ThreadPoolExecutor(max_workers=20) as pool:
            captures = list(
                pool.map(
                    lambda i: clients[i % 2].post(f"/v2/checkout/orders/{order['id']}/capture"),
                    range(20),
                )
            )
            creates = list(
                pool.map(
                    lambda i: clients[i % 2].post(
                        "/v2/checkout/orders", json=ORDER, headers={"PayPal-Request-Id": "k-2p"}
                    ),
                    range(20),
                )
            )
        assert sorted(r.status_code for r in captures).count(201) == 1
        shown = two.get(f"/v2/checkout/orders/{order['id']}").json()
        assert len(shown["purchase_units"][0]["payments"]["captures"]) == 1
        assert [r.status_code for r in creates].count(201) == 1
        assert len({r.json()["id"] for r in creates}) == 1

        assert two.post("/v1/sandbox/clock/advance", json={"days": 2}).status_code == 200
        assert one.get("/v1/sandbox/clock").json()["offset_seconds"] == 2 * 86400
        for client in clients:
            client.close()
    finally:
        first.stop()
        second.stop()
