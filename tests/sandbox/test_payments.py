"""Payments v2 (authorizations, captures, refunds) against the in-process sandbox."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events, ledger
from tests.conftest import Api, approve, issues

FULL = {"Prefer": "return=representation"}


def usd(value: str) -> dict[str, str]:
    return {"currency_code": "USD", "value": value}


def paid_order(api: Api, value: str, intent: str) -> dict[str, Any]:
    body = {"intent": intent, "purchase_units": [{"amount": usd(value)}]}
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    action = "capture" if intent == "CAPTURE" else "authorize"
    response = api.post(f"/v2/checkout/orders/{order['id']}/{action}")
    assert response.status_code == 201
    payments: dict[str, Any] = response.json()["purchase_units"][0]["payments"]
    return {"order_id": order["id"], **payments}


def capture_of(api: Api, value: str = "100.00") -> str:
    return str(paid_order(api, value, "CAPTURE")["captures"][0]["id"])


def authorization_of(api: Api, value: str = "100.00") -> tuple[str, str]:
    paid = paid_order(api, value, "AUTHORIZE")
    return paid["order_id"], paid["authorizations"][0]["id"]


def refund(
    api: Api,
    capture_id: str,
    value: str | None = None,
    *,
    headers: dict[str, str] | None = None,
    **fields: Any,
) -> httpx.Response:
    body = ({"amount": usd(value)} if value else {}) | fields
    url = f"/v2/payments/captures/{capture_id}/refund"
    return api.post(url, body or None, headers=FULL | (headers or {}))


def capture_auth(api: Api, auth_id: str, body: Any = None, **headers: str) -> httpx.Response:
    return api.post(f"/v2/payments/authorizations/{auth_id}/capture", body, headers=FULL | headers)


def ledger_rows(sandbox: Sandbox, transaction_id: str) -> list[Any]:
    with sandbox.store.engine.connect() as conn:
        query = sa.select(ledger).where(ledger.c.transaction_id == transaction_id)
        return list(conn.execute(query))


def event_types(sandbox: Sandbox, resource_id: str) -> list[str]:
    with sandbox.store.engine.connect() as conn:
        query = sa.select(events.c.event_type).where(events.c.resource_id == resource_id)
        return list(conn.scalars(query))


# captures ------------------------------------------------------------------------------------
def test_show_capture_returns_the_captured_payment_and_its_payee(api: Api) -> None:
    capture_id = capture_of(api, "30.00")
    capture = api.get(f"/v2/payments/captures/{capture_id}").json()
    assert capture["status"] == "COMPLETED"
    assert capture["amount"] == usd("30.00")
    assert capture["seller_receivable_breakdown"]["net_amount"] == usd("28.46")
    assert capture["payee"]["email_address"]
    assert "purchase_unit_reference" not in capture
    assert api.get("/v2/payments/captures/NOSUCHCAPTURE0000").status_code == 404


# refunds -------------------------------------------------------------------------------------
def test_partial_then_full_refund_add_up_and_one_more_cent_fails(api: Api) -> None:
    capture_id = capture_of(api, "100.00")  # fee 3.49 + 0.49 = 3.98
    first = refund(api, capture_id, "30.00")
    assert first.status_code == 201
    part = first.json()
    assert part["status"] == "COMPLETED"
    assert part["seller_payable_breakdown"] == {
        "gross_amount": usd("30.00"),
        "paypal_fee": usd("1.19"),  # 3.98 * 30 / 100 = 1.194
        "net_amount": usd("28.81"),
        "total_refunded_amount": usd("30.00"),
    }
    shown = api.get(f"/v2/payments/captures/{capture_id}").json()
    assert shown["status"] == "PARTIALLY_REFUNDED"
    rest = refund(api, capture_id, "70.00").json()
    assert rest["seller_payable_breakdown"]["paypal_fee"] == usd("2.79")  # 3.98 - 1.19
    assert rest["seller_payable_breakdown"]["total_refunded_amount"] == usd("100.00")
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "REFUNDED"
    again = refund(api, capture_id, "0.01")
    assert again.status_code == 422
    assert issues(again) == ["CAPTURE_FULLY_REFUNDED"]


def test_refund_without_an_amount_refunds_what_is_left(api: Api) -> None:
    capture_id = capture_of(api, "50.00")  # fee 1.745 + 0.49 → 2.24
    refund(api, capture_id, "20.00")
    response = api.post(f"/v2/payments/captures/{capture_id}/refund", headers=FULL)
    assert response.status_code == 201
    rest = response.json()
    assert rest["amount"] == usd("30.00")
    assert rest["seller_payable_breakdown"]["paypal_fee"] == usd("1.34")  # 2.24 - 0.90
    assert rest["seller_payable_breakdown"]["net_amount"] == usd("28.66")
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "REFUNDED"


def test_refunded_fees_add_up_to_the_capture_fee_despite_rounding(api: Api) -> None:
    capture_id = capture_of(api, "100.00")  # fee 3.98
    fees = [
        refund(api, capture_id, value).json()["seller_payable_breakdown"]["paypal_fee"]["value"]
        for value in ("33.33", "33.33", "33.34")
    ]
    # 3.98 * 33.33 / 100 = 1.3265 → 1.33 twice; the last refund gets the 1.32 that is left.
    assert fees == ["1.33", "1.33", "1.32"]


def test_refunding_more_than_is_left_is_refused_and_writes_nothing(
    api: Api, sandbox: Sandbox
) -> None:
    capture_id = capture_of(api, "100.00")
    too_much = refund(api, capture_id, "100.01")
    assert too_much.status_code == 422
    assert issues(too_much) == ["REFUND_AMOUNT_EXCEEDED"]
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "COMPLETED"
    assert event_types(sandbox, capture_id) == ["PAYMENT.CAPTURE.COMPLETED"]
    refund(api, capture_id, "30.00")
    over = refund(api, capture_id, "70.01")
    assert issues(over) == ["REFUND_AMOUNT_EXCEEDED"]
    shown = api.get(f"/v2/payments/captures/{capture_id}").json()
    assert shown["status"] == "PARTIALLY_REFUNDED"


def test_refund_amounts_must_be_positive_in_the_capture_currency(api: Api) -> None:
    capture_id = capture_of(api, "10.00")
    cases = [
        (
            {"amount": {"currency_code": "EUR", "value": "1.00"}},
            422,
            "REFUND_CAPTURE_CURRENCY_MISMATCH",
        ),
        ({"amount": {"currency_code": "XXX", "value": "1.00"}}, 422, "INVALID_CURRENCY_CODE"),
        ({"amount": usd("0.00")}, 422, "CANNOT_BE_ZERO_OR_NEGATIVE"),
        ({"amount": usd("-1.00")}, 422, "CANNOT_BE_ZERO_OR_NEGATIVE"),
        ({"amount": usd("1.001")}, 422, "DECIMAL_PRECISION"),
        ({"amount": {"currency_code": "USD", "value": 1}}, 400, "INVALID_PARAMETER_SYNTAX"),
        ({"amount": {"currency_code": "USD"}}, 400, "MISSING_REQUIRED_PARAMETER"),
        ({"custom_id": "not allowed!"}, 400, "INVALID_PARAMETER_SYNTAX"),
    ]
    for body, status, issue in cases:
        response = api.post(f"/v2/payments/captures/{capture_id}/refund", body)
        assert (response.status_code, issues(response)) == (status, [issue]), body
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "COMPLETED"


def test_replayed_refund_returns_the_same_refund_for_45_days(api: Api, sandbox: Sandbox) -> None:
    capture_id = capture_of(api, "100.00")
    key = {"PayPal-Request-Id": "refund-key-1"}
    first = refund(api, capture_id, "10.00", headers=key)
    second = refund(api, capture_id, "10.00", headers=key)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    sandbox.clock.advance(timedelta(days=44))
    assert refund(api, capture_id, "10.00", headers=key).json()["id"] == first.json()["id"]
    shown = api.get(f"/v2/payments/refunds/{first.json()['id']}").json()
    assert shown["seller_payable_breakdown"]["total_refunded_amount"] == usd("10.00")
    sandbox.clock.advance(timedelta(days=2))
    later = refund(api, capture_id, "10.00", headers=key).json()
    assert later["id"] != first.json()["id"]
    assert later["seller_payable_breakdown"]["total_refunded_amount"] == usd("20.00")


def test_refund_is_recorded_in_the_ledger_and_as_an_event(api: Api, sandbox: Sandbox) -> None:
    capture_id = capture_of(api, "100.00")
    refund_id = refund(api, capture_id, "30.00", invoice_id="INV-R-1").json()["id"]
    (row,) = ledger_rows(sandbox, refund_id)
    assert (row.event_code, row.status, row.currency) == ("T1107", "S", "USD")
    assert (str(row.amount), str(row.fee)) == ("-30.00", "1.19")
    assert event_types(sandbox, refund_id) == ["PAYMENT.CAPTURE.REFUNDED"]


def test_show_refund_links_up_to_its_capture(api: Api) -> None:
    capture_id = capture_of(api, "20.00")
    minimal = api.post(
        f"/v2/payments/captures/{capture_id}/refund",
        {"amount": usd("5.00"), "note_to_payer": "Damaged mug", "invoice_id": "INV-9"},
    )
    assert minimal.status_code == 201
    assert set(minimal.json()) == {"id", "status", "links"}
    refund_id = minimal.json()["id"]
    shown = api.get(f"/v2/payments/refunds/{refund_id}").json()
    assert shown["status"] == "COMPLETED"
    assert shown["amount"] == usd("5.00")
    assert (shown["note_to_payer"], shown["invoice_id"]) == ("Damaged mug", "INV-9")
    assert shown["payer"]["email_address"]
    rels = {link["rel"]: link["href"] for link in shown["links"]}
    assert rels["self"].endswith(f"/v2/payments/refunds/{refund_id}")
    assert rels["up"].endswith(f"/v2/payments/captures/{capture_id}")
    assert api.get("/v2/payments/refunds/NOSUCHREFUND00000").status_code == 404


def test_an_invoice_id_refunds_only_once(api: Api) -> None:
    capture_id = capture_of(api, "20.00")
    assert refund(api, capture_id, "5.00", invoice_id="INV-ONCE").status_code == 201
    again = refund(api, capture_id, "5.00", invoice_id="INV-ONCE")
    assert issues(again) == ["DUPLICATE_INVOICE_ID"]


def test_refunds_close_180_days_after_the_capture(api: Api, sandbox: Sandbox) -> None:
    capture_id = capture_of(api, "20.00")
    sandbox.clock.advance(timedelta(days=181))
    late = refund(api, capture_id, "5.00")
    assert late.status_code == 422
    assert issues(late) == ["REFUND_TIME_LIMIT_EXCEEDED"]


def test_order_shows_its_refunds(api: Api) -> None:
    paid = paid_order(api, "40.00", "CAPTURE")
    refund_id = refund(api, paid["captures"][0]["id"], "15.00").json()["id"]
    order = api.get(f"/v2/checkout/orders/{paid['order_id']}").json()
    payments = order["purchase_units"][0]["payments"]
    assert [r["id"] for r in payments["refunds"]] == [refund_id]
    assert payments["captures"][0]["status"] == "PARTIALLY_REFUNDED"


# authorizations ------------------------------------------------------------------------------
def test_show_authorization_hides_sandbox_bookkeeping(api: Api) -> None:
    order_id, auth_id = authorization_of(api, "50.00")
    auth = api.get(f"/v2/payments/authorizations/{auth_id}").json()
    assert auth["status"] == "CREATED"
    assert auth["amount"] == usd("50.00")
    assert auth["expiration_time"] == "2026-12-20T12:00:00Z"
    assert auth["supplementary_data"]["related_ids"]["order_id"] == order_id
    assert "purchase_unit_reference" not in auth
    assert api.get("/v2/payments/authorizations/NOSUCHAUTH0000000").status_code == 404


def test_partial_captures_move_the_authorization_to_captured(api: Api, sandbox: Sandbox) -> None:
    order_id, auth_id = authorization_of(api, "100.00")
    first = capture_auth(api, auth_id, {"amount": usd("40.00"), "final_capture": False})
    assert first.status_code == 201
    capture = first.json()
    assert capture["status"] == "COMPLETED"
    assert capture["amount"] == usd("40.00")
    assert capture["final_capture"] is False
    assert capture["supplementary_data"]["related_ids"] == {
        "order_id": order_id,
        "authorization_id": auth_id,
    }
    rels = {link["rel"]: link["href"] for link in capture["links"]}
    assert rels["up"].endswith(f"/v2/payments/authorizations/{auth_id}")
    auth = api.get(f"/v2/payments/authorizations/{auth_id}").json()
    assert auth["status"] == "PARTIALLY_CAPTURED"
    over = capture_auth(api, auth_id, {"amount": usd("60.01")})
    assert issues(over) == ["MAX_CAPTURE_AMOUNT_EXCEEDED"]
    rest = capture_auth(api, auth_id, {"amount": usd("60.00")}).json()
    assert rest["final_capture"] is True
    assert api.get(f"/v2/payments/authorizations/{auth_id}").json()["status"] == "CAPTURED"
    again = capture_auth(api, auth_id, {"amount": usd("1.00")})
    assert issues(again) == ["AUTHORIZATION_ALREADY_CAPTURED"]
    assert ledger_rows(sandbox, rest["id"])[0].event_code == "T0006"
    order = api.get(f"/v2/checkout/orders/{order_id}").json()
    captures = order["purchase_units"][0]["payments"]["captures"]
    assert sorted(c["amount"]["value"] for c in captures) == ["40.00", "60.00"]


def test_capture_without_an_amount_takes_what_is_left(api: Api) -> None:
    _, auth_id = authorization_of(api, "80.00")
    capture_auth(api, auth_id, {"amount": usd("30.00")})
    rest = api.post(f"/v2/payments/authorizations/{auth_id}/capture", headers=FULL)
    assert rest.status_code == 201
    assert rest.json()["amount"] == usd("50.00")
    assert api.get(f"/v2/payments/authorizations/{auth_id}").json()["status"] == "CAPTURED"


def test_final_capture_releases_the_rest_of_the_authorization(api: Api) -> None:
    _, auth_id = authorization_of(api, "100.00")
    minimal = api.post(
        f"/v2/payments/authorizations/{auth_id}/capture",
        {"amount": usd("25.00"), "final_capture": True, "invoice_id": "INV-A-1"},
    )
    assert minimal.status_code == 201
    assert set(minimal.json()) == {"id", "status", "links"}
    assert api.get(f"/v2/payments/authorizations/{auth_id}").json()["status"] == "CAPTURED"
    capture = api.get(f"/v2/payments/captures/{minimal.json()['id']}").json()
    assert capture["invoice_id"] == "INV-A-1"
    assert issues(capture_auth(api, auth_id, {"amount": usd("1.00")})) == [
        "AUTHORIZATION_ALREADY_CAPTURED"
    ]


def test_bad_capture_amounts_are_refused_and_write_nothing(api: Api) -> None:
    _, auth_id = authorization_of(api, "100.00")
    cases = [
        ({"amount": usd("100.01")}, "MAX_CAPTURE_AMOUNT_EXCEEDED"),
        ({"amount": {"currency_code": "EUR", "value": "1.00"}}, "AUTH_CAPTURE_CURRENCY_MISMATCH"),
        ({"amount": usd("0")}, "CANNOT_BE_ZERO_OR_NEGATIVE"),
        ({"final_capture": "yes"}, "INVALID_PARAMETER_SYNTAX"),
    ]
    for body, issue in cases:
        assert issues(capture_auth(api, auth_id, body)) == [issue], body
    auth = api.get(f"/v2/payments/authorizations/{auth_id}").json()
    assert auth["status"] == "CREATED"


def test_an_invoice_id_is_captured_only_once(api: Api) -> None:
    _, auth_id = authorization_of(api, "100.00")
    capture_auth(api, auth_id, {"amount": usd("10.00"), "invoice_id": "INV-C-1"})
    again = capture_auth(api, auth_id, {"amount": usd("10.00"), "invoice_id": "INV-C-1"})
    assert issues(again) == ["DUPLICATE_INVOICE_ID"]


def test_replayed_authorization_capture_answers_200_with_the_same_capture(api: Api) -> None:
    _, auth_id = authorization_of(api, "100.00")
    key = {"PayPal-Request-Id": "auth-capture-1"}
    first = capture_auth(api, auth_id, {"amount": usd("10.00")}, **key)
    second = capture_auth(api, auth_id, {"amount": usd("10.00")}, **key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    auth = api.get(f"/v2/payments/authorizations/{auth_id}").json()
    assert auth["status"] == "PARTIALLY_CAPTURED"
    assert capture_auth(api, auth_id, {"amount": usd("90.00")}).status_code == 201


def test_a_capture_of_an_authorization_can_be_refunded(api: Api) -> None:
    _, auth_id = authorization_of(api, "60.00")
    capture_id = capture_auth(api, auth_id).json()["id"]
    refunded = refund(api, capture_id)
    assert refunded.status_code == 201
    assert refunded.json()["amount"] == usd("60.00")
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "REFUNDED"


def test_expired_authorizations_cannot_be_captured(api: Api, sandbox: Sandbox) -> None:
    _, auth_id = authorization_of(api, "10.00")
    sandbox.clock.advance(timedelta(days=29))
    assert issues(capture_auth(api, auth_id)) == ["AUTHORIZATION_EXPIRED"]


def test_void_voids_the_authorization_and_its_order(api: Api, sandbox: Sandbox) -> None:
    order_id, auth_id = authorization_of(api, "10.00")
    response = api.post(f"/v2/payments/authorizations/{auth_id}/void")
    assert response.status_code == 204
    assert api.get(f"/v2/payments/authorizations/{auth_id}").json()["status"] == "VOIDED"
    assert api.get(f"/v2/checkout/orders/{order_id}").json()["status"] == "VOIDED"
    assert "PAYMENT.AUTHORIZATION.VOIDED" in event_types(sandbox, auth_id)
    assert "CHECKOUT.ORDER.VOIDED" in event_types(sandbox, order_id)
    assert issues(capture_auth(api, auth_id)) == ["AUTHORIZATION_VOIDED"]
    again = api.post(f"/v2/payments/authorizations/{auth_id}/void")
    assert again.status_code == 422
    assert issues(again) == ["PREVIOUSLY_VOIDED"]


def test_void_after_a_partial_capture_releases_the_rest(api: Api) -> None:
    order_id, auth_id = authorization_of(api, "100.00")
    capture_auth(api, auth_id, {"amount": usd("30.00")})
    response = api.post(f"/v2/payments/authorizations/{auth_id}/void", headers=FULL)
    assert response.status_code == 200
    assert response.json()["status"] == "VOIDED"
    assert issues(capture_auth(api, auth_id, {"amount": usd("1.00")})) == ["AUTHORIZATION_VOIDED"]
    # Money was taken, so the order stays COMPLETED.
    assert api.get(f"/v2/checkout/orders/{order_id}").json()["status"] == "COMPLETED"


def test_a_fully_captured_authorization_cannot_be_voided(api: Api) -> None:
    order_id, auth_id = authorization_of(api, "10.00")
    capture_auth(api, auth_id)
    response = api.post(f"/v2/payments/authorizations/{auth_id}/void")
    assert response.status_code == 422
    assert issues(response) == ["PREVIOUSLY_CAPTURED"]
    assert api.get(f"/v2/checkout/orders/{order_id}").json()["status"] == "COMPLETED"


def test_reauthorize_waits_for_the_honor_period_and_happens_once(
    api: Api, sandbox: Sandbox
) -> None:
    _, auth_id = authorization_of(api, "100.00")
    early = api.post(f"/v2/payments/authorizations/{auth_id}/reauthorize")
    assert early.status_code == 422
    assert issues(early) == ["REAUTHORIZATION_TOO_SOON"]
    sandbox.clock.advance(timedelta(days=4))
    response = api.post(
        f"/v2/payments/authorizations/{auth_id}/reauthorize",
        {"amount": usd("110.00")},
        headers=FULL,
    )
    assert response.status_code == 201
    renewed = response.json()
    assert renewed["id"] != auth_id
    assert (renewed["status"], renewed["amount"]) == ("CREATED", usd("110.00"))
    assert renewed["expiration_time"] == "2026-12-20T12:00:00Z"  # the original's 29 days
    twice = api.post(f"/v2/payments/authorizations/{auth_id}/reauthorize")
    assert issues(twice) == ["REAUTHORIZATION_NOT_SUPPORTED"]
    chained = api.post(f"/v2/payments/authorizations/{renewed['id']}/reauthorize")
    assert issues(chained) == ["REAUTHORIZATION_NOT_SUPPORTED"]
    assert issues(capture_auth(api, auth_id)) == ["TRANSACTION_REFUSED"]
    assert capture_auth(api, renewed["id"]).json()["amount"] == usd("110.00")


def test_reauthorize_limits_the_amount_and_currency(api: Api, sandbox: Sandbox) -> None:
    _, auth_id = authorization_of(api, "100.00")
    sandbox.clock.advance(timedelta(days=4))
    url = f"/v2/payments/authorizations/{auth_id}/reauthorize"
    assert issues(api.post(url, {"amount": usd("115.01")})) == ["TRANSACTION_REFUSED"]
    eur = {"amount": {"currency_code": "EUR", "value": "100.00"}}
    assert issues(api.post(url, eur)) == ["AUTH_CURRENCY_MISMATCH"]
    assert api.post(url, {"amount": usd("115.00")}).status_code == 201


def test_voiding_the_original_voids_its_reauthorization(api: Api, sandbox: Sandbox) -> None:
    order_id, auth_id = authorization_of(api, "100.00")
    sandbox.clock.advance(timedelta(days=4))
    renewed_id = api.post(f"/v2/payments/authorizations/{auth_id}/reauthorize").json()["id"]
    refused = api.post(f"/v2/payments/authorizations/{renewed_id}/void")
    assert issues(refused) == ["CANNOT_BE_VOIDED"]
    assert api.post(f"/v2/payments/authorizations/{auth_id}/void").status_code == 204
    renewed = api.get(f"/v2/payments/authorizations/{renewed_id}").json()
    assert renewed["status"] == "VOIDED"
    assert api.get(f"/v2/checkout/orders/{order_id}").json()["status"] == "VOIDED"


def test_merchants_cannot_touch_each_others_payments(api: Api, other_api: Api) -> None:
    capture_id = capture_of(api, "10.00")
    refund_id = refund(api, capture_id, "1.00").json()["id"]
    _, auth_id = authorization_of(api, "10.00")
    for path, method in [
        (f"/v2/payments/captures/{capture_id}", "GET"),
        (f"/v2/payments/captures/{capture_id}/refund", "POST"),
        (f"/v2/payments/refunds/{refund_id}", "GET"),
        (f"/v2/payments/authorizations/{auth_id}", "GET"),
        (f"/v2/payments/authorizations/{auth_id}/capture", "POST"),
        (f"/v2/payments/authorizations/{auth_id}/void", "POST"),
        (f"/v2/payments/authorizations/{auth_id}/reauthorize", "POST"),
    ]:
        response = other_api.request(method, path)
        assert response.status_code == 404, path
        assert issues(response) == ["INVALID_RESOURCE_ID"]
    assert api.get(f"/v2/payments/authorizations/{auth_id}").json()["status"] == "CREATED"
    assert api.get(f"/v2/payments/captures/{capture_id}").json()["status"] == "PARTIALLY_REFUNDED"
