"""ACP's protocol rules: auth, API-Version, idempotency, signatures, state changes, failures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cartagent.commerce import Agents, Merchant, MerchantCatalog, PayPalPayments, sign
from cartagent.commerce.records import fingerprint
from cartagent.paypal import PayPalClient
from tests.commerce.conftest import (
    ADDRESS,
    AcpClient,
    PayPalFaults,
    in_stock,
    paypal_error,
    tau_products,
)
from tests.commerce.test_acp_checkout import PAYMENT, conforms, owner, ready

TOKEN_PARAM = "$.payment_data.instrument.credential.token"


def test_a_call_without_a_valid_bearer_token_is_401(acp: AcpClient) -> None:
    for auth in ({"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}):
        response = acp.get("/checkout_sessions/cs_x", headers=auth)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        conforms("Error", response.json())


@pytest.mark.parametrize(
    ("version", "code"), [("", "missing_api_version"), ("2025-09-29", "unsupported_api_version")]
)
def test_the_api_version_is_required_and_checked(acp: AcpClient, version: str, code: str) -> None:
    response = acp.post("/checkout_sessions", {}, headers={"API-Version": version})
    assert (response.status_code, response.json()["code"]) == (400, code)
    assert "2026-04-17" in response.json()["message"]


def test_every_post_needs_an_idempotency_key(acp: AcpClient) -> None:
    response = acp.post("/checkout_sessions", {}, headers={"Idempotency-Key": ""})
    assert (response.status_code, response.json()["code"]) == (400, "idempotency_key_required")
    too_long = acp.post("/checkout_sessions", {}, headers={"Idempotency-Key": "k" * 256})
    assert too_long.status_code == 400


@pytest.mark.postgres  # claimed with each dialect's own INSERT ... ON CONFLICT
def test_the_same_key_replays_and_another_body_conflicts(acp: AcpClient) -> None:
    body = {"line_items": [{"id": in_stock()[0]}], "currency": "usd", "capabilities": {}}
    headers = {"Idempotency-Key": "create-1", "Request-Id": "req-7"}
    first = acp.post("/checkout_sessions", body, headers=headers)
    assert first.status_code == 201
    assert first.headers["Idempotency-Key"] == "create-1"
    assert first.headers["Request-Id"] == "req-7"
    assert "Idempotent-Replayed" not in first.headers
    # Key order and 1 vs 1.0 do not make a different request.
    reordered = {"capabilities": {}, "currency": "usd", "line_items": body["line_items"]}
    replay = acp.post("/checkout_sessions", reordered, headers=headers)
    assert replay.status_code == 201 and replay.json()["id"] == first.json()["id"]
    assert replay.headers["Idempotent-Replayed"] == "true"
    other = acp.post("/checkout_sessions", {**body, "locale": "en-US"}, headers=headers)
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_conflict")
    # Keys are scoped to the path: the same key on another endpoint is a new request.
    update = acp.post(f"/checkout_sessions/{first.json()['id']}", {}, headers=headers)
    assert update.status_code == 200


def test_keys_are_scoped_to_the_agent(acp: AcpClient, other_acp: AcpClient) -> None:
    body = {"line_items": [{"id": in_stock()[0]}], "currency": "usd", "capabilities": {}}
    mine = acp.post("/checkout_sessions", body, headers={"Idempotency-Key": "shared"})
    theirs = other_acp.post("/checkout_sessions", body, headers={"Idempotency-Key": "shared"})
    assert mine.json()["id"] != theirs.json()["id"]
    assert "Idempotent-Replayed" not in theirs.headers
    assert other_acp.get(f"/checkout_sessions/{mine.json()['id']}").status_code == 404


@pytest.mark.postgres  # claimed with each dialect's own INSERT ... ON CONFLICT
def test_a_key_in_flight_is_409_with_retry_after(
    acp: AcpClient, agents: Agents, merchant: Merchant
) -> None:
    body: dict[str, Any] = {
        "line_items": [{"id": in_stock()[0]}],
        "currency": "usd",
        "capabilities": {},
    }
    scope = f"acp {owner(acp, agents)} /checkout_sessions"
    claim = merchant.records.claim(scope, "busy", fingerprint(body), merchant.clock())
    assert claim.kind == "new"
    response = acp.post("/checkout_sessions", body, headers={"Idempotency-Key": "busy"})
    assert (response.status_code, response.json()["code"]) == (409, "idempotency_in_flight")
    assert response.headers["Retry-After"] == "1"


@pytest.mark.postgres  # claimed with each dialect's own INSERT ... ON CONFLICT
def test_an_abandoned_key_is_taken_over(acp: AcpClient, agents: Agents, merchant: Merchant) -> None:
    body: dict[str, Any] = {
        "line_items": [{"id": in_stock()[0]}],
        "currency": "usd",
        "capabilities": {},
    }
    scope = f"acp {owner(acp, agents)} /checkout_sessions"
    long_ago = merchant.clock() - timedelta(minutes=5)
    merchant.records.claim(scope, "crashed", fingerprint(body), long_ago)
    response = acp.post("/checkout_sessions", body, headers={"Idempotency-Key": "crashed"})
    assert response.status_code == 201


def test_a_paypal_outage_is_503_and_never_replayed(
    acp: AcpClient,
    paypal_faults: PayPalFaults,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}/complete"
    key = {"Idempotency-Key": "pay-once"}
    paypal_faults.outages = 1
    failed = acp.post(path, {"payment_data": PAYMENT}, headers=key)
    assert (failed.status_code, failed.json()["type"]) == (503, "service_unavailable")
    assert "Retry-After" in failed.headers
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"
    retried = acp.post(path, {"payment_data": PAYMENT}, headers=key)
    assert retried.status_code == 200 and "Idempotent-Replayed" not in retried.headers
    assert retried.json()["status"] == "completed"
    # The retry reused the first attempt's PayPal-Request-Id: one PayPal order, one capture.
    creates = [r for r in paypal_faults.sent if r.url.path == "/v2/checkout/orders"]
    assert len({r.headers["PayPal-Request-Id"] for r in creates}) == 1
    checkout = merchant.get(owner(acp, agents), session["id"])
    assert checkout.payment.paypal_order_id is not None
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id)
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


def test_a_decline_keeps_the_session_open_and_another_instrument_pays(
    acp: AcpClient,
    paypal_faults: PayPalFaults,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
) -> None:
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}/complete"
    paypal_faults.declines = 1
    declined = acp.post(path, {"payment_data": PAYMENT})
    assert (declined.status_code, declined.json()["code"]) == (402, "payment_declined")
    after = acp.get(f"/checkout_sessions/{session['id']}").json()
    assert after["status"] == "ready_for_payment"
    assert [m["code"] for m in after["messages"]] == ["payment_declined"]
    paid = acp.post(path, {"payment_data": PAYMENT})
    assert paid.status_code == 200 and paid.json()["status"] == "completed"
    checkout = merchant.get(owner(acp, agents), session["id"])
    assert checkout.payment.attempt == 1
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert order["status"] == "COMPLETED"


def paying_with(token: str) -> dict[str, Any]:
    credential = {"type": "paypal_payment_token", "token": token}
    return {"payment_data": {**PAYMENT, "instrument": {"type": "paypal", "credential": credential}}}


@pytest.mark.parametrize("token", ["4000000000000002", "NOT-A-TOKEN", "garbage"])
def test_a_declining_or_unknown_token_is_a_decline_and_the_session_stays_payable(
    acp: AcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient, token: str
) -> None:
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}/complete"
    declined = acp.post(path, paying_with(token))
    assert declined.status_code == 402
    conforms("Error", declined.json())
    assert declined.json() | {"message": ""} == {
        "type": "invalid_request",
        "code": "payment_declined",
        "message": "",
        "param": TOKEN_PARAM,
    }
    after = acp.get(f"/checkout_sessions/{session['id']}").json()
    assert after["status"] == "ready_for_payment" and "order" not in after
    assert [m["code"] for m in after["messages"]] == ["payment_declined"]
    paid = acp.post(path, {"payment_data": PAYMENT})
    assert paid.status_code == 200 and paid.json()["status"] == "completed"
    checkout = merchant.get(owner(acp, agents), session["id"])
    assert checkout.payment.attempt == 1
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


@pytest.mark.parametrize("token", ["tok en!", "BA-..."])  # the README's placeholder
def test_a_token_paypal_could_not_even_read_is_refused_before_paypal(
    acp: AcpClient, paypal_faults: PayPalFaults, token: str
) -> None:
    session = ready(acp)
    sent = len(paypal_faults.sent)
    refused = acp.post(f"/checkout_sessions/{session['id']}/complete", paying_with(token))
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid")
    assert refused.json()["param"] == TOKEN_PARAM
    assert len(paypal_faults.sent) == sent


@pytest.mark.parametrize(
    ("status", "issue"),
    [(400, "INVALID_PARAMETER_VALUE"), (422, "PAYMENT_SOURCE_INFO_CANNOT_BE_VERIFIED")],
)
def test_a_token_paypal_refuses_for_any_reason_is_a_decline_not_a_merchant_failure(
    acp: AcpClient,
    paypal_faults: PayPalFaults,
    agents: Agents,
    merchant: Merchant,
    merchant_paypal: PayPalClient,
    status: int,
    issue: str,
) -> None:
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}/complete"
    paypal_faults.refused_creates.append((status, paypal_error(issue, "/payment_source/token/id")))
    declined = acp.post(path, paying_with("BA-UNKNOWN"))
    assert (declined.status_code, declined.json()["type"]) == (402, "invalid_request")
    assert (declined.json()["code"], declined.json()["param"]) == ("payment_declined", TOKEN_PARAM)
    assert issue in declined.json()["message"]
    assert not [r for r in paypal_faults.sent if r.url.path.endswith("/capture")]
    paid = acp.post(path, {"payment_data": PAYMENT})
    assert paid.status_code == 200 and paid.json()["status"] == "completed"
    checkout = merchant.get(owner(acp, agents), session["id"])
    order = merchant_paypal.get_order(checkout.payment.paypal_order_id or "")
    assert len(order["purchase_units"][0]["payments"]["captures"]) == 1


def test_a_refusal_of_the_merchants_own_order_body_stays_a_merchant_failure(
    acp: AcpClient, paypal_faults: PayPalFaults
) -> None:
    session = ready(acp)
    error = paypal_error("INVALID_PARAMETER_VALUE", "/purchase_units/0/amount", "1.00")
    paypal_faults.refused_creates.append((400, error))
    failed = acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": PAYMENT})
    assert (failed.status_code, failed.json()["type"]) == (500, "processing_error")
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"


@pytest.mark.parametrize(
    ("payment", "param"),
    [
        ({**PAYMENT, "handler_id": "stripe"}, "$.payment_data.handler_id"),
        ({"purchase_order_number": "PO-1"}, "$.payment_data.handler_id"),
        (
            {
                **PAYMENT,
                "instrument": {"type": "card", "credential": {"type": "spt", "token": "t"}},
            },
            "$.payment_data.instrument.credential.type",
        ),
    ],
)
def test_payment_data_the_paypal_handler_cannot_take_is_refused(
    acp: AcpClient, payment: dict[str, Any], param: str
) -> None:
    session = ready(acp)
    response = acp.post(f"/checkout_sessions/{session['id']}/complete", {"payment_data": payment})
    assert (response.status_code, response.json()["param"]) == (400, param)
    assert acp.get(f"/checkout_sessions/{session['id']}").json()["status"] == "ready_for_payment"


def test_cancel_then_nothing_changes_it(acp: AcpClient) -> None:
    session = ready(acp)
    path = f"/checkout_sessions/{session['id']}"
    canceled = acp.post(f"{path}/cancel", {})
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    conforms("CheckoutSession", canceled.json())
    assert acp.post(f"{path}/cancel", {}).status_code == 405
    assert acp.post(path, {"line_items": [{"id": in_stock()[0]}]}).status_code == 409
    assert acp.post(f"{path}/complete", {"payment_data": PAYMENT}).status_code == 409


def test_an_unknown_session_is_404(acp: AcpClient) -> None:
    response = acp.get("/checkout_sessions/cs_missing")
    assert (response.status_code, response.json()["code"]) == (404, "not_found")


def test_a_signing_agent_must_sign(acp: AcpClient) -> None:
    signer = AcpClient(acp.http, acp.token + "-s")
    body = {"line_items": [{"id": in_stock()[0]}], "currency": "usd", "capabilities": {}}
    unsigned = signer.post("/checkout_sessions", body)
    assert (unsigned.status_code, unsigned.json()["code"]) == (401, "invalid_signature")
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    good = {"Timestamp": now, "Signature": sign("s3cret", now, body)}
    assert signer.post("/checkout_sessions", body, headers=good).status_code == 201
    tampered = {**body, "locale": "fr-FR"}
    assert signer.post("/checkout_sessions", tampered, headers=good).status_code == 401
    old = (datetime.now(UTC) - timedelta(minutes=10)).isoformat()
    stale = {"Timestamp": old, "Signature": sign("s3cret", old, body)}
    assert signer.post("/checkout_sessions", body, headers=stale).status_code == 401
    # GETs are signed over the empty body.
    created = signer.post("/checkout_sessions", body, headers=good).json()
    get_sig = {"Timestamp": now, "Signature": sign("s3cret", now, None)}
    assert signer.get(f"/checkout_sessions/{created['id']}", headers=get_sig).status_code == 200


def test_a_session_survives_a_restart(
    acp: AcpClient, agents: Agents, merchant: Merchant, merchant_paypal: PayPalClient
) -> None:
    session = ready(acp)
    again = Merchant(
        MerchantCatalog(tau_products()),
        type(merchant.records)(merchant.records.engine),
        PayPalPayments(merchant_paypal),
    )
    restored = again.get(owner(acp, agents), session["id"])
    assert restored.address is not None and restored.address.postal_code == ADDRESS["postal_code"]
    assert again.bill(restored).total.minor_units == session["totals"][-1]["amount"]


def test_bad_json_and_non_objects_are_400(acp: AcpClient) -> None:
    headers = acp.headers({"Content-Type": "application/json"}, post=True)
    broken = acp.http.post("/checkout_sessions", content=b"{nope", headers=headers)
    assert (broken.status_code, broken.json()["code"]) == (400, "invalid_json")
    listed = acp.http.post("/checkout_sessions", content=b"[]", headers=acp.headers(post=True))
    assert listed.status_code == 400


def test_discovery_names_the_version_and_base_url(acp: AcpClient) -> None:
    document = acp.http.get("/.well-known/acp.json").json()
    conforms("DiscoveryResponse", document)
    assert document["protocol"]["version"] == "2026-04-17"
    assert document["api_base_url"] == "http://merchant.test"
