"""The merchant's money invariant, over ACP and UCP, on SQLite and PostgreSQL: one capture per
checkout, whatever mix of concurrent completes (one ``Idempotency-Key`` for all, or one each),
retries, a lost PayPal reply and a crash between the capture and storing its outcome.

Each caller does what the protocol clients do: it retries an answer that says "try again"
(409 ``idempotency_in_flight`` or ``in_progress``, 503) with the same key. The retries run once
the concurrent wave is over, so nothing is in flight then and the outcome does not hang on
timing. Every caller must end with the completed checkout (the same answer for one key) or a
clear refusal (it is already completed, or changed under it); never a "being paid" that is no
longer true, never a second capture.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from cartagent.commerce import Agents, CheckoutRecords, Merchant, MerchantCatalog, PayPalPayments
from cartagent.commerce import merchant as merchant_module
from cartagent.commerce.acp import API_VERSION
from cartagent.commerce.checkout import Checkout
from cartagent.commerce.records import Event
from cartagent.commerce.server import UCP_PREFIX, create_merchant_app
from cartagent.commerce.ucp import KnownProfiles
from cartagent.paypal import PayPalClient, RetryPolicy
from cartagent.sandbox import Sandbox
from cartagent.sandbox.payments.settlement import CAPTURE
from cartagent.sandbox.store import resources
from tests.commerce.conftest import ADDRESS, BASE_URL, PayPalFaults, in_stock, tau_products
from tests.commerce.test_acp_checkout import PAYMENT as ACP_PAYMENT
from tests.commerce.test_ucp_checkout import PAYMENT as UCP_PAYMENT
from tests.commerce.test_ucp_checkout import PLATFORM, SHIPPING, platform_profile

# Concurrent completes are settled by the database: keys claimed with each dialect's ON CONFLICT,
# saves compared-and-set on a version under PostgreSQL's row locks (SQLite has one writer).
pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

CALLERS = 5
RETRIES = 3
TRY_AGAIN = {"idempotency_in_flight", "in_progress", "payment_unavailable"}


class LosesCaptureReplies(httpx.BaseTransport):
    """Passes requests on; the next ``lost`` captures reach PayPal and are done there, but
    their answers never come back (a timeout after the charge)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/capture") and self.lost:
            self.lost -= 1
            raise httpx.ReadTimeout("the capture's answer was lost", request=request)
        return response


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


class Protocol:
    """How a caller speaks one protocol to the merchant app."""

    def __init__(self, name: str, token: str) -> None:
        self.name = name
        self.token = token

    def headers(self, key: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}", "Idempotency-Key": key}
        if self.name == "acp":
            return headers | {"API-Version": API_VERSION}
        return headers | {"UCP-Agent": f'profile="{PLATFORM}"'}

    async def ready(self, http: httpx.AsyncClient) -> str:
        buyer = {"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"}
        if self.name == "acp":
            path = "/checkout_sessions"
            body: dict[str, Any] = {
                "line_items": [{"id": in_stock()[0], "quantity": 1}],
                "currency": "usd",
                "capabilities": {},
                "fulfillment_details": {"name": "Ada", "email": buyer["email"], "address": ADDRESS},
            }
        else:
            path = f"{UCP_PREFIX}/checkout-sessions"
            body = {
                "line_items": [{"item": {"id": in_stock()[0]}, "quantity": 1}],
                "buyer": buyer,
                "fulfillment": SHIPPING,
            }
        created = await http.post(path, json=body, headers=self.headers(str(uuid.uuid4())))
        assert created.status_code == 201, created.text
        session_id: str = created.json()["id"]
        return session_id

    def complete_path(self, session_id: str) -> str:
        if self.name == "acp":
            return f"/checkout_sessions/{session_id}/complete"
        return f"{UCP_PREFIX}/checkout-sessions/{session_id}/complete"

    def payment(self) -> dict[str, Any]:
        return {"payment_data": ACP_PAYMENT} if self.name == "acp" else UCP_PAYMENT

    @staticmethod
    def code(response: httpx.Response) -> str | None:
        body = response.json()
        code = body.get("code")
        return code if isinstance(code, str) else None

    def says_try_again(self, response: httpx.Response) -> bool:
        return response.status_code in (409, 503) and self.code(response) in TRY_AGAIN

    def completed(self, response: httpx.Response) -> bool:
        """The caller's payment completed the checkout (a clean success)."""
        body = response.json()
        errors = [m for m in body.get("messages", []) if m.get("type") == "error"]
        return response.status_code == 200 and body.get("status") == "completed" and not errors

    def clear_refusal(self, response: httpx.Response) -> bool:
        """A refusal that tells the caller where it stands: already completed, or changed
        under it (read it again)."""
        if response.status_code == 409:
            return self.code(response) in ("invalid_state", "conflict")
        body = response.json()
        codes = {m.get("code") for m in body.get("messages", []) if m.get("type") == "error"}
        return (
            self.name == "ucp"
            and response.status_code == 200
            and body.get("status") == "completed"
            and codes == {"invalid_state"}
        )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def lossy(paypal_faults: PayPalFaults) -> LosesCaptureReplies:
    return LosesCaptureReplies(paypal_faults)


@pytest.fixture
def shop_id(merchant_paypal: PayPalClient, request: pytest.FixtureRequest) -> str:
    """The client id of ``merchant_paypal``'s sandbox account (made by that fixture)."""
    return "shop-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]


@pytest.fixture
def shop_paypal(shop_id: str, lossy: LosesCaptureReplies) -> Iterator[PayPalClient]:
    """The merchant's PayPal account (``merchant_paypal``'s), reached through ``lossy``."""
    with PayPalClient(
        shop_id,
        "secret",
        base_url="http://sandbox.test",
        transport=lossy,
        retry=RetryPolicy(max_attempts=1),
        sleep=lambda _: None,
    ) as client:
        yield client


@pytest.fixture
def shop(records: CheckoutRecords, shop_paypal: PayPalClient, clock: Clock) -> Merchant:
    return Merchant(
        MerchantCatalog(tau_products()), records, PayPalPayments(shop_paypal), clock=clock
    )


@pytest.fixture
async def http(shop: Merchant, agents: Agents) -> Any:
    profiles = KnownProfiles({PLATFORM: platform_profile()})
    app = create_merchant_app(shop, agents, base_url=BASE_URL, ucp_profiles=profiles)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client
    shop.records.engine.dispose()


def captures(sandbox: Sandbox, client_id: str, checkout_id: str) -> int:
    """How many captures PayPal (the sandbox) holds for ``checkout_id``."""
    account = sandbox.store.merchant_by_client_id(client_id)
    assert account is not None
    query = sa.select(resources.c.data).where(
        resources.c.kind == CAPTURE, resources.c.merchant_id == account.id
    )
    with sandbox.store.engine.connect() as conn:
        found = [orjson.loads(data) for data in conn.execute(query).scalars()]
    return sum(1 for capture in found if capture.get("custom_id") == checkout_id)


async def pay_concurrently(
    http: httpx.AsyncClient, protocol: Protocol, session_id: str, keys: list[str]
) -> list[httpx.Response]:
    """Every caller completes at once; then each retries what says "try again", as told."""
    path, body = protocol.complete_path(session_id), protocol.payment()

    async def complete(key: str) -> httpx.Response:
        return await http.post(path, json=body, headers=protocol.headers(key))

    answers = list(await asyncio.gather(*(complete(key) for key in keys)))
    for _ in range(RETRIES):
        for index, answer in enumerate(answers):
            if protocol.says_try_again(answer):
                answers[index] = await complete(keys[index])
    return answers


@pytest.mark.parametrize("protocol_name", ["acp", "ucp"])
@pytest.mark.parametrize("one_key", [True, False], ids=["one-key", "a-key-each"])
@pytest.mark.parametrize("lost_replies", [0, 1])
async def test_concurrent_completes_capture_once_and_every_caller_learns_the_outcome(
    http: httpx.AsyncClient,
    shop: Merchant,
    agents: Agents,
    agent_token: str,
    sandbox: Sandbox,
    shop_id: str,
    lossy: LosesCaptureReplies,
    protocol_name: str,
    one_key: bool,
    lost_replies: int,
) -> None:
    protocol = Protocol(protocol_name, agent_token)
    session_id = await protocol.ready(http)
    keys = (
        ["pay-" + session_id] * CALLERS if one_key else [str(uuid.uuid4()) for _ in range(CALLERS)]
    )
    lossy.lost = lost_replies

    answers = await pay_concurrently(http, protocol, session_id, keys)

    assert captures(sandbox, shop_id, session_id) == 1
    owner = agents.by_token(agent_token)
    assert owner is not None
    checkout = shop.get(owner.name, session_id)
    assert checkout.status == "completed" and checkout.order_id is not None
    won = [answer for answer in answers if protocol.completed(answer)]
    refused = [answer for answer in answers if protocol.clear_refusal(answer)]
    assert len(won) + len(refused) == CALLERS, [(a.status_code, a.text[:200]) for a in answers]
    if one_key:  # one request, answered alike to every caller
        assert len(won) == CALLERS and len({a.content for a in won}) == 1
    else:  # one payment; the others are told it is done (or was changed under them)
        assert len(won) == 1
    assert won[0].json()["order"]["id"] == checkout.order_id


@pytest.mark.parametrize("protocol_name", ["acp", "ucp"])
async def test_a_crash_after_the_capture_is_recovered_without_a_second_capture(
    http: httpx.AsyncClient,
    shop: Merchant,
    agents: Agents,
    agent_token: str,
    sandbox: Sandbox,
    shop_id: str,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    protocol_name: str,
) -> None:
    protocol = Protocol(protocol_name, agent_token)
    session_id = await protocol.ready(http)
    save = shop.records.save

    def dies_storing_the_order(checkout: Checkout, events: tuple[Event, ...] = ()) -> Checkout:
        if checkout.status == "completed":
            raise RuntimeError("the process died after the capture")
        return save(checkout, events)

    monkeypatch.setattr(shop.records, "save", dies_storing_the_order)
    key = "pay-" + session_id
    path, body = protocol.complete_path(session_id), protocol.payment()
    crashed = await http.post(path, json=body, headers=protocol.headers(key))
    assert crashed.status_code == 500
    monkeypatch.setattr(shop.records, "save", save)
    assert captures(sandbox, shop_id, session_id) == 1

    # Until the paying request counts as dead, the checkout is being paid: try again later.
    busy = await http.post(path, json=body, headers=protocol.headers(key))
    assert (busy.status_code, protocol.code(busy)) == (409, "in_progress")
    clock.now += merchant_module.PAYING_TIMEOUT + timedelta(seconds=1)
    answers = await pay_concurrently(http, protocol, session_id, [key, key, str(uuid.uuid4())])

    assert captures(sandbox, shop_id, session_id) == 1
    assert sum(protocol.completed(answer) for answer in answers) >= 1
    assert all(protocol.completed(a) or protocol.clear_refusal(a) for a in answers)
    owner = agents.by_token(agent_token)
    assert owner is not None
    assert shop.get(owner.name, session_id).status == "completed"
