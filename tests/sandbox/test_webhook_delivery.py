"""Deliveries to webhook URLs that are not, or no longer, public: failed at once, unsent, never
retried. (The signed deliveries themselves and their retries are in ``test_webhooks``.)"""

from __future__ import annotations

from datetime import timedelta

from cartagent.sandbox import Sandbox
from cartagent.sandbox.webhooks.routes import DeliveryWorker, deliver_due
from tests.conftest import START, Api
from tests.sandbox.test_webhooks import Receiver, checkout, create, merchant_id, queued


def test_a_webhook_whose_host_resolves_privately_fails_unsent_without_retries(
    api: Api, sandbox: Sandbox
) -> None:
    hook = create(api, "https://hooks.example.com/paypal", "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["10.1.2.3"]  # what a hostile DNS answers for hooks.example.com

    worker = DeliveryWorker(sandbox, resolver=resolve)  # the real transport, stopped in time
    mine = merchant_id(sandbox, api)
    with worker.client() as client:
        assert deliver_due(sandbox, START, client, merchant_id=mine) == 0
        assert deliver_due(sandbox, START + timedelta(days=1), client, merchant_id=mine) == 0
    [row] = queued(sandbox, hook["id"])
    assert (row.status, row.attempts) == ("FAILED", 0)
    assert "10.1.2.3 is a private address" in row.last_error
    assert asked == ["hooks.example.com"]


def test_a_private_webhook_left_from_local_development_is_not_sent(
    api: Api, sandbox: Sandbox
) -> None:
    sandbox.allow_private_webhooks = True
    hook = create(api, "https://127.0.0.1:9443/hook", "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    sandbox.allow_private_webhooks = False  # restarted without --allow-private-urls
    receiver = Receiver()
    assert deliver_due(sandbox, START, receiver.client, merchant_id=merchant_id(sandbox, api)) == 0
    assert receiver.requests == []
    [row] = queued(sandbox, hook["id"])
    assert row.status == "FAILED" and "loopback" in row.last_error


def test_a_sandbox_for_local_development_delivers_to_this_machine(
    api: Api, sandbox: Sandbox
) -> None:
    sandbox.allow_private_webhooks = True
    hook = create(api, "http://127.0.0.1:9000/hook", "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    receiver = Receiver()
    assert deliver_due(sandbox, START, receiver.client, merchant_id=merchant_id(sandbox, api)) == 1
    assert [str(r.url) for r in receiver.requests] == ["http://127.0.0.1:9000/hook"]
    assert queued(sandbox, hook["id"])[0].status == "DELIVERED"
