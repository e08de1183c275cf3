"""UCP order event webhooks (order.md, "Events"): queued with the completion, signed per RFC
9421 with the business key its profile publishes, verified as a platform would."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from cartagent.commerce import Agents, CheckoutRecords, Merchant, create_merchant_app
from cartagent.commerce.records import PendingEvent
from cartagent.commerce.ucp import (
    BusinessKeys,
    KnownProfiles,
    SignatureInvalid,
    UcpPolicy,
    UcpService,
    UcpSettings,
    verify_order_webhook,
)
from cartagent.commerce.webhooks import WebhookSender
from cartagent.database import create_engine
from cartagent.protocols.ucp.profile import ORDER, ProfileMalformed, checked_webhook_url
from cartagent.protocols.ucp.schema import BASE, validator
from cartagent.protocols.ucp.signatures import SigningKey, content_digest, sign_request
from tests.commerce.test_ucp_checkout import (
    BASE_URL,
    PAYMENT,
    PLATFORM,
    UcpClient,
    owner,
    platform_profile,
    ready,
)

# The sender leases events with FOR UPDATE SKIP LOCKED, signing keys are inserted with each
# dialect's ON CONFLICT, and an outbox from before protocols is altered in place.
pytestmark = pytest.mark.postgres

HOOK = "https://platform.test/webhooks/ucp/orders"
PLAIN = "https://plain.test/.well-known/ucp"
BAD = "https://bad.test/.well-known/ucp"
LOCAL = "https://local.test/.well-known/ucp"
LOCAL_HOOK = "http://127.0.0.1:8284/webhooks/partners/test/events/order"
PREFIX = "/ucp"  # create_merchant_app serves UCP under it


def hooked_profile(url: Any = HOOK) -> dict[str, Any]:
    profile = platform_profile()
    profile["ucp"]["capabilities"][ORDER][0]["config"] = {"webhook_url": url}
    return profile


class Receiver(httpx.BaseTransport):
    """The platform's webhook endpoint: records each call and acknowledges it."""

    def __init__(self) -> None:
        self.calls: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.calls.append(request)
        return httpx.Response(200, json={"ucp": {"version": "2026-04-08", "status": "success"}})


class Prefixed(UcpClient):
    def post(self, path: str, body: Any, headers: Any = None, *, key: bool = True) -> Any:
        return super().post(PREFIX + path, body, headers, key=key)

    def put(self, path: str, body: Any, headers: Any = None) -> Any:
        return super().put(PREFIX + path, body, headers)

    def get(self, path: str, headers: Any = None) -> Any:
        return super().get(PREFIX + path, headers)


@dataclass
class Shop:
    http: TestClient
    token: str
    service: UcpService
    sender: WebhookSender
    receiver: Receiver

    def client(self, profile: str = PLATFORM) -> Prefixed:
        return Prefixed(self.http, self.token, profile)

    def business(self) -> KnownProfiles:
        """What a platform fetches from the UCP-Agent URL: the served business profile."""
        return KnownProfiles({self.service.profile_url: self.http.get("/.well-known/ucp").json()})


@contextmanager
def open_shop(
    merchant: Merchant,
    agents: Agents,
    agent_token: str,
    *,
    allow_private_urls: bool = False,
    open_access: bool = False,
) -> Iterator[Shop]:
    receiver = Receiver()
    # A long interval: the background loop never runs during a test; tests deliver by hand.
    sender = WebhookSender(
        merchant.records,
        agents,
        transport=receiver,
        interval=3600,
        allow_private=allow_private_urls,
    )
    profiles = KnownProfiles(
        {
            PLATFORM: hooked_profile(),
            PLAIN: platform_profile(),
            BAD: hooked_profile("http://x"),
            LOCAL: hooked_profile(LOCAL_HOOK),
        }
    )
    app = create_merchant_app(
        merchant,
        agents,
        base_url=BASE_URL,
        webhooks=sender,
        ucp_profiles=profiles,
        ucp_policy=UcpPolicy(allow_private_urls=allow_private_urls, open_access=open_access),
    )
    try:
        with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as http:
            yield Shop(http, agent_token, app.state.ucp, sender, receiver)
    finally:
        merchant.records.engine.dispose()


@pytest.fixture
def shop(merchant: Merchant, agents: Agents, agent_token: str) -> Iterator[Shop]:
    with open_shop(merchant, agents, agent_token) as opened:
        yield opened


def ucp_events(merchant: Merchant, agent: str) -> list[PendingEvent]:
    return [e for e in merchant.records.events() if e.agent == agent and e.protocol == "ucp"]


def complete(client: UcpClient, key: str = "complete-key-0123456789") -> dict[str, Any]:
    session = ready(client)
    path = f"/checkout-sessions/{session['id']}/complete"
    response = client.post(path, PAYMENT, {"Idempotency-Key": key})
    assert response.status_code == 200, response.text
    done: dict[str, Any] = response.json()
    assert done["status"] == "completed"
    return done


def delivered(shop: Shop, merchant: Merchant) -> httpx.Request:
    client = shop.client()
    complete(client)
    assert shop.sender.deliver_due() == 1
    [call] = shop.receiver.calls
    return call


def verify(shop: Shop, call: httpx.Request, **changes: Any) -> Any:
    headers = dict(call.headers) | changes.pop("headers", {})
    body = changes.pop("body", call.content)
    url = changes.pop("url", str(call.url))
    profiles = changes.pop("profiles", None) or shop.business()
    return verify_order_webhook(url, headers, body, profiles)


# ---------------------------------------------------------------- queueing


def test_a_completion_queues_one_order_created_event(shop: Shop, merchant: Merchant) -> None:
    client = shop.client()
    done = complete(client)
    again = client.post(
        f"/checkout-sessions/{done['id']}/complete",
        PAYMENT,
        {"Idempotency-Key": "complete-key-0123456789"},
    )
    assert again.status_code == 200 and again.json()["status"] == "completed"
    agents = shop.service.agents
    [event] = ucp_events(merchant, owner(client, agents))  # the replay queued nothing
    assert event.url == HOOK and event.state == "pending"
    body = json.loads(event.body)
    order_id = done["order"]["id"]
    assert body["id"] == order_id and body["checkout_id"] == done["id"]
    assert body["event_id"] == str(uuid.UUID(event.id.removeprefix("evt_")))
    assert body["created_time"].endswith("Z")
    errors = [e.message for e in validator(BASE + "shopping/order.json").iter_errors(body)]
    assert errors == []
    fetched = client.get(f"/orders/{order_id}").json()
    assert {k: v for k, v in body.items() if k not in ("event_id", "created_time")} == fetched
    # The remembered URL is not shown back to the platform.
    assert "metadata" not in done and "ucp.order_webhook_url" not in json.dumps(done)


def test_no_webhook_url_no_event(shop: Shop, merchant: Merchant) -> None:
    client = shop.client(PLAIN)
    complete(client)
    assert ucp_events(merchant, owner(client, shop.service.agents)) == []
    assert shop.sender.deliver_due() == 0


def test_an_unusable_webhook_url_only_stops_order_events_and_the_platform_is_told(
    shop: Shop, merchant: Merchant
) -> None:
    client = shop.client(BAD)
    session = ready(client)  # created (201), not refused as a malformed profile
    [warning] = [m for m in session["messages"] if m["code"] == "webhook_unusable"]
    assert warning["type"] == "warning"
    assert warning["content"] == (
        "no order events will be sent for this checkout: "
        "the order webhook_url must be an absolute https URL"
    )
    paid = client.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT)
    assert paid.json()["status"] == "completed"
    assert ucp_events(merchant, owner(client, shop.service.agents)) == []


def test_a_merchant_allowing_private_urls_sends_order_events_to_a_local_http_receiver(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    with open_shop(merchant, agents, agent_token, allow_private_urls=True) as local:
        client = local.client(LOCAL)
        session = ready(client)
        assert not [m for m in session["messages"] if m["code"] == "webhook_unusable"]
        complete(client)
        [event] = ucp_events(merchant, owner(client, local.service.agents))
        assert event.url == LOCAL_HOOK
        assert local.sender.deliver_due() == 1
        [call] = local.receiver.calls
        assert str(call.url) == LOCAL_HOOK


def test_a_platform_without_a_token_gets_its_order_events_too(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    with open_shop(
        merchant, agents, agent_token, allow_private_urls=True, open_access=True
    ) as shop:
        client = shop.client(LOCAL)
        signed_in = client.headers

        def anonymous(extra: Any = None, *, key: bool) -> dict[str, str]:
            headers = signed_in(extra, key=key)
            del headers["Authorization"]
            return headers

        client.headers = anonymous  # type: ignore[method-assign]
        complete(client)
        # The sender was given no agent named "anonymous": the app tells it to send for it.
        assert shop.sender.deliver_due() == 1
        [call] = shop.receiver.calls
        assert str(call.url) == LOCAL_HOOK


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8284/hook", "http://localhost:9/webhooks/orders", "https://10.0.0.8/hook"],
)
def test_local_and_plain_http_webhook_urls_pass_where_private_urls_are_allowed(url: str) -> None:
    assert checked_webhook_url(url, allow_private=True) == url
    with pytest.raises(ProfileMalformed):
        checked_webhook_url(url)


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/hook", "http://user:pw@localhost/hook", "/relative", "http://x:99999/"]
)
def test_allowing_private_urls_still_refuses_what_is_no_webhook_url(url: str) -> None:
    with pytest.raises(ProfileMalformed):
        checked_webhook_url(url, allow_private=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://platform.test/hook",
        "https://user:pw@platform.test/hook",
        "https://127.0.0.1/hook",
        "https://10.0.0.8/hook",
        "https://[::1]/hook",
        "https://localhost/hook",
        "https://localhost./hook",
        "https://foo.localhost/hook",
        "https://127.1/hook",
        "https://2130706433/hook",
        "https://0x7f000001/hook",
        "https://0177.0.0.1/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://100.64.0.1/hook",
        "https://[fe80::1]/hook",
        "https://[fc00::1]/hook",
        "https://224.0.0.1/hook",
        "https://240.0.0.1/hook",
        "https://platform.test/hook#frag",
        "https://platform.test:99999/hook",
        "/relative",
        "https://platform.test/" + "a" * 2100,
        42,
        None,
    ],
)
def test_webhook_urls_are_checked(url: Any) -> None:
    with pytest.raises(ProfileMalformed):
        checked_webhook_url(url)


def test_a_good_webhook_url_passes() -> None:
    assert checked_webhook_url(HOOK + "?tenant=7") == HOOK + "?tenant=7"


# ---------------------------------------------------------------- delivery and signature


def test_the_sender_delivers_it_signed(shop: Shop, merchant: Merchant) -> None:
    call = delivered(shop, merchant)
    assert call.method == "POST" and str(call.url) == HOOK
    headers = call.headers
    for name in (
        "UCP-Agent",
        "Webhook-Id",
        "Webhook-Timestamp",
        "Content-Type",
        "Content-Digest",
        "Signature-Input",
        "Signature",
    ):
        assert headers.get(name), name
    assert headers["UCP-Agent"] == f'profile="{BASE_URL}/.well-known/ucp"'
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Digest"].startswith("sha-256=:")
    assert headers["Webhook-Timestamp"].isdigit()
    assert abs(int(headers["Webhook-Timestamp"]) - datetime.now(UTC).timestamp()) < 3600
    body = json.loads(call.content)
    assert headers["Webhook-Id"] == body["event_id"]
    signature_input = headers["Signature-Input"]
    kid = shop.service.keys.current().kid
    assert signature_input.startswith(
        'sig1=("@method" "@authority" "@path" "ucp-agent" "content-digest" "content-type" '
        '"webhook-id" "webhook-timestamp");created='
    )
    assert signature_input.endswith(f';keyid="{kid}"')
    assert headers["Signature"].startswith("sig1=:") and headers["Signature"].endswith(":")

    verified = verify(shop, call)
    assert verified.keyid == kid and verified.profile_url == shop.service.profile_url
    assert verified.body == body
    [event] = ucp_events(merchant, owner(shop.client(), shop.service.agents))
    assert event.state == "delivered"
    assert shop.sender.deliver_due() == 0


def test_the_profile_publishes_the_key(shop: Shop) -> None:
    profile = shop.http.get("/.well-known/ucp").json()
    [jwk] = [k for k in profile["signing_keys"] if k["kid"] == shop.service.keys.current().kid]
    assert {k: jwk[k] for k in ("kty", "crv", "use", "alg")} == {
        "kty": "EC",
        "crv": "P-256",
        "use": "sig",
        "alg": "ES256",
    }
    assert len(jwk["x"]) == len(jwk["y"]) == 43  # 32 bytes, base64url without padding
    assert "d" not in jwk
    assert "PRIVATE" not in repr(shop.service.keys.current())


def test_tampering_fails_verification(shop: Shop, merchant: Merchant) -> None:
    call = delivered(shop, merchant)
    body = call.content
    tampered = body.replace(b'"currency":"USD"', b'"currency":"EUR"')
    assert tampered != body

    def code(**changes: Any) -> str:
        with pytest.raises(SignatureInvalid) as caught:
            verify(shop, call, **changes)
        return caught.value.code

    assert code(body=tampered) == "digest_mismatch"
    assert code(body=tampered, headers={"content-digest": content_digest(tampered)}) == (
        "signature_invalid"
    )
    assert code(headers={"content-type": "text/plain"}) == "signature_invalid"
    assert code(headers={"webhook-id": "00000000-0000-4000-8000-000000000000"}) == (
        "signature_invalid"
    )
    assert code(url="https://platform.test/webhooks/other") == "signature_invalid"
    assert code(url="https://evil.test/webhooks/ucp/orders") == "signature_invalid"
    assert code(headers={"signature": "sig1=:" + "A" * 86 + "==:"}) == "signature_invalid"
    assert code(headers={"signature-input": 'sig1=("@method");keyid="x"'}) == "signature_invalid"
    stripped = {k: v for k, v in call.headers.items() if k != "signature"}
    with pytest.raises(SignatureInvalid) as caught:
        verify_order_webhook(str(call.url), stripped, body, shop.business())
    assert caught.value.code == "signature_missing"
    assert code(headers={"ucp-agent": 'profile="http://merchant.test/.well-known/ucp"'}) == (
        "invalid_profile_url"
    )


def test_another_key_fails_verification(shop: Shop, merchant: Merchant) -> None:
    call = delivered(shop, merchant)
    kid = shop.service.keys.current().kid
    impostor = SigningKey(kid, SigningKey.generate().private)  # same kid, other key
    keep = ("content-type", "ucp-agent", "webhook-id", "webhook-timestamp")
    headers = {name: call.headers[name] for name in keep}
    forged = sign_request(impostor, "POST", str(call.url), headers, call.content, datetime.now(UTC))
    with pytest.raises(SignatureInvalid) as caught:
        verify(shop, call, headers={k.lower(): v for k, v in forged.items()})
    assert caught.value.code == "signature_invalid"
    # A profile that does not list the signing key.
    other = dict(shop.http.get("/.well-known/ucp").json())
    other["signing_keys"] = [SigningKey.generate().jwk()]
    with pytest.raises(SignatureInvalid) as caught:
        verify(shop, call, profiles=KnownProfiles({shop.service.profile_url: other}))
    assert caught.value.code == "key_not_found"


def test_a_sender_without_a_ucp_signer_leaves_ucp_events_pending(
    shop: Shop, merchant: Merchant, agents: Agents
) -> None:
    complete(shop.client())
    bare = WebhookSender(merchant.records, agents, transport=shop.receiver)
    try:
        assert bare.deliver_due() == 0
    finally:
        bare.stop()
    [event] = ucp_events(merchant, owner(shop.client(), agents))
    assert (event.state, event.attempts) == ("pending", 0)
    assert shop.sender.deliver_due() == 1


def test_an_order_event_to_a_host_that_resolves_privately_fails_at_once_unsent(
    shop: Shop, merchant: Merchant, agents: Agents
) -> None:
    complete(shop.client())

    def resolve(host: str, port: int) -> list[str]:
        return ["10.0.0.7"]  # platform.test, as a hostile platform's DNS answers it

    sender = WebhookSender(merchant.records, agents, resolver=resolve)
    sender.sign_with("ucp", shop.service.webhook_signer())
    try:
        assert sender.deliver_due() == 0
        assert sender.deliver_due() == 0  # failed, not waiting for a retry
    finally:
        sender.stop()
    [event] = ucp_events(merchant, owner(shop.client(), agents))
    assert (event.state, event.attempts) == ("failed", 1)
    assert "10.0.0.7 is a private address" in (event.last_error or "")
    assert shop.receiver.calls == []


# ---------------------------------------------------------------- durability


def test_the_key_survives_a_restart(
    shop: Shop, merchant: Merchant, agents: Agents, database_url: str
) -> None:
    first = shop.service.keys.current()
    engine = create_engine(database_url)
    try:
        again = UcpService(
            Merchant(merchant.catalog, CheckoutRecords(engine), merchant.payments),
            agents,
            UcpSettings(base_url=BASE_URL),
            KnownProfiles({}),
        )
        assert again.keys.current().kid == first.kid
        assert again.keys.current().jwk() == first.jwk()
        assert first.jwk() in again.profile()["signing_keys"]
        assert BusinessKeys(engine).current().kid == first.kid
    finally:
        engine.dispose()


def test_an_outbox_from_before_protocols_gets_the_column(tmp_path: Any) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE merchant_webhook_events (id VARCHAR(40) PRIMARY KEY, "
            "agent VARCHAR(128) NOT NULL, url TEXT NOT NULL, body BLOB NOT NULL, "
            "state VARCHAR(12) NOT NULL, attempts INTEGER NOT NULL, next_at DATETIME NOT NULL, "
            "last_error TEXT, created_at DATETIME NOT NULL)"
        )
        conn.execute(
            sa.text(
                "INSERT INTO merchant_webhook_events VALUES "
                "('evt_old', 'a', 'https://x.test/h', x'7b7d', 'pending', 0, :at, NULL, :at)"
            ),
            {"at": "2000-01-01 00:00:00.000000"},  # as SQLAlchemy writes SQLite datetimes
        )
    try:
        records = CheckoutRecords(engine)
        [old] = records.events()
        assert (old.id, old.protocol) == ("evt_old", "acp")
        assert [e.id for e in records.due_events(now, 10, ["a"], ["acp"])] == ["evt_old"]
        CheckoutRecords(engine)  # a second start finds the column
    finally:
        engine.dispose()
