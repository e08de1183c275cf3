"""UCP's protocol rules: authentication, request signatures, idempotency keys, payment
instruments, failures, isolation between agents."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa

from cartagent.commerce import Agents, Merchant
from cartagent.commerce.records import fingerprint
from cartagent.commerce.ucp import KnownProfiles
from cartagent.paypal import PayPalClient
from cartagent.protocols.ucp.profile import CHECKOUT, FULFILLMENT
from cartagent.protocols.ucp.signatures import SharedKey, Signer, SigningKey, sign_request
from tests.commerce.conftest import PayPalFaults, in_stock, paypal_error
from tests.commerce.test_ucp_checkout import (
    PAYMENT,
    PLATFORM,
    SHIPPING,
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


SECRET = SharedKey.from_secret("s3cret")  # the signing agent's (tests/commerce/conftest.py)


def signed(
    client: UcpClient,
    method: str,
    path: str,
    body: Any,
    *,
    key: Signer = SECRET,
    sent_body: Any = None,
) -> httpx.Response:
    """``client``'s call signed (RFC 9421) with ``key``; ``sent_body`` replaces the body after
    signing (a body changed on the way)."""
    content = None if body is None else orjson.dumps(body)
    extra = {"Content-Type": "application/json"} if content is not None else None
    headers = client.headers(extra, key=method != "GET")
    request = client.http.build_request(method, path, content=content, headers=headers)
    now = datetime.now(UTC)
    out = sign_request(key, method, str(request.url), request.headers, content or b"", now)
    headers = {k: v for k, v in out.items() if k.lower() not in ("content-length", "host")}
    sent = content if sent_body is None else orjson.dumps(sent_body)
    return client.http.request(method, path, content=sent, headers=headers)


def test_a_signing_agent_must_sign_every_ucp_call(
    ucp: UcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    signer = UcpClient(ucp.http, ucp.token + "-s")  # the agent with a signing secret
    body = {
        "line_items": lines(in_stock()[0]),
        "buyer": {"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"},
        "fulfillment": SHIPPING,
    }
    unsigned = signer.post("/checkout-sessions", body)
    assert (unsigned.status_code, unsigned.json()["code"]) == (401, "signature_missing")
    created = signed(signer, "POST", "/checkout-sessions", body)
    assert created.status_code == 201, created.text
    path = f"/checkout-sessions/{created.json()['id']}"
    for response in (
        signer.get(path),
        signer.put(path, body),
        signer.post(f"{path}/complete", PAYMENT),
        signer.post(f"{path}/cancel", None),
        signer.search({"query": "shirt"}),
    ):
        assert (response.status_code, response.json()["code"]) == (401, "signature_missing")
    complete = f"{path}/complete"
    other_secret = signed(signer, "POST", complete, PAYMENT, key=SharedKey.from_secret("guess"))
    assert (other_secret.status_code, other_secret.json()["code"]) == (401, "key_not_found")
    forged_key = SharedKey(SECRET.kid, b"guess")
    forged = signed(signer, "POST", complete, PAYMENT, key=forged_key)
    assert (forged.status_code, forged.json()["code"]) == (401, "signature_invalid")
    other_token = {"payment": {"instruments": [instrument(credential={
        "type": "paypal_payment_token", "token": "BA-SOMEONE-ELSES"})]}}  # fmt: skip
    altered = signed(signer, "POST", complete, PAYMENT, sent_body=other_token)
    assert (altered.status_code, altered.json()["code"]) == (400, "digest_mismatch")
    assert signed(signer, "GET", path, None).json()["status"] == "ready_for_complete"

    paid = signed(signer, "POST", complete, PAYMENT)
    assert paid.status_code == 200 and paid.json()["status"] == "completed"
    checkout = merchant.get(owner(signer, agents), created.json()["id"])
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


def test_only_an_agent_bound_to_its_profile_may_sign_with_the_profiles_key(
    merchant: Merchant, agents: Agents, agent_token: str
) -> None:
    key = SigningKey.generate()
    profile = {**platform_profile(), "signing_keys": [key.jwk()]}
    signer = next(agent for agent in agents.keys if agent.signing_secret is not None)
    body = body_of()
    bound = {signer.name: frozenset({PLATFORM})}
    with serve(merchant, agents, KnownProfiles({PLATFORM: profile}), agent_profiles=bound) as http:
        created = signed(UcpClient(http, signer.token), "POST", "/checkout-sessions", body, key=key)
        assert created.status_code == 201, created.text
    # Unbound, the caller names the profile itself: its key proves nothing the token does not.
    with serve(merchant, agents, KnownProfiles({PLATFORM: profile})) as http:
        refused = signed(UcpClient(http, signer.token), "POST", "/checkout-sessions", body, key=key)
        assert (refused.status_code, refused.json()["code"]) == (401, "key_not_found")
        secret = signed(UcpClient(http, signer.token), "POST", "/checkout-sessions", body)
        assert secret.status_code == 201


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


@pytest.mark.postgres  # claimed with each dialect's own INSERT ... ON CONFLICT
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


@pytest.mark.postgres  # claimed with each dialect's own INSERT ... ON CONFLICT
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


@pytest.mark.parametrize("token", ["4000000000000002", "NOT-A-TOKEN"])
def test_a_declining_or_unknown_token_is_a_decline_and_the_session_stays_payable(
    ucp: UcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient, token: str
) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}/complete"
    credential = {"type": "paypal_payment_token", "token": token}
    declined = ucp.post(path, {"payment": {"instruments": [instrument(credential=credential)]}})
    body = declined.json()
    conforms("checkout", body)
    assert body["status"] == "ready_for_complete" and "order" not in body
    assert ("warning", "payment_declined") in [(m["type"], m["code"]) for m in body["messages"]]
    [failed] = [m for m in body["messages"] if m["type"] == "error"]
    assert (failed["code"], failed["path"]) == (
        "payment_failed",
        "$.payment.instruments[0].credential.token",
    )
    paid = ucp.post(path, PAYMENT)
    assert paid.json()["status"] == "completed"
    checkout = merchant.get(owner(ucp, agents), session["id"])
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


def test_a_token_paypal_refuses_for_any_reason_names_the_selected_instruments_token(
    ucp: UcpClient,
    paypal_faults: PayPalFaults,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    session = ready(ucp)
    path = f"/checkout-sessions/{session['id']}/complete"
    error = paypal_error("INVALID_PARAMETER_VALUE", "/payment_source/token/id")
    paypal_faults.refused_creates.append((400, error))
    unknown = {"type": "paypal_payment_token", "token": "BA-UNKNOWN"}
    instruments = [
        instrument(selected=False),
        instrument(id="instr_2", selected=True, credential=unknown),
    ]
    declined = ucp.post(path, {"payment": {"instruments": instruments}})
    assert declined.status_code == 200  # UCP: a business outcome, in the checkout's messages
    body = declined.json()
    conforms("checkout", body)
    assert body["status"] == "ready_for_complete" and "order" not in body
    [failed] = [m for m in body["messages"] if m["type"] == "error"]
    assert (failed["code"], failed["path"], failed["severity"]) == (
        "payment_failed",
        "$.payment.instruments[1].credential.token",
        "recoverable",
    )
    assert "INVALID_PARAMETER_VALUE" in failed["content"]
    assert not [r for r in paypal_faults.sent if r.url.path.endswith("/capture")]
    assert ucp.post(path, PAYMENT).json()["status"] == "completed"
    checkout = merchant.get(owner(ucp, agents), session["id"])
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


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
        (  # the README's placeholder
            [instrument(credential={"type": "paypal_payment_token", "token": "BA-..."})],
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
