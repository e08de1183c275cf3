"""Dispute tools against the sandbox, on a dispute opened over a captured order."""

from __future__ import annotations

from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import ApprovalRequest, Toolkit
from cartagent.tools.disputes import TOOLS

from .conftest import MakeToolkit, call
from .flows import hints, paid_capture, sandbox_get, sandbox_post


def open_dispute(toolkit: Toolkit, http: TestClient, client: AsyncPayPalClient) -> tuple[str, str]:
    capture_id = paid_capture(toolkit, http, "25.00")
    dispute = sandbox_post(
        client, "/v1/sandbox/disputes", {"capture_id": capture_id, "message": "Never arrived"}
    )
    return capture_id, str(dispute["dispute_id"])


def test_a_dispute_is_listed_shown_and_answered_with_evidence(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(toolkit, http, paypal_client)
    listed = call(toolkit, "list_disputes", {"dispute_state": "REQUIRED_ACTION"})
    assert [d["dispute_id"] for d in listed.content["disputes"]] == [dispute_id]
    assert call(toolkit, "list_disputes", {"dispute_state": "RESOLVED"}).content == {"disputes": []}

    shown = call(toolkit, "get_dispute", {"dispute_id": dispute_id})
    assert shown.content["transaction_ids"] == [capture_id]
    assert (shown.content["amount"], shown.content["currency"]) == ("25.00", "USD")
    assert "provide_evidence" in shown.content["allowed_actions"]
    assert shown.content["messages"] == [{"by": "BUYER", "text": "Never arrived"}]

    answered = call(
        toolkit,
        "provide_dispute_evidence",
        {"dispute_id": dispute_id, "evidence_type": "PROOF_OF_FULFILLMENT", "notes": "Sent UPS"},
    )
    assert not answered.is_error, answered.content
    assert answered.content["status"] == "UNDER_REVIEW"
    assert answered.content["evidence_types"] == ["PROOF_OF_FULFILLMENT"]


def test_accepting_a_claim_asks_approval_for_the_disputed_amount_and_refunds_it(
    make_toolkit: MakeToolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    toolkit = make_toolkit(approve=approve)
    capture_id, dispute_id = open_dispute(make_toolkit(), http, paypal_client)
    result = call(toolkit, "accept_dispute_claim", {"dispute_id": dispute_id, "note": "Sorry"})
    assert not result.is_error, result.content
    assert [(a.tool, str(a.amount)) for a in asked] == [("accept_dispute_claim", "25.00 USD")]
    assert result.content["status"] == "RESOLVED"
    assert (result.content["outcome"], result.content["amount_refunded"]) == (
        "RESOLVED_BUYER_FAVOUR",
        "25.00",
    )
    capture = sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")
    assert capture["status"] == "REFUNDED"


def test_accepting_a_claim_is_refused_by_default_and_nothing_is_refunded(
    make_toolkit: MakeToolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    capture_id, dispute_id = open_dispute(make_toolkit(), http, paypal_client)
    result = call(
        make_toolkit(approve=None), "accept_dispute_claim", {"dispute_id": dispute_id, "note": "x"}
    )
    assert result.is_error
    assert result.content["kind"] == "ApprovalRequired"
    dispute = sandbox_get(paypal_client, f"/v1/customer/disputes/{dispute_id}")
    assert dispute["status"] == "WAITING_FOR_SELLER_RESPONSE"
    capture = sandbox_get(paypal_client, f"/v2/payments/captures/{capture_id}")
    assert capture["status"] == "COMPLETED"


def test_evidence_notes_over_2000_characters_are_refused_naming_notes(
    toolkit: Toolkit, http: TestClient, paypal_client: AsyncPayPalClient
) -> None:
    _, dispute_id = open_dispute(toolkit, http, paypal_client)
    result = call(
        toolkit, "provide_dispute_evidence", {"dispute_id": dispute_id, "notes": "x" * 2001}
    )
    assert result.is_error
    assert result.content["field"] == "notes"
    dispute = sandbox_get(paypal_client, f"/v1/customer/disputes/{dispute_id}")
    assert dispute["status"] == "WAITING_FOR_SELLER_RESPONSE"


def test_listing_by_both_start_time_and_transaction_is_refused_naming_start_time(
    toolkit: Toolkit,
) -> None:
    result = call(
        toolkit,
        "list_disputes",
        {"disputed_transaction_id": "ABC", "start_time": "2026-11-01T00:00:00Z"},
    )
    assert result.is_error
    assert result.content["field"] == "start_time"


def test_accepting_a_claim_moves_money_and_is_destructive() -> None:
    read = ("readOnlyHint", "idempotentHint", "openWorldHint")
    assert hints(TOOLS) == {
        "list_disputes": read,
        "get_dispute": read,
        "provide_dispute_evidence": ("openWorldHint",),
        "accept_dispute_claim": ("destructiveHint", "openWorldHint", "moves_money", "approval"),
    }
