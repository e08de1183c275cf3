"""Customer Disputes v1 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events, ledger
from tests.conftest import Api, approve, issues

DISPUTES = "/v1/customer/disputes"


def captured(api: Api, value: str = "30.00") -> tuple[str, str]:
    """Create, approve and capture an order; return (order id, capture id)."""
    body = {
        "intent": "CAPTURE",
        "purchase_units": [{"amount": {"currency_code": "USD", "value": value}}],
    }
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    done = api.post(f"/v2/checkout/orders/{order['id']}/capture").json()
    return order["id"], done["purchase_units"][0]["payments"]["captures"][0]["id"]


def open_dispute(api: Api, capture_id: str, **extra: Any) -> dict[str, Any]:
    response = api.post("/v1/sandbox/disputes", {"capture_id": capture_id, **extra})
    assert response.status_code == 201, response.text
    dispute: dict[str, Any] = response.json()
    return dispute


def show(api: Api, dispute_id: str) -> dict[str, Any]:
    response = api.get(f"{DISPUTES}/{dispute_id}")
    assert response.status_code == 200, response.text
    dispute: dict[str, Any] = response.json()
    return dispute


def rels(resource: dict[str, Any]) -> set[str]:
    return {link["rel"] for link in resource["links"]}


def act(api: Api, dispute_id: str, action: str, body: Any = None) -> httpx.Response:
    return api.post(f"{DISPUTES}/{dispute_id}/{action}", body)


def capture_of(api: Api, order_id: str) -> dict[str, Any]:
    order = api.get(f"/v2/checkout/orders/{order_id}").json()
    payments: dict[str, Any] = order["purchase_units"][0]["payments"]
    return payments


def event_types(sandbox: Sandbox, api: Api) -> list[str]:
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.event_type).where(events.c.merchant_id == merchant.id)
        )
        return [r.event_type for r in rows]


def path_of(link: dict[str, str]) -> str:
    parts = urlsplit(link["href"])
    return parts.path + (f"?{parts.query}" if parts.query else "")


# opening -------------------------------------------------------------------------------------
def test_opening_a_dispute_waits_for_the_seller_in_the_inquiry_stage(
    api: Api, sandbox: Sandbox
) -> None:
    _, capture_id = captured(api)
    dispute = open_dispute(api, capture_id, message="It never arrived.")
    assert re.fullmatch(r"PP-D-\d{5}", dispute["dispute_id"])
    assert dispute["status"] == "WAITING_FOR_SELLER_RESPONSE"
    assert dispute["dispute_state"] == "REQUIRED_ACTION"
    assert dispute["dispute_life_cycle_stage"] == "INQUIRY"
    assert dispute["reason"] == "MERCHANDISE_OR_SERVICE_NOT_RECEIVED"
    assert dispute["dispute_amount"] == {"currency_code": "USD", "value": "30.00"}
    assert dispute["seller_response_due_date"] == "2026-12-11T12:00:00Z"
    transaction = dispute["disputed_transactions"][0]
    assert transaction["seller_transaction_id"] == capture_id
    assert transaction["gross_amount"]["value"] == "30.00"
    assert transaction["seller"]["merchant_id"]
    assert dispute["messages"] == [
        {
            "posted_by": "BUYER",
            "time_posted": "2026-11-21T12:00:00Z",
            "content": "It never arrived.",
        }
    ]
    assert rels(dispute) == {
        "self",
        "send_message",
        "make_offer",
        "provide_evidence",
        "accept_claim",
        "escalate",
    }
    assert show(api, dispute["dispute_id"]) == dispute
    assert event_types(sandbox, api).count("CUSTOMER.DISPUTE.CREATED") == 1


def test_a_partial_amount_and_another_reason_can_be_disputed(api: Api) -> None:
    _, capture_id = captured(api)
    dispute = open_dispute(
        api,
        capture_id,
        reason="MERCHANDISE_OR_SERVICE_NOT_AS_DESCRIBED",
        amount={"currency_code": "USD", "value": "12.50"},
    )
    assert dispute["reason"] == "MERCHANDISE_OR_SERVICE_NOT_AS_DESCRIBED"
    assert dispute["dispute_amount"]["value"] == "12.50"
    assert "messages" not in dispute


def test_opening_against_an_unknown_or_foreign_capture_is_not_found(
    api: Api, other_api: Api
) -> None:
    _, capture_id = captured(other_api)
    for wanted in ("NOSUCHCAPTURE0000", capture_id):
        response = api.post("/v1/sandbox/disputes", {"capture_id": wanted})
        assert response.status_code == 404
        assert issues(response) == ["INVALID_RESOURCE_ID"]


def test_opening_validates_its_input_and_writes_nothing_when_refused(api: Api) -> None:
    _, capture_id = captured(api)
    cases: list[tuple[Any, int, str]] = [
        ({}, 400, "MISSING_REQUIRED_PARAMETER"),
        ({"capture_id": capture_id, "colour": "red"}, 400, "UNKNOWN_FIELD"),
        ({"capture_id": capture_id, "reason": "BORED"}, 400, "INVALID_PARAMETER_VALUE"),
        ({"capture_id": capture_id, "message": 7}, 400, "INVALID_PARAMETER_VALUE"),
        (
            {"capture_id": capture_id, "amount": {"currency_code": "USD", "value": "30.01"}},
            422,
            "DISPUTE_AMOUNT_EXCEEDED",
        ),
        (
            {"capture_id": capture_id, "amount": {"currency_code": "EUR", "value": "1.00"}},
            422,
            "CURRENCY_MISMATCH",
        ),
        (
            {"capture_id": capture_id, "amount": {"currency_code": "USD", "value": "1.001"}},
            422,
            "DECIMAL_PRECISION",
        ),
        ([capture_id], 400, "INVALID_PARAMETER_SYNTAX"),
    ]
    for body, status, issue in cases:
        response = api.post("/v1/sandbox/disputes", body)
        assert (response.status_code, issues(response)) == (status, [issue]), body
    assert "items" not in api.get(DISPUTES).json()


def test_opening_needs_a_bearer_token(api: Api) -> None:
    response = api.http.post("/v1/sandbox/disputes", json={"capture_id": "X"})
    assert response.status_code == 401


def test_a_fully_refunded_capture_cannot_be_disputed(api: Api) -> None:
    _, capture_id = captured(api)
    dispute = open_dispute(api, capture_id)
    assert act(api, dispute["dispute_id"], "accept-claim", {"note": "Refund."}).status_code == 200
    response = api.post("/v1/sandbox/disputes", {"capture_id": capture_id})
    assert response.status_code == 422
    assert issues(response) == ["CAPTURE_FULLY_REFUNDED"]


# list and show -------------------------------------------------------------------------------
def test_list_shows_summaries_filtered_by_transaction_and_state(api: Api) -> None:
    _, first = captured(api)
    _, second = captured(api)
    a = open_dispute(api, first)["dispute_id"]
    b = open_dispute(api, second)["dispute_id"]
    act(api, b, "escalate", {"note": "Escalating."})
    listed = api.get(DISPUTES).json()
    assert [item["dispute_id"] for item in listed["items"]] == sorted([a, b], reverse=True)
    summary = next(item for item in listed["items"] if item["dispute_id"] == a)
    assert set(summary) >= {"dispute_id", "reason", "status", "dispute_amount", "create_time"}
    assert "disputed_transactions" not in summary
    assert rels(listed) == {"self"}
    by_capture = api.get(DISPUTES, params={"disputed_transaction_id": first}).json()
    assert [item["dispute_id"] for item in by_capture["items"]] == [a]
    waiting = api.get(DISPUTES, params={"dispute_state": "REQUIRED_ACTION"}).json()
    assert [item["dispute_id"] for item in waiting["items"]] == [a]
    review = api.get(DISPUTES, params={"dispute_state": "UNDER_PAYPAL_REVIEW"}).json()
    assert [item["dispute_id"] for item in review["items"]] == [b]
    inquiries = api.get(DISPUTES, params={"dispute_state": "OPEN_INQUIRIES"}).json()
    assert [item["dispute_id"] for item in inquiries["items"]] == [a]
    assert "items" not in api.get(DISPUTES, params={"dispute_state": "RESOLVED"}).json()


def test_list_filters_on_update_and_start_times(api: Api, sandbox: Sandbox) -> None:
    _, capture_id = captured(api)
    old = open_dispute(api, capture_id, amount={"currency_code": "USD", "value": "1.00"})
    sandbox.clock.advance(timedelta(hours=2))
    new = open_dispute(api, capture_id, amount={"currency_code": "USD", "value": "2.00"})
    params = {"update_time_after": "2026-11-21T13:00:00Z"}
    after = api.get(DISPUTES, params=params).json()
    assert [i["dispute_id"] for i in after["items"]] == [new["dispute_id"]]
    before = api.get(DISPUTES, params={"update_time_before": "2026-11-21T13:00:00Z"}).json()
    assert [i["dispute_id"] for i in before["items"]] == [old["dispute_id"]]
    started = api.get(DISPUTES, params={"start_time": "2026-11-21T13:00:00.000Z"}).json()
    assert [i["dispute_id"] for i in started["items"]] == [new["dispute_id"]]


def test_list_rejects_bad_filters(api: Api) -> None:
    cases: list[tuple[dict[str, str], str]] = [
        ({"start_time": "2027-01-01T00:00:00Z"}, "DATE_CAN_NOT_BE_IN_FUTURE"),
        ({"start_time": "2025-01-01T00:00:00Z"}, "INVALID_START_TIME_RANGE"),
        (
            {"start_time": "2026-11-01T00:00:00Z", "disputed_transaction_id": "ABC"},
            "INVALID_PARAMETER_VALUE",
        ),
        ({"dispute_state": "SLEEPING"}, "INVALID_PARAMETER_VALUE"),
        ({"page_size": "51"}, "INVALID_INTEGER_MAX_VALUE"),
        ({"page_size": "two"}, "INVALID_PARAMETER_SYNTAX"),
        ({"update_time_after": "yesterday"}, "INVALID_STRING_MIN_LENGTH"),
    ]
    for params, issue in cases:
        response = api.get(DISPUTES, params=params)
        assert (response.status_code, issues(response)) == (400, [issue]), params


def test_list_pages_through_every_dispute_with_next_page_tokens(api: Api, sandbox: Sandbox) -> None:
    _, capture_id = captured(api)
    opened = []
    for minute in range(5):
        sandbox.clock.advance(timedelta(minutes=minute % 2))  # some share a create_time
        amount = {"currency_code": "USD", "value": f"{minute + 1}.00"}
        opened.append(open_dispute(api, capture_id, amount=amount)["dispute_id"])
    pages = []
    response = api.get(DISPUTES, params={"page_size": "2"})
    while True:
        body = response.json()
        pages.append([item["dispute_id"] for item in body["items"]])
        nxt = [link for link in body["links"] if link["rel"] == "next"]
        if not nxt:
            break
        assert "page_size=2" in nxt[0]["href"]
        response = api.get(path_of(nxt[0]))
    assert [len(page) for page in pages] == [2, 2, 1]
    seen = [dispute_id for page in pages for dispute_id in page]
    assert sorted(seen) == sorted(opened) and len(set(seen)) == 5
    created = [show(api, d)["create_time"] for d in seen]
    assert created == sorted(created, reverse=True)


def test_a_malformed_page_token_is_a_bad_request(api: Api) -> None:
    for token, issue in (
        ("not a token!", "INVALID_PARAMETER_SYNTAX"),
        ("Zm9v", "INVALID_PARAMETER_VALUE"),
        ("YWJj", "INVALID_PARAMETER_VALUE"),
    ):
        response = api.get(DISPUTES, params={"next_page_token": token})
        assert (response.status_code, issues(response)) == (400, [issue]), token


def test_unknown_and_foreign_disputes_are_not_found(api: Api, other_api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    assert api.get(f"{DISPUTES}/PP-D-00000").status_code == 404
    assert other_api.get(f"{DISPUTES}/{dispute_id}").status_code == 404
    assert "items" not in other_api.get(DISPUTES).json()
    for action, body in (
        ("send-message", {"message": "hi"}),
        ("escalate", {"note": "x"}),
        ("accept-claim", {"note": "x"}),
    ):
        response = act(other_api, dispute_id, action, body)
        assert response.status_code == 404, action
    assert show(api, dispute_id)["status"] == "WAITING_FOR_SELLER_RESPONSE"


# merchant actions ----------------------------------------------------------------------------
def test_sending_a_message_appends_it_as_the_seller(api: Api, sandbox: Sandbox) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    response = act(api, dispute_id, "send-message", {"message": "Shipped on Monday."})
    assert response.status_code == 200
    assert response.json() == {
        "links": [
            {"href": f"http://sandbox.test{DISPUTES}/{dispute_id}", "rel": "self", "method": "GET"}
        ]
    }
    files = {"message_document": ("receipt.pdf", b"%PDF-1.4", "application/pdf")}
    multipart = api.request(
        "POST",
        f"{DISPUTES}/{dispute_id}/send-message",
        files=files,
        data={"input": '{"message": "Receipt attached."}'},
    )
    assert multipart.status_code == 200, multipart.text
    messages = show(api, dispute_id)["messages"]
    assert [(m["posted_by"], m["content"]) for m in messages] == [
        ("SELLER", "Shipped on Monday."),
        ("SELLER", "Receipt attached."),
    ]
    assert messages[1]["documents"] == [{"name": "receipt.pdf"}]
    assert event_types(sandbox, api).count("CUSTOMER.DISPUTE.UPDATED") == 2


def test_action_bodies_are_validated(api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    cases: list[tuple[str, Any, str]] = [
        ("send-message", {}, "MISSING_REQUIRED_PARAMETER"),
        ("send-message", {"message": "x" * 2001}, "INVALID_STRING_MAX_LENGTH"),
        ("send-message", {"message": "hi", "mood": "sad"}, "UNKNOWN_FIELD"),
        ("accept-claim", {"note": 5}, "INVALID_PARAMETER_SYNTAX"),
        ("accept-claim", None, "MISSING_REQUIRED_PARAMETER"),
        ("provide-evidence", {"evidences": []}, "INVALID_ARRAY_MIN_ITEMS"),
        ("provide-evidence", {"evidences": [{"evidence_type": "NOPE"}]}, "INVALID_PARAMETER_VALUE"),
        ("escalate", {}, "MISSING_REQUIRED_PARAMETER"),
        ("make-offer", {"note": "x"}, "MISSING_REQUIRED_PARAMETER"),
    ]
    for action, body, issue in cases:
        response = act(api, dispute_id, action, body)
        assert (response.status_code, issues(response)) == (400, [issue]), (action, body)
    malformed = api.request(
        "POST",
        f"{DISPUTES}/{dispute_id}/accept-claim",
        content=b"{nope",
        headers={"Content-Type": "application/json"},
    )
    assert issues(malformed) == ["MALFORMED_REQUEST_JSON"]
    text = api.request(
        "POST",
        f"{DISPUTES}/{dispute_id}/accept-claim",
        content=b"note",
        headers={"Content-Type": "text/plain"},
    )
    assert text.status_code == 415
    after = show(api, dispute_id)
    assert after["status"] == "WAITING_FOR_SELLER_RESPONSE" and "messages" not in after


def test_providing_evidence_puts_the_dispute_under_review_once(api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    evidence = {
        "evidences": [
            {
                "evidence_type": "PROOF_OF_FULFILLMENT",
                "evidence_info": {
                    "tracking_info": [{"carrier_name": "UPS", "tracking_number": "1Z999"}]
                },
                "notes": "Delivered to the porch.",
            }
        ]
    }
    response = api.request(
        "POST",
        f"{DISPUTES}/{dispute_id}/provide-evidence",
        data={"input": orjson.dumps(evidence).decode()},
        files={"evidence-file": ("label.png", b"\x89PNG", "image/png")},
    )
    assert response.status_code == 200, response.text
    dispute = show(api, dispute_id)
    assert dispute["status"] == "UNDER_REVIEW"
    assert dispute["dispute_state"] == "UNDER_PAYPAL_REVIEW"
    assert "seller_response_due_date" not in dispute
    [stored] = dispute["evidences"]
    assert stored["evidence_type"] == "PROOF_OF_FULFILLMENT"
    assert stored["source"] == "SUBMITTED_BY_SELLER"
    assert stored["documents"] == [{"name": "label.png"}]
    assert "provide_evidence" not in rels(dispute)
    again = act(api, dispute_id, "provide-evidence", evidence)
    assert again.status_code == 422
    assert issues(again) == ["ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE"]
    assert len(show(api, dispute_id)["evidences"]) == 1


def test_escalating_moves_the_inquiry_to_a_claim_under_review_only_once(api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    assert act(api, dispute_id, "escalate", {"note": "Buyer unresponsive."}).status_code == 200
    dispute = show(api, dispute_id)
    assert dispute["dispute_life_cycle_stage"] == "CHARGEBACK"
    assert dispute["status"] == "UNDER_REVIEW"
    assert rels(dispute) == {"self", "accept_claim"}
    again = act(api, dispute_id, "escalate", {"note": "Again."})
    assert again.status_code == 422
    assert issues(again) == ["ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE"]
    message = act(api, dispute_id, "send-message", {"message": "Hello?"})
    assert issues(message) == ["ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE"]
    assert len(show(api, dispute_id)["messages"]) == 1


def test_full_flow_then_accepting_the_claim_refunds_the_capture(api: Api, sandbox: Sandbox) -> None:
    order_id, capture_id = captured(api, "30.00")
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    assert act(api, dispute_id, "send-message", {"message": "Checking."}).status_code == 200
    evidence = {"evidences": [{"evidence_type": "OTHER", "notes": "Carrier lost it."}]}
    assert act(api, dispute_id, "provide-evidence", evidence).status_code == 200
    assert act(api, dispute_id, "escalate", {"note": "Let PayPal decide."}).status_code == 200
    response = act(api, dispute_id, "accept-claim", {"note": "Refunding in full."})
    assert response.status_code == 200
    assert rels(response.json()) == {"self"}
    dispute = show(api, dispute_id)
    assert dispute["status"] == "RESOLVED"
    assert dispute["dispute_state"] == "RESOLVED"
    assert dispute["dispute_outcome"] == {
        "outcome_code": "RESOLVED_BUYER_FAVOUR",
        "amount_refunded": {"currency_code": "USD", "value": "30.00"},
    }
    assert rels(dispute) == {"self"}
    payments = capture_of(api, order_id)
    assert payments["captures"][0]["status"] == "REFUNDED"
    [refund] = payments["refunds"]
    assert refund["amount"] == {"currency_code": "USD", "value": "30.00"}
    assert refund["status"] == "COMPLETED"
    with sandbox.store.engine.connect() as conn:
        row = conn.execute(
            sa.select(ledger.c.event_code, ledger.c.amount).where(
                ledger.c.transaction_id == refund["id"]
            )
        ).one()
    assert (row.event_code, str(row.amount)) == ("T1106", "-30.00")
    emitted = event_types(sandbox, api)
    assert emitted.count("PAYMENT.CAPTURE.REFUNDED") == 1
    assert emitted.count("CUSTOMER.DISPUTE.RESOLVED") == 1
    assert emitted.count("CUSTOMER.DISPUTE.UPDATED") == 3
    again = act(api, dispute_id, "accept-claim", {"note": "Twice?"})
    assert again.status_code == 422
    assert issues(again) == ["ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE"]
    assert len(capture_of(api, order_id)["refunds"]) == 1


def test_accepting_a_claim_for_part_of_the_amount_partially_refunds(api: Api) -> None:
    order_id, capture_id = captured(api, "30.00")
    snad = open_dispute(api, capture_id, reason="MERCHANDISE_OR_SERVICE_NOT_AS_DESCRIBED")
    too_much = act(
        api,
        snad["dispute_id"],
        "accept-claim",
        {"note": "x", "refund_amount": {"currency_code": "USD", "value": "30.01"}},
    )
    assert (too_much.status_code, issues(too_much)) == (422, ["INVALID_AMOUNT"])
    partial = {"note": "Half back.", "refund_amount": {"currency_code": "USD", "value": "15.00"}}
    assert act(api, snad["dispute_id"], "accept-claim", partial).status_code == 200
    payments = capture_of(api, order_id)
    assert payments["captures"][0]["status"] == "PARTIALLY_REFUNDED"
    assert [r["amount"]["value"] for r in payments["refunds"]] == ["15.00"]
    outcome = show(api, snad["dispute_id"])["dispute_outcome"]
    assert outcome["amount_refunded"]["value"] == "15.00"


def test_a_refund_amount_is_refused_for_an_item_not_received_claim(api: Api) -> None:
    order_id, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    body = {"note": "x", "refund_amount": {"currency_code": "USD", "value": "5.00"}}
    response = act(api, dispute_id, "accept-claim", body)
    assert (response.status_code, issues(response)) == (422, ["AMOUNT_SHOULD_NOT_BE_PASSED"])
    assert show(api, dispute_id)["status"] == "WAITING_FOR_SELLER_RESPONSE"
    assert "refunds" not in capture_of(api, order_id)


def test_the_buyer_accepting_an_offer_refunds_the_offered_amount(api: Api) -> None:
    order_id, capture_id = captured(api, "30.00")
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    offer = {
        "note": "Ten back, keep the item.",
        "offer_type": "REFUND",
        "offer_amount": {"currency_code": "USD", "value": "10.00"},
    }
    assert act(api, dispute_id, "make-offer", offer).status_code == 200
    dispute = show(api, dispute_id)
    assert dispute["status"] == "WAITING_FOR_BUYER_RESPONSE"
    assert dispute["dispute_state"] == "REQUIRED_OTHER_PARTY_ACTION"
    assert dispute["buyer_response_due_date"] == "2026-12-11T12:00:00Z"
    assert dispute["offer"]["seller_offered_amount"]["value"] == "10.00"
    assert act(api, dispute_id, "make-offer", offer).status_code == 422
    assert act(api, dispute_id, "accept-offer", {"note": "Fine."}).status_code == 200
    dispute = show(api, dispute_id)
    assert dispute["status"] == "RESOLVED"
    assert dispute["dispute_outcome"]["outcome_code"] == "ACCEPTED"
    assert [h["event_type"] for h in dispute["offer"]["history"]] == ["PROPOSED", "ACCEPTED"]
    assert [r["amount"]["value"] for r in capture_of(api, order_id)["refunds"]] == ["10.00"]


def test_a_denied_offer_returns_the_dispute_to_the_seller(api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    assert act(api, dispute_id, "deny-offer", {"note": "No offer yet."}).status_code == 422
    offer = {"note": "Replacement.", "offer_type": "REPLACEMENT_WITHOUT_REFUND"}
    assert act(api, dispute_id, "make-offer", offer).status_code == 200
    assert act(api, dispute_id, "deny-offer", {"note": "I want money."}).status_code == 200
    dispute = show(api, dispute_id)
    assert dispute["status"] == "WAITING_FOR_SELLER_RESPONSE"
    assert [h["event_type"] for h in dispute["offer"]["history"]] == ["PROPOSED", "DENIED"]
    over = {
        "note": "x",
        "offer_type": "REFUND",
        "offer_amount": {"currency_code": "USD", "value": "99.00"},
    }
    assert issues(act(api, dispute_id, "make-offer", over)) == ["INVALID_AMOUNT"]


def test_sandbox_review_can_request_evidence_and_settle_for_the_seller(api: Api) -> None:
    order_id, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    assert (
        act(api, dispute_id, "adjudicate", {"adjudication_outcome": "SELLER_FAVOR"}).status_code
        == 422
    )
    act(api, dispute_id, "escalate", {"note": "Claim."})
    assert (
        act(api, dispute_id, "require-evidence", {"action": "SELLER_EVIDENCE"}).status_code == 200
    )
    assert show(api, dispute_id)["status"] == "WAITING_FOR_SELLER_RESPONSE"
    evidence = {"evidences": [{"evidence_type": "PROOF_OF_FULFILLMENT", "notes": "Tracked."}]}
    assert act(api, dispute_id, "provide-evidence", evidence).status_code == 200
    settle = act(api, dispute_id, "adjudicate", {"adjudication_outcome": "SELLER_FAVOR"})
    assert settle.status_code == 200
    dispute = show(api, dispute_id)
    assert dispute["dispute_outcome"]["outcome_code"] == "RESOLVED_SELLER_FAVOUR"
    assert dispute["dispute_outcome"]["amount_refunded"]["value"] == "0.00"
    assert capture_of(api, order_id)["captures"][0]["status"] == "COMPLETED"


def test_sandbox_settlement_for_the_buyer_refunds_the_disputed_amount(api: Api) -> None:
    order_id, capture_id = captured(api, "30.00")
    amount = {"currency_code": "USD", "value": "20.00"}
    dispute_id = open_dispute(api, capture_id, amount=amount)["dispute_id"]
    act(api, dispute_id, "escalate", {"note": "Claim."})
    response = act(api, dispute_id, "adjudicate", {"adjudication_outcome": "BUYER_FAVOR"})
    assert response.status_code == 200
    payments = capture_of(api, order_id)
    assert payments["captures"][0]["status"] == "PARTIALLY_REFUNDED"
    assert [r["amount"]["value"] for r in payments["refunds"]] == ["20.00"]


def test_mock_response_header_fails_an_action_without_changing_the_dispute(api: Api) -> None:
    _, capture_id = captured(api)
    dispute_id = open_dispute(api, capture_id)["dispute_id"]
    mock = {"PayPal-Mock-Response": '{"mock_application_codes": "PERMISSION_DENIED"}'}
    for action, body in (("send-message", {"message": "hi"}), ("escalate", {"note": "x"})):
        response = api.post(f"{DISPUTES}/{dispute_id}/{action}", body, headers=mock)
        assert (response.status_code, issues(response)) == (403, ["PERMISSION_DENIED"]), action
    dispute = show(api, dispute_id)
    assert dispute["dispute_life_cycle_stage"] == "INQUIRY" and "messages" not in dispute
