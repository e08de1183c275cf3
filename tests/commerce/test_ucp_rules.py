"""UCP's protocol rules: authentication, idempotency keys, payment instruments, failures,
isolation between agents."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.records import fingerprint
from cartagent.commerce.ucp import KnownProfiles
from cartagent.commerce.ucp.profile import CHECKOUT, FULFILLMENT
from cartagent.paypal import PayPalClient
from tests.commerce.conftest import PayPalFaults, in_stock
from tests.commerce.test_ucp_checkout import (
    PAYMENT,
    PLATFORM,
    UcpClient,
    conforms,
    instrument,
    lines,
    owner,
    platform_profile,
    ready,
    serve,
)


@pytest.fixture
def ucp(merchant: Merchant, agents: Agents, agent_token: str) -> Iterator[UcpClient]:
    with serve(merchant, agents) as http:
        yield UcpClient(http, agent_token)


def body_of(item: str | None = None) -> dict[str, Any]:
    return {"line_items": lines(item or in_stock()[0])}


def test_a_call_without_valid_credentials_is_401(ucp: UcpClient) -> None:
    for auth in ({"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}):
        response = ucp.get("/checkout-sessions/cs_x", headers=auth)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="ucp"'
        assert response.json()["code"] == "unauthorized"
    api_key = {"Authorization": "", "X-API-Key": ucp.token}
    assert ucp.post("/checkout-sessions", body_of(), headers=api_key).status_code == 201


def test_every_state_changing_call_needs_a_well_formed_idempotency_key(ucp: UcpClient) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}"
    for send in (
        lambda h: ucp.post("/checkout-sessions", body_of(), headers=h),
        lambda h: ucp.put(path, body_of(), headers=h),
        lambda h: ucp.post(f"{path}/complete", PAYMENT, headers=h),
        lambda h: ucp.post(f"{path}/cancel", None, headers=h),
    ):
        missing = send({"Idempotency-Key": ""})
        assert (missing.status_code, missing.json()["code"]) == (400, "idempotency_key_required")
        for bad in ("k" * 256, "has space"):
            assert send({"Idempotency-Key": bad}).status_code == 400
    assert ucp.get(path).json()["status"] == "ready_for_complete"


def test_the_same_key_replays_the_stored_answer_and_another_body_conflicts(
    ucp: UcpClient,
) -> None:
    body = body_of()
    first = ucp.post(
        "/checkout-sessions", body, {"Idempotency-Key": "create-1", "Request-Id": "r1"}
    )
    assert first.status_code == 201 and first.headers["Request-Id"] == "r1"
    reordered = {"line_items": [{"quantity": 1.0, "item": body["line_items"][0]["item"]}]}
    replay = ucp.post(
        "/checkout-sessions", reordered, {"Idempotency-Key": "create-1", "Request-Id": "r2"}
    )
    assert (replay.status_code, replay.json()) == (201, first.json())
    assert replay.headers["Request-Id"] == "r2"  # the replay answers this request's id
    assert "Idempotent-Replayed" not in replay.headers  # UCP defines no replay header
    other = ucp.post("/checkout-sessions", body_of(in_stock(2)[1]), {"Idempotency-Key": "create-1"})
    assert (other.status_code, other.json()["code"]) == (409, "idempotency_conflict")
    # Keys are scoped to the operation: the same key on another one is a new request.
    update = ucp.put(
        f"/checkout-sessions/{first.json()['id']}", body, {"Idempotency-Key": "create-1"}
    )
    assert update.status_code == 200 and update.json()["ucp"]["status"] == "success"


def test_keys_and_sessions_are_scoped_to_the_agent(ucp: UcpClient, agent_token: str) -> None:
    other = UcpClient(ucp.http, agent_token + "-b")
    body = body_of()
    mine = ucp.post("/checkout-sessions", body, {"Idempotency-Key": "shared"}).json()
    theirs = other.post("/checkout-sessions", body, {"Idempotency-Key": "shared"}).json()
    assert mine["id"] != theirs["id"]
    for response in (
        other.get(f"/checkout-sessions/{mine['id']}"),
        other.put(f"/checkout-sessions/{mine['id']}", body),
        other.post(f"/checkout-sessions/{mine['id']}/complete", PAYMENT),
        other.post(f"/checkout-sessions/{mine['id']}/cancel", None),
    ):
        conforms("checkout", response.json())
        assert response.json()["messages"][0]["code"] == "not_found"
    assert ucp.get(f"/checkout-sessions/{mine['id']}").json()["status"] == "incomplete"


def test_a_key_in_flight_is_409_with_retry_after(
    ucp: UcpClient, agents: Agents, merchant: Merchant
) -> None:
    body = body_of()
    scope = f"ucp {owner(ucp, agents)} POST /checkout-sessions"
    assert merchant.records.claim(scope, "busy", fingerprint(body), merchant.clock()).kind == "new"
    response = ucp.post("/checkout-sessions", body, {"Idempotency-Key": "busy"})
    assert (response.status_code, response.json()["code"]) == (409, "idempotency_in_flight")
    assert response.headers["Retry-After"] == "1"
    long_ago = merchant.clock() - timedelta(minutes=5)
    merchant.records.claim(scope, "crashed", fingerprint(body), long_ago)
    taken_over = ucp.post("/checkout-sessions", body, {"Idempotency-Key": "crashed"})
    assert taken_over.status_code == 201


def test_a_key_store_failure_fails_closed(
    ucp: UcpClient, merchant: Merchant, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any) -> None:
        raise sa.exc.OperationalError("SELECT", {}, Exception("database is gone"))

    monkeypatch.setattr(merchant.records, "claim", broken)
    response = ucp.post("/checkout-sessions", body_of())
    assert (response.status_code, response.json()["code"]) == (503, "service_unavailable")
    assert "Retry-After" in response.headers


def test_a_paypal_outage_is_503_never_replayed_and_pays_once_on_retry(
    ucp: UcpClient,
    paypal_faults: PayPalFaults,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}/complete"
    key = {"Idempotency-Key": "pay-once"}
    paypal_faults.outages = 1
    failed = ucp.post(path, PAYMENT, key)
    assert (failed.status_code, failed.json()["code"]) == (503, "payment_unavailable")
    assert "Retry-After" in failed.headers
    assert ucp.get(f"/checkout-sessions/{session['id']}").json()["status"] == "ready_for_complete"
    retried = ucp.post(path, PAYMENT, key)
    assert retried.status_code == 200 and retried.json()["status"] == "completed"
    creates = [r for r in paypal_faults.sent if r.url.path == "/v2/checkout/orders"]
    assert len({r.headers["PayPal-Request-Id"] for r in creates}) == 1
    checkout = merchant.get(owner(ucp, agents), session["id"])
    paid = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(paid["purchase_units"][0]["payments"]["captures"]) == 1


def test_a_decline_keeps_the_session_open_and_another_try_pays(
    ucp: UcpClient, paypal_faults: PayPalFaults, agents: Agents, merchant: Merchant
) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}/complete"
    paypal_faults.declines = 1
    declined = ucp.post(path, PAYMENT)
    assert declined.status_code == 200
    body = declined.json()
    conforms("checkout", body)
    assert body["status"] == "ready_for_complete"
    assert [(m["type"], m["code"]) for m in body["messages"]] == [
        ("warning", "payment_declined"),
        ("error", "payment_failed"),
    ]
    after = ucp.get(f"/checkout-sessions/{session['id']}").json()
    assert [m["code"] for m in after["messages"]] == ["payment_declined"]
    paid = ucp.post(path, PAYMENT)
    assert paid.json()["status"] == "completed"
    assert merchant.get(owner(ucp, agents), session["id"]).payment.attempt == 1


@pytest.mark.parametrize(
    ("instruments", "path"),
    [
        ([], "$.payment.instruments"),
        ([instrument(handler_id="stripe")], "$.payment.instruments[0].handler_id"),
        ([instrument(type="card")], "$.payment.instruments[0].type"),
        (
            [instrument(credential={"type": "spt", "token": "t"})],
            "$.payment.instruments[0].credential.type",
        ),
        (
            [instrument(credential={"type": "paypal_payment_token", "token": " "})],
            "$.payment.instruments[0].credential.token",
        ),
        ([instrument(), instrument(id="instr_2")], "$.payment.instruments"),
    ],
)
def test_instruments_the_paypal_handler_cannot_take_are_refused(
    ucp: UcpClient, instruments: list[dict[str, Any]], path: str
) -> None:
    session = ready(ucp)
    response = ucp.post(
        f"/checkout-sessions/{session['id']}/complete", {"payment": {"instruments": instruments}}
    )
    body = response.json()
    conforms("checkout", body)
    assert body["status"] == "ready_for_complete"
    [message] = body["messages"]
    assert (message["path"], message["severity"]) == (path, "recoverable")


def test_a_handler_the_platform_did_not_declare_cannot_pay(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    profile = platform_profile((CHECKOUT, FULFILLMENT), handlers={})
    with serve(merchant, agents, KnownProfiles({PLATFORM: profile})) as http:
        client = UcpClient(http, agent_token)
        session = ready(client)
        assert session["ucp"]["payment_handlers"] == {}
        body = client.post(f"/checkout-sessions/{session['id']}/complete", PAYMENT).json()
    assert body["status"] == "ready_for_complete"
    assert body["messages"][0]["path"] == "$.payment.instruments[0].handler_id"


def test_bad_bodies_are_400_and_huge_ones_413(ucp: UcpClient) -> None:
    headers = ucp.headers({"Content-Type": "application/json"}, key=True)
    broken = ucp.http.post("/checkout-sessions", content=b"{nope", headers=headers)
    assert (broken.status_code, broken.json()["code"]) == (400, "invalid_json")
    listed = ucp.http.post("/checkout-sessions", content=b"[]", headers=ucp.headers(key=True))
    assert (listed.status_code, listed.json()["path"]) == (400, "$")
    huge = ucp.http.post(
        "/checkout-sessions", content=b" " * (256 * 1024 + 1), headers=ucp.headers(key=True)
    )
    assert (huge.status_code, huge.json()["code"]) == (413, "request_too_large")
