"""Order events: queued with the completion in one transaction, signed, retried, verified."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi.testclient import TestClient

from cartagent.commerce import AgentKey, Agents, Merchant, create_merchant_app
from cartagent.commerce.webhooks import (
    MAX_ATTEMPTS,
    WebhookSender,
    merchant_signature,
    verify_merchant_signature,
)
from tests.commerce.conftest import BASE_URL, AcpClient
from tests.commerce.test_acp_checkout import PAYMENT, conforms, ready

# The sender leases events with FOR UPDATE SKIP LOCKED, which only PostgreSQL runs.
pytestmark = pytest.mark.postgres

HOOK = "http://agent.test/acp/order_events"
SECRET = "whsec_test"


class Receiver(httpx.BaseTransport):
    """The agent platform's receiver: records each call; fails the first ``failures``."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.calls: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(request)
        if self.failures:
            self.failures -= 1
            return httpx.Response(500)
        ok = verify_merchant_signature(
            request.headers.get("Merchant-Signature"),
            request.read(),
            SECRET,
            datetime.now(UTC),
        )
        return httpx.Response(200 if ok else 401)


@pytest.fixture
def hooked(merchant: Merchant, agent_token: str) -> Iterator[tuple[AcpClient, Agents]]:
    name = "hooked-" + agent_token[-8:]
    agents = Agents([AgentKey(name, agent_token, webhook_url=HOOK, webhook_secret=SECRET)])
    app = create_merchant_app(merchant, agents, base_url=BASE_URL)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as http:
        yield AcpClient(http, agent_token), agents


def test_a_completed_checkout_queues_one_signed_order_create(
    hooked: tuple[AcpClient, Agents], merchant: Merchant
) -> None:
    acp, agents = hooked
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}/complete"
    done = acp.post(path, {"payment_data": PAYMENT}, headers={"Idempotency-Key": "k"})
    assert acp.post(path, {"payment_data": PAYMENT}, headers={"Idempotency-Key": "k"}).headers[
        "Idempotent-Replayed"
    ]
    mine = [e for e in merchant.records.events() if e.agent == agents.keys[0].name]
    assert len(mine) == 1  # the replay announced nothing again
    event = json.loads(mine[0].body)
    assert event["type"] == "order_create"
    assert event["data"] == done.json()["order"]
    conforms("Order", event["data"])

    receiver = Receiver()
    sender = WebhookSender(merchant.records, agents, transport=receiver)
    assert sender.deliver_due() == 1
    [call] = receiver.calls
    assert call.url == HOOK and call.headers["Request-Id"] == mine[0].id
    assert sender.deliver_due() == 0
    [stored] = [e for e in merchant.records.events() if e.id == mine[0].id]
    assert stored.state == "delivered"


def test_a_failing_receiver_is_retried_with_backoff_then_given_up(
    hooked: tuple[AcpClient, Agents], merchant: Merchant
) -> None:
    acp, agents = hooked
    session = ready(acp)
    acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": PAYMENT})
    now = [datetime.now(UTC)]
    receiver = Receiver(failures=MAX_ATTEMPTS)
    sender = WebhookSender(merchant.records, agents, transport=receiver, clock=lambda: now[0])
    for _ in range(MAX_ATTEMPTS):
        assert sender.deliver_due() == 0
        assert sender.deliver_due() == 0  # not due again before its back-off
        now[0] += timedelta(minutes=10)
    [event] = [e for e in merchant.records.events() if e.agent == agents.keys[0].name]
    assert (event.state, event.attempts, event.last_error) == ("failed", MAX_ATTEMPTS, "HTTP 500")
    assert len(receiver.calls) == MAX_ATTEMPTS


def test_the_operators_own_receiver_on_this_machine_gets_its_events(
    merchant: Merchant, agent_token: str
) -> None:
    # --webhook-url is the operator's, not someone else's say-so: it is not guarded.
    local = "http://127.0.0.1:9/acp/order_events"
    name = "local-" + agent_token[-8:]
    agents = Agents([AgentKey(name, agent_token, webhook_url=local, webhook_secret=SECRET)])
    app = create_merchant_app(merchant, agents, base_url=BASE_URL)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as http:
        acp = AcpClient(http, agent_token)
        acp.post(f"/checkout_sessions/{ready(acp)['id']}/complete", {"payment_data": PAYMENT})
    receiver = Receiver()
    sender = WebhookSender(merchant.records, agents, transport=receiver)
    assert sender.deliver_due() == 1
    assert [str(call.url) for call in receiver.calls] == [local]


def test_an_agent_without_a_receiver_gets_no_events(acp: AcpClient, merchant: Merchant) -> None:
    before = len(merchant.records.events())
    session = ready(acp)
    acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": PAYMENT})
    assert len(merchant.records.events()) == before


def test_signatures_verify_only_unchanged_fresh_bodies() -> None:
    now = datetime.now(UTC)
    header = merchant_signature(SECRET, b'{"a":1}', now)
    assert verify_merchant_signature(header, b'{"a":1}', SECRET, now)
    assert not verify_merchant_signature(header, b'{"a":2}', SECRET, now)
    assert not verify_merchant_signature(header, b'{"a":1}', "other", now)
    assert not verify_merchant_signature(header, b'{"a":1}', SECRET, now + timedelta(minutes=6))
    assert not verify_merchant_signature("t=x,v1=y", b"", SECRET, now)
    assert not verify_merchant_signature(None, b"", SECRET, now)


def test_a_webhook_url_needs_a_secret() -> None:
    with pytest.raises(ValueError, match="webhook secret"):
        AgentKey("a", "t", webhook_url=HOOK)
