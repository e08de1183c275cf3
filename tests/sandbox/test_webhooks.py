"""Webhooks v1: subscriptions, the event log, signed deliveries with retries, verification."""

from __future__ import annotations

import base64
import threading
import zlib
from collections.abc import Callable
from datetime import UTC, timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from jsonschema import Draft4Validator

from cartagent.sandbox import Sandbox, spec
from cartagent.sandbox.store import deliveries
from cartagent.sandbox.webhooks.routes import DeliveryWorker, RetryPolicy, deliver_due
from tests.conftest import START, Api, approve, issues

# A delivery is claimed by a conditional UPDATE, which PostgreSQL's row locks settle between
# workers (SQLite has one writer).
pytestmark = pytest.mark.postgres

HOOKS = "/v1/notifications/webhooks"
EVENTS = "/v1/notifications/webhooks-events"
VERIFY = "/v1/notifications/verify-webhook-signature"
URL = "https://shop.example.com/paypal/webhook"


def conforms(body: Any, schema: str) -> None:
    """Check a response body against the spec's own schema."""
    ref = {"$ref": f"urn:paypal:notifications_webhooks_v1#/components/schemas/{schema}"}
    errors = list(Draft4Validator(ref, registry=spec._registry()).iter_errors(body))
    assert not errors, [e.message for e in errors]


def create(api: Api, url: str = URL, *names: str) -> httpx.Response:
    types = [{"name": name} for name in (names or ("*",))]
    return api.post(HOOKS, {"url": url, "event_types": types})


def checkout(api: Api, value: str = "25.00") -> str:
    body = {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": value}}],
    }
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    assert api.post(f"/v2/checkout/orders/{order['id']}/capture").status_code == 201
    return str(order["id"])


def merchant_id(sandbox: Sandbox, api: Api) -> str:
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    return merchant.id


def queued(sandbox: Sandbox, webhook_id: str) -> list[Any]:
    with sandbox.store.engine.connect() as conn:
        return list(
            conn.execute(
                sa.select(deliveries)
                .where(deliveries.c.webhook_id == webhook_id)
                .order_by(deliveries.c.id)
            ).all()
        )


class Receiver:
    """A webhook endpoint behind ``httpx.MockTransport`` that records what it is sent."""

    def __init__(self, answer: Callable[[httpx.Request], httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.answer = answer or (lambda request: httpx.Response(200))
        self.client = httpx.Client(transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answer(request)


# -- webhook CRUD ---------------------------------------------------------------------------------
def test_create_returns_the_webhook_with_described_event_types(api: Api) -> None:
    response = create(api, URL, "PAYMENT.CAPTURE.COMPLETED", "CHECKOUT.ORDER.APPROVED")
    assert response.status_code == 201
    hook = response.json()
    assert len(hook["id"]) == 17
    assert hook["url"] == URL
    assert [t["name"] for t in hook["event_types"]] == [
        "PAYMENT.CAPTURE.COMPLETED",
        "CHECKOUT.ORDER.APPROVED",
    ]
    assert all(t["description"] for t in hook["event_types"])
    conforms(hook, "webhook")
    rels = {link["rel"]: link["method"] for link in hook["links"]}
    assert rels == {"self": "GET", "update": "PATCH", "delete": "DELETE"}
    assert api.get(f"{HOOKS}/{hook['id']}").json() == hook
    assert api.get(HOOKS).json() == {"webhooks": [hook]}


def test_the_wildcard_subscribes_to_all_events(api: Api) -> None:
    hook = create(api, URL, "*").json()
    assert hook["event_types"] == [{"name": "*", "description": "ALL"}]


def test_urls_must_be_https_to_a_public_host(api: Api) -> None:
    plain = create(api, "http://shop.example.com/hook")
    assert plain.status_code == 400
    assert plain.json()["name"] == "VALIDATION_ERROR"
    assert plain.json()["details"] == [
        {"field": "url", "location": "body", "issue": "Not a valid webhook URL"}
    ]
    assert create(api, "ftp://shop.example.com/hook").status_code == 400
    assert create(api, "not a url").status_code == 400
    assert create(api, "https://shop.example.com:port/hook").status_code == 400
    for host in (
        "127.0.0.1:9000", "localhost:9000", "localhost.", "foo.localhost", "127.1", "2130706433",
        "0x7f000001", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "10.0.0.8",
        "100.64.0.1", "169.254.169.254", "[fe80::1]", "[fc00::1]", "224.0.0.1", "240.0.0.1",
    ):  # fmt: skip
        for scheme in ("http", "https"):
            refused = create(api, f"{scheme}://{host}/hook")
            assert refused.status_code == 400, (host, refused.text)
            assert refused.json()["details"][0]["field"] == "url"
    assert api.get(HOOKS).json() == {"webhooks": []}


def test_a_sandbox_for_local_development_takes_http_to_this_machine(
    api: Api, sandbox: Sandbox
) -> None:
    sandbox.allow_private_webhooks = True  # cartagent sandbox --allow-private-urls
    assert create(api, "http://127.0.0.1:9000/hook").status_code == 201
    assert create(api, "http://localhost:9000/hook").status_code == 201
    assert create(api, "https://10.0.0.8/hook").status_code == 201
    assert create(api, "http://10.0.0.8/hook").status_code == 400  # plain http: this machine only
    assert len(api.get(HOOKS).json()["webhooks"]) == 3


def test_unknown_event_types_are_rejected(api: Api) -> None:
    response = create(api, URL, "PAYMENT.CAPTURE.COMPLETED", "PAYMENT.CAPTURE.EXPLODED")
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == "event_types[1].name"
    assert response.json()["details"][0]["issue"] == "Not a valid event name"
    empty = api.post(HOOKS, {"url": URL, "event_types": []})
    assert empty.status_code == 400
    assert api.get(HOOKS).json() == {"webhooks": []}


def test_malformed_bodies_fail_schema_validation(api: Api) -> None:
    assert issues(api.post(HOOKS, {"event_types": [{"name": "*"}]})) == [
        "MISSING_REQUIRED_PARAMETER"
    ]
    assert issues(api.post(HOOKS, {"url": URL, "event_types": "*"})) == ["INVALID_PARAMETER_SYNTAX"]
    # A field the operation does not define is ignored, as PayPal ignores it.
    extra = api.post(HOOKS, {"url": URL, "event_types": [{"name": "*"}], "x": 1})
    assert extra.status_code == 201 and "x" not in extra.json()


def test_a_url_can_only_be_registered_once(api: Api, other_api: Api) -> None:
    assert create(api).status_code == 201
    again = create(api, URL, "CHECKOUT.ORDER.APPROVED")
    assert again.status_code == 400
    assert again.json()["name"] == "WEBHOOK_URL_ALREADY_EXISTS"
    assert len(api.get(HOOKS).json()["webhooks"]) == 1
    assert create(other_api).status_code == 201


def test_a_merchant_can_have_at_most_ten_webhooks(api: Api) -> None:
    for n in range(10):
        assert create(api, f"{URL}/{n}").status_code == 201
    eleventh = create(api, f"{URL}/10")
    assert eleventh.status_code == 400
    assert eleventh.json()["name"] == "WEBHOOK_NUMBER_LIMIT_EXCEEDED"
    assert len(api.get(HOOKS).json()["webhooks"]) == 10


def test_patch_replaces_the_url_and_event_types(api: Api) -> None:
    hook = create(api).json()
    other = create(api, "https://other.example.com/hook").json()
    response = api.patch(
        f"{HOOKS}/{hook['id']}",
        [
            {"op": "replace", "path": "/url", "value": "https://new.example.com/hook"},
            {
                "op": "replace",
                "path": "/event_types",
                "value": [{"name": "BILLING.SUBSCRIPTION.CANCELLED"}],
            },
        ],
    )
    assert response.status_code == 200
    assert response.json()["url"] == "https://new.example.com/hook"
    assert [t["name"] for t in response.json()["event_types"]] == ["BILLING.SUBSCRIPTION.CANCELLED"]
    assert api.get(f"{HOOKS}/{hook['id']}").json() == response.json()
    taken = api.patch(
        f"{HOOKS}/{hook['id']}", [{"op": "replace", "path": "/url", "value": other["url"]}]
    )
    assert taken.json()["name"] == "WEBHOOK_URL_ALREADY_EXISTS"
    bad_op = api.patch(f"{HOOKS}/{hook['id']}", [{"op": "add", "path": "/url", "value": URL}])
    assert issues(bad_op) == ["INVALID_PATCH_OPERATION"]
    bad_path = api.patch(f"{HOOKS}/{hook['id']}", [{"op": "replace", "path": "/id", "value": "X"}])
    assert issues(bad_path) == ["FIELD_NOT_PATCHABLE"]
    bad_type = api.patch(
        f"{HOOKS}/{hook['id']}",
        [{"op": "replace", "path": "/event_types", "value": [{"name": "NOPE"}]}],
    )
    assert bad_type.json()["name"] == "VALIDATION_ERROR"
    # A failed patch changes nothing, even when an earlier operation in it was valid.
    partly = api.patch(
        f"{HOOKS}/{hook['id']}",
        [
            {"op": "replace", "path": "/url", "value": "https://third.example.com/hook"},
            {"op": "replace", "path": "/colour", "value": "red"},
        ],
    )
    assert partly.status_code == 400
    assert api.get(f"{HOOKS}/{hook['id']}").json()["url"] == "https://new.example.com/hook"


def test_delete_removes_the_webhook(api: Api) -> None:
    hook = create(api).json()
    assert api.delete(f"{HOOKS}/{hook['id']}").status_code == 204
    assert api.get(f"{HOOKS}/{hook['id']}").status_code == 404
    assert api.delete(f"{HOOKS}/{hook['id']}").status_code == 404
    assert api.get(HOOKS).json() == {"webhooks": []}


def test_merchants_cannot_see_or_change_each_others_webhooks(api: Api, other_api: Api) -> None:
    hook = create(api).json()
    assert other_api.get(f"{HOOKS}/{hook['id']}").status_code == 404
    assert other_api.delete(f"{HOOKS}/{hook['id']}").status_code == 404
    patch = [{"op": "replace", "path": "/url", "value": "https://x.example.com"}]
    assert other_api.patch(f"{HOOKS}/{hook['id']}", patch).status_code == 404
    assert other_api.get(HOOKS).json() == {"webhooks": []}


def test_event_types_of_a_webhook_and_of_the_sandbox(api: Api) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.REFUNDED").json()
    mine = api.get(f"{HOOKS}/{hook['id']}/event-types").json()
    conforms(mine, "EventTypeList")
    assert [(t["name"], t["status"]) for t in mine["event_types"]] == [
        ("PAYMENT.CAPTURE.REFUNDED", "ENABLED")
    ]
    assert api.get(f"{HOOKS}/NOSUCHWEBHOOK0001/event-types").status_code == 404
    every = {
        t["name"] for t in api.get("/v1/notifications/webhooks-event-types").json()["event_types"]
    }
    for name in (
        "CHECKOUT.ORDER.CREATED",
        "CHECKOUT.ORDER.APPROVED",
        "CHECKOUT.ORDER.COMPLETED",
        "PAYMENT.CAPTURE.COMPLETED",
        "PAYMENT.CAPTURE.REFUNDED",
        "PAYMENT.CAPTURE.REVERSED",
        "PAYMENT.AUTHORIZATION.CREATED",
        "PAYMENT.AUTHORIZATION.VOIDED",
        "INVOICING.INVOICE.PAID",
        "CATALOG.PRODUCT.CREATED",
        "BILLING.PLAN.CREATED",
        "BILLING.SUBSCRIPTION.ACTIVATED",
        "PAYMENT.SALE.COMPLETED",
        "CUSTOMER.DISPUTE.CREATED",
        "CUSTOMER.DISPUTE.UPDATED",
        "CUSTOMER.DISPUTE.RESOLVED",
    ):
        assert name in every


# -- events ---------------------------------------------------------------------------------------
def test_a_capture_queues_deliveries_for_subscribed_webhooks(api: Api, sandbox: Sandbox) -> None:
    captures = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    everything = create(api, "https://all.example.com/hook", "*").json()
    unrelated = create(api, "https://plans.example.com/hook", "BILLING.PLAN.CREATED").json()
    checkout(api)
    assert len(queued(sandbox, captures["id"])) == 1
    # Created, approved, capture completed and order completed.
    assert len(queued(sandbox, everything["id"])) == 4
    assert queued(sandbox, unrelated["id"]) == []
    assert {row.status for row in queued(sandbox, everything["id"])} == {"PENDING"}


def test_events_are_listed_filtered_and_shown(api: Api, other_api: Api) -> None:
    order_id = checkout(api)
    listed = api.get(EVENTS).json()
    types = [e["event_type"] for e in listed["events"]]
    assert sorted(types) == sorted(
        [
            "CHECKOUT.ORDER.CREATED",
            "CHECKOUT.ORDER.APPROVED",
            "PAYMENT.CAPTURE.COMPLETED",
            "CHECKOUT.ORDER.COMPLETED",
        ]
    )
    assert listed["count"] == 4
    conforms(listed, "EventList")
    only = api.get(EVENTS, params={"event_type": "PAYMENT.CAPTURE.COMPLETED"}).json()
    assert [e["event_type"] for e in only["events"]] == ["PAYMENT.CAPTURE.COMPLETED"]
    by_resource = api.get(EVENTS, params={"transaction_id": order_id}).json()
    assert {e["resource"]["id"] for e in by_resource["events"]} == {order_id}
    assert api.get(EVENTS, params={"page_size": 2}).json()["count"] == 2
    later = api.get(EVENTS, params={"start_time": "2026-11-22T00:00:00Z"}).json()
    assert later["events"] == []
    assert issues(api.get(EVENTS, params={"page_size": 0})) == ["INVALID_PARAMETER_VALUE"]
    assert issues(api.get(EVENTS, params={"start_time": "soon"})) == ["INVALID_PARAMETER_SYNTAX"]
    event = only["events"][0]
    assert api.get(f"{EVENTS}/{event['id']}").json() == event
    assert other_api.get(f"{EVENTS}/{event['id']}").status_code == 404
    assert other_api.get(EVENTS).json()["events"] == []


# -- delivery and signatures ---------------------------------------------------------------------
def verify_body(request: httpx.Request, event: dict[str, Any], webhook_id: str) -> dict[str, Any]:
    headers = request.headers
    return {
        "auth_algo": headers["PAYPAL-AUTH-ALGO"],
        "cert_url": headers["PAYPAL-CERT-URL"],
        "transmission_id": headers["PAYPAL-TRANSMISSION-ID"],
        "transmission_sig": headers["PAYPAL-TRANSMISSION-SIG"],
        "transmission_time": headers["PAYPAL-TRANSMISSION-TIME"],
        "webhook_id": webhook_id,
        "webhook_event": event,
    }


def test_due_deliveries_are_posted_signed_like_paypal(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    receiver = Receiver()
    mine = merchant_id(sandbox, api)
    assert deliver_due(sandbox, START, receiver.client, merchant_id=mine) == 1
    (request,) = receiver.requests
    assert str(request.url) == URL
    assert request.headers["PAYPAL-AUTH-ALGO"] == "SHA256withRSA"
    assert request.headers["Content-Type"] == "application/json"
    event = httpx.Response(200, content=request.content).json()
    assert event["event_type"] == "PAYMENT.CAPTURE.COMPLETED"
    assert event["resource"]["status"] == "COMPLETED"
    assert [row.status for row in queued(sandbox, hook["id"])] == ["DELIVERED"]
    assert deliver_due(sandbox, START + timedelta(hours=1), receiver.client, merchant_id=mine) == 0

    # PayPal's check, done independently: the certificate verifies the signed string.
    cert_url = request.headers["PAYPAL-CERT-URL"]
    assert cert_url.startswith("http://sandbox.test/v1/notifications/certs/CERT-")
    cert_response = api.http.get(cert_url.removeprefix("http://sandbox.test"))
    assert cert_response.status_code == 200
    cert = x509.load_pem_x509_certificate(cert_response.content)
    key = cert.public_key()
    assert isinstance(key, rsa.RSAPublicKey)
    signed = "|".join(
        [
            request.headers["PAYPAL-TRANSMISSION-ID"],
            request.headers["PAYPAL-TRANSMISSION-TIME"],
            hook["id"],
            str(zlib.crc32(request.content)),
        ]
    )
    signature = base64.b64decode(request.headers["PAYPAL-TRANSMISSION-SIG"])
    key.verify(signature, signed.encode(), padding.PKCS1v15(), hashes.SHA256())
    with pytest.raises(InvalidSignature):
        key.verify(signature, signed.encode() + b"0", padding.PKCS1v15(), hashes.SHA256())

    # And the sandbox's own verify endpoint agrees, and notices tampering.
    body = verify_body(request, event, hook["id"])
    assert api.post(VERIFY, body).json() == {"verification_status": "SUCCESS"}
    tampered = {**event, "summary": "Payment completed for 1,000,000 USD"}
    assert api.post(VERIFY, {**body, "webhook_event": tampered}).json() == {
        "verification_status": "FAILURE"
    }
    for key_name, value in (
        ("webhook_id", "OTHERWEBHOOK00001"),
        ("transmission_time", "2026-11-21T12:00:01Z"),
        ("auth_algo", "SHA1withRSA"),
        ("cert_url", "https://api.paypal.com/v1/notifications/certs/CERT-0"),
        ("transmission_sig", "bm90IGEgc2lnbmF0dXJl"),
    ):
        failed = api.post(VERIFY, {**body, key_name: value})
        assert failed.json() == {"verification_status": "FAILURE"}, key_name


def test_verify_rejects_a_request_missing_fields(api: Api) -> None:
    response = api.post(VERIFY, {"auth_algo": "SHA256withRSA"})
    assert response.status_code == 400
    assert set(issues(response)) == {"MISSING_REQUIRED_PARAMETER"}


def test_unknown_certificates_are_404(api: Api) -> None:
    assert api.http.get("/v1/notifications/certs/CERT-nope").status_code == 404


def test_failing_endpoints_are_retried_with_backoff_then_failed(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    receiver = Receiver(lambda request: httpx.Response(500))
    policy = RetryPolicy(base_delay=timedelta(seconds=1), max_attempts=3)
    mine = merchant_id(sandbox, api)

    def attempt(after: float) -> int:
        now = START + timedelta(seconds=after)
        return deliver_due(sandbox, now, receiver.client, policy=policy, merchant_id=mine)

    assert attempt(0) == 1
    (row,) = queued(sandbox, hook["id"])
    assert (row.status, row.attempts, row.last_error) == ("PENDING", 1, "HTTP 500")
    assert attempt(0.5) == 0  # the first retry waits 1 s
    assert attempt(1) == 1
    assert attempt(2.5) == 0  # the second waits 2 s more
    assert attempt(3) == 1
    (row,) = queued(sandbox, hook["id"])
    assert (row.status, row.attempts) == ("FAILED", 3)
    assert attempt(3600) == 0
    assert len(receiver.requests) == 3
    ids = {r.headers["PAYPAL-TRANSMISSION-ID"] for r in receiver.requests}
    assert len(ids) == 3  # each attempt is a new transmission


def test_deliveries_keep_the_merchants_clock_once_it_was_moved(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    assert api.post("/v1/sandbox/clock/advance", {"days": 1}).status_code == 200
    checkout(api)
    answers = iter([httpx.Response(500), httpx.Response(200)])
    receiver = Receiver(lambda request: next(answers))
    policy = RetryPolicy(base_delay=timedelta(seconds=1))
    mine = merchant_id(sandbox, api)

    def attempt(after: float) -> int:
        # The sandbox clock's time, as the worker passes it: the merchant's is a day ahead.
        now = START + timedelta(seconds=after)
        return deliver_due(sandbox, now, receiver.client, policy=policy, merchant_id=mine)

    assert attempt(0) == 1
    (request,) = receiver.requests
    assert request.headers["PAYPAL-TRANSMISSION-TIME"] == "2026-11-22T12:00:00Z"
    event = httpx.Response(200, content=request.content).json()
    assert event["create_time"].startswith("2026-11-22T12:00:00")
    (row,) = queued(sandbox, hook["id"])
    retry_at = row.next_attempt_at  # naive on SQLite, which stores UTC
    assert retry_at.replace(tzinfo=retry_at.tzinfo or UTC) == START + timedelta(days=1, seconds=1)
    assert attempt(0.5) == 0  # the retry waits 1 s of the merchant's time
    assert attempt(1) == 1
    assert [row.status for row in queued(sandbox, hook["id"])] == ["DELIVERED"]


def test_unreachable_endpoints_count_as_failures(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    receiver = Receiver(refuse)
    mine = merchant_id(sandbox, api)
    assert deliver_due(sandbox, START, receiver.client, merchant_id=mine) == 1
    (row,) = queued(sandbox, hook["id"])
    assert row.status == "PENDING"
    assert "ConnectError" in row.last_error


def test_deleting_a_webhook_cancels_its_queued_deliveries(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    api.delete(f"{HOOKS}/{hook['id']}")
    receiver = Receiver()
    assert deliver_due(sandbox, START, receiver.client, merchant_id=merchant_id(sandbox, api)) == 0
    assert receiver.requests == []
    assert [row.status for row in queued(sandbox, hook["id"])] == ["FAILED"]


def test_resend_queues_the_event_again(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "PAYMENT.CAPTURE.COMPLETED").json()
    second = create(api, "https://second.example.com/hook", "CHECKOUT.ORDER.CREATED").json()
    checkout(api)
    receiver = Receiver()
    mine = merchant_id(sandbox, api)
    deliver_due(sandbox, START, receiver.client, merchant_id=mine)
    event = api.get(EVENTS, params={"event_type": "PAYMENT.CAPTURE.COMPLETED"}).json()["events"][0]
    response = api.post(f"{EVENTS}/{event['id']}/resend", {})
    assert response.status_code == 202
    assert response.json()["id"] == event["id"]
    assert [row.status for row in queued(sandbox, hook["id"])] == ["DELIVERED", "PENDING"]
    # Resending while a notification is still pending does not queue it twice.
    api.post(f"{EVENTS}/{event['id']}/resend")
    assert len(queued(sandbox, hook["id"])) == 2
    assert deliver_due(sandbox, START, receiver.client, merchant_id=mine) == 1
    sent = [httpx.Response(200, content=r.content).json()["id"] for r in receiver.requests]
    assert sent.count(event["id"]) == 2
    # Naming a webhook sends it there even when it never subscribed to the type.
    api.post(f"{EVENTS}/{event['id']}/resend", {"webhook_ids": [second["id"]]})
    assert [row.event_id for row in queued(sandbox, second["id"])][-1] == event["id"]
    unknown = api.post(f"{EVENTS}/{event['id']}/resend", {"webhook_ids": ["NOSUCHWEBHOOK0001"]})
    assert unknown.status_code == 404
    assert api.post(f"{EVENTS}/WH-NOSUCHEVENT/resend").status_code == 404


def test_simulate_event_sends_a_sample_to_a_webhook(api: Api, sandbox: Sandbox) -> None:
    hook = create(api, URL, "BILLING.PLAN.CREATED").json()
    body = {"webhook_id": hook["id"], "event_type": "CUSTOMER.DISPUTE.CREATED"}
    response = api.post("/v1/notifications/simulate-event", body)
    assert response.status_code == 202
    event = response.json()
    assert event["event_type"] == "CUSTOMER.DISPUTE.CREATED"
    assert event["resource_type"] == "dispute"
    by_url = api.post(
        "/v1/notifications/simulate-event", {"url": URL, "event_type": "BILLING.PLAN.CREATED"}
    )
    assert by_url.status_code == 202
    receiver = Receiver()
    assert deliver_due(sandbox, START, receiver.client, merchant_id=merchant_id(sandbox, api)) == 2
    bad = api.post("/v1/notifications/simulate-event", {"url": URL, "event_type": "NOT.AN.EVENT"})
    assert bad.json()["name"] == "VALIDATION_ERROR"
    nowhere = api.post("/v1/notifications/simulate-event", {"event_type": "BILLING.PLAN.CREATED"})
    assert nowhere.status_code == 400


def test_the_worker_delivers_in_the_background_and_stop_ends_its_thread(
    api: Api, sandbox: Sandbox
) -> None:
    # Other tests' deliveries are due too (they share the database); this URL is ours alone.
    url = f"https://worker.example.com/{merchant_id(sandbox, api)}"
    hook = create(api, url, "PAYMENT.CAPTURE.COMPLETED").json()
    checkout(api)
    delivered = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url == url:
            delivered.set()
        return httpx.Response(200)

    worker = DeliveryWorker(sandbox, poll_interval=0.05, transport=httpx.MockTransport(answer))
    before = set(threading.enumerate())
    worker.start()
    (thread,) = [t for t in set(threading.enumerate()) - before if t.name == "webhook-delivery"]
    try:
        assert delivered.wait(10)
    finally:
        worker.stop()
    assert not thread.is_alive()
    # stop() joined the thread, so the attempt it was making has been recorded.
    assert queued(sandbox, hook["id"])[0].status == "DELIVERED"
