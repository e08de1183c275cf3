"""The transaction search tool against the sandbox ledger."""

from __future__ import annotations

import httpx
from fastapi.testclient import TestClient

from cartagent.paypal import AsyncPayPalClient
from cartagent.tools import Toolkit, ToolkitConfig
from cartagent.tools.transactions import TOOLS

from .conftest import call
from .flows import hints, paid_capture


def test_a_capture_is_listed_in_the_last_31_days_by_default(
    toolkit: Toolkit, http: TestClient
) -> None:
    capture_id = paid_capture(toolkit, http, "42.00")
    listed = call(toolkit, "list_transactions", {})
    assert not listed.is_error, listed.content
    assert (listed.content["start_date"], listed.content["end_date"]) == (
        "2026-10-22",
        "2026-11-21",
    )
    rows = listed.content["transactions"]
    assert [(r["id"], r["amount"], r["currency"], r["status"]) for r in rows] == [
        (capture_id, "42.00", "USD", "S")
    ]
    only = call(
        toolkit, "list_transactions", {"transaction_id": "0AB12345CD6789012", "page_size": 5}
    )
    assert only.content["transactions"] == []
    assert (
        call(toolkit, "list_transactions", {"transaction_status": "S"}).content["total_items"] == 1
    )


def test_items_are_listed_only_when_asked_for(toolkit: Toolkit, http: TestClient) -> None:
    paid_capture(toolkit, http, "42.00")
    plain = call(toolkit, "list_transactions", {}).content["transactions"]
    detailed = call(toolkit, "list_transactions", {"include_items": True}).content["transactions"]
    assert "items" not in plain[0]
    assert detailed[0]["items"] == [
        {"name": "Mug", "quantity": "1", "amount": "42.00", "currency": "USD"}
    ]
    assert {k: v for k, v in detailed[0].items() if k != "items"} == plain[0]


def test_a_window_over_31_days_is_refused_naming_end_date_before_any_request() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    offline = AsyncPayPalClient("id", "secret", transport=httpx.MockTransport(record))
    toolkit = Toolkit(
        offline, TOOLS, config=ToolkitConfig.everything((t.family, t.action) for t in TOOLS)
    )
    result = call(
        toolkit, "list_transactions", {"start_date": "2026-10-01", "end_date": "2026-11-01"}
    )
    assert result.is_error
    assert result.content["field"] == "end_date"
    assert "31 days" in result.content["message"]
    backwards = call(
        toolkit, "list_transactions", {"start_date": "2026-11-02", "end_date": "2026-11-01"}
    )
    assert backwards.content["field"] == "end_date"
    assert sent == []


def test_an_unknown_status_or_short_transaction_id_is_refused_naming_it(toolkit: Toolkit) -> None:
    result = call(toolkit, "list_transactions", {"transaction_status": "X"})
    assert result.is_error
    assert result.content["field"] == "transaction_status"
    result = call(toolkit, "list_transactions", {"transaction_id": "SHORT"})
    assert result.content["field"] == "transaction_id"


def test_listing_transactions_only_reads() -> None:
    assert hints(TOOLS) == {
        "list_transactions": ("readOnlyHint", "idempotentHint", "openWorldHint"),
    }
