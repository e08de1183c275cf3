"""ACP's delegated payments against the in-process sandbox, on SQLite and PostgreSQL: a platform
vaults a card with an allowance, and a merchant's Orders v2 order pays with the ``vt_`` token."""

from __future__ import annotations

import copy
import hashlib
import importlib.resources as package_files
import json
import logging
from typing import Any

import httpx
import orjson
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from cartagent.sandbox import Sandbox, ensure_merchant
from cartagent.sandbox.agentic import delegate_payment
from cartagent.sandbox.agentic.delegate_payment import KIND, PATH, SCHEMA_FILE, schema_bundle
from cartagent.sandbox.store import idempotency, resources
from tests.conftest import Api, issues

NUMBER = "4242424242424242"
CVC = "9731"
SESSION = "csn_01HV3P3"  # the allowance's checkout session


@pytest.fixture
def platform(sandbox: Sandbox, http: TestClient, request: pytest.FixtureRequest) -> Api:
    """The agent platform: a sandbox merchant of this test's own, calling the vault."""
    client_id = "platform-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    ensure_merchant(sandbox, client_id, "secret")
    return Api(http, client_id, "secret")


def vault_body(merchant: str = "acme", **allowance: Any) -> dict[str, Any]:
    return {
        "payment_method": {
            "type": "card",
            "card_number_type": "fpan",
            "number": NUMBER,
            "exp_month": "11",
            "exp_year": "2027",
            "name": "Jane Doe",
            "cvc": CVC,
            "checks_performed": ["avs", "cvv"],
            "iin": "424242",
            "display_card_funding_type": "credit",
            "display_brand": "visa",
            "display_last4": "4242",
            "metadata": {"issuing_bank": "temp"},
        },
        "allowance": {
            "reason": "one_time",
            "max_amount": 2000,
            "currency": "usd",
            "checkout_session_id": SESSION,
            "merchant_id": merchant,
            "expires_at": "2026-11-21T13:00:00Z",  # an hour after the sandbox's START
            **allowance,
        },
        "billing_address": {
            "name": "Jane Doe",
            "line_one": "185 Berry Street",
            "city": "San Francisco",
            "state": "CA",
            "country": "US",
            "postal_code": "94107",
        },
        "risk_signals": [{"type": "card_testing", "score": 10, "action": "manual_review"}],
        "metadata": {"campaign": "q4"},
    }


def delegate(
    platform: Api,
    body: Any,
    *,
    key: str | None = "key-1",
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> httpx.Response:
    sent = {"API-Version": "2026-04-17", "Content-Type": "application/json"}
    if key is not None:
        sent["Idempotency-Key"] = key
    sent.update(headers or {})
    content = raw if raw is not None else orjson.dumps(body)
    return platform.request("POST", PATH, content=content, headers=sent)


def vault(platform: Api, merchant: str, **allowance: Any) -> str:
    response = delegate(platform, vault_body(merchant, **allowance))
    assert response.status_code == 201, response.text
    token: str = response.json()["id"]
    return token


def token_order(
    token: str, value: str = "20.00", currency: str = "USD", session: str = SESSION
) -> dict[str, Any]:
    """An order body as the merchant's ``commerce.payment.paypal_order`` sends it: for
    checkout ``session``."""
    unit = {
        "reference_id": session,
        "custom_id": session,
        "amount": {"currency_code": currency, "value": value},
    }
    return {
        "intent": "CAPTURE",
        "purchase_units": [unit],
        "payment_source": {"token": {"id": token, "type": "BILLING_AGREEMENT"}},
    }


def valid(definition: str, body: Any) -> bool:
    schema = {**schema_bundle(), "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema).is_valid(body)


def advance(api: Api, **delta: int) -> None:
    assert api.post("/v1/sandbox/clock/advance", delta).status_code == 200


def merchant_account(sandbox: Sandbox, api: Api) -> str:
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    return merchant.id


# vaulting -----------------------------------------------------------------------------------
def test_vaulting_a_card_answers_a_delegated_token(platform: Api) -> None:
    response = delegate(platform, vault_body("acme"), headers={"Request-Id": "req_42"})
    assert response.status_code == 201
    token = response.json()
    assert valid("DelegatePaymentResponse", token)
    assert token["id"].startswith("vt_") and len(token["id"]) == 20
    assert token["created"] == "2026-11-21T12:00:00Z"
    assert token["metadata"] == {
        "campaign": "q4",
        "merchant_id": "acme",
        "checkout_session_id": "csn_01HV3P3",
        "idempotency_key": "key-1",
    }
    assert response.headers["Request-Id"] == "req_42"
    assert "Idempotent-Replayed" not in response.headers
    assert delegate(platform, vault_body(), key="key-2").headers["Request-Id"].startswith("req_")


def test_the_vault_keeps_no_card_number_or_security_code(
    platform: Api, sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = vault(platform, "acme")
    bad = vault_body()
    bad["payment_method"]["cvc"] = "12345"
    refused = delegate(platform, bad, key="key-2")
    assert refused.status_code == 400 and "12345" not in refused.text
    with sandbox.store.engine.connect() as conn:
        stored = conn.execute(
            sa.select(resources.c.data).where(resources.c.kind == KIND, resources.c.id == token)
        ).scalar_one()
        keys = conn.execute(
            sa.select(idempotency.c.request_id, idempotency.c.body).where(
                idempotency.c.merchant_id == merchant_account(sandbox, platform)
            )
        ).all()
    record = json.loads(stored)
    assert record["card"] == {
        "brand": "visa",
        "last4": "4242",
        "exp_month": "11",
        "exp_year": "2027",
    }
    for secret in (NUMBER, CVC, "Jane Doe", "Berry Street", "issuing_bank"):
        assert secret not in stored
        assert all(secret not in row.body for row in keys)
        assert secret not in caplog.text
    assert len(keys) == 1 and "key-1" not in keys[0].request_id  # stored as a digest


# charging -----------------------------------------------------------------------------------
def test_a_token_pays_an_order_within_the_allowance_and_captures(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    created = api.post("/v2/checkout/orders", token_order(token, "20.00"))  # exactly max_amount
    assert created.status_code == 201, created.text
    assert created.json()["status"] == "APPROVED"
    captured = api.post(f"/v2/checkout/orders/{created.json()['id']}/capture")
    assert captured.status_code == 201
    assert captured.json()["status"] == "COMPLETED"
    capture = captured.json()["purchase_units"][0]["payments"]["captures"][0]
    assert capture["status"] == "COMPLETED"
    assert capture["amount"] == {"currency_code": "USD", "value": "20.00"}


def test_the_merchant_may_be_named_by_its_sandbox_account_id(
    api: Api, platform: Api, sandbox: Sandbox
) -> None:
    account = merchant_account(sandbox, api)
    token = vault(platform, account)
    created = api.post(
        "/v2/checkout/orders",
        token_order(token, "5.00"),
        headers={"Prefer": "return=representation"},
    )
    assert created.status_code == 201
    assert created.json()["purchase_units"][0]["payee"]["merchant_id"] == account


def test_an_order_over_max_amount_is_refused_and_leaves_the_token_usable(
    api: Api, platform: Api
) -> None:
    token = vault(platform, api.client_id)
    over = api.post("/v2/checkout/orders", token_order(token, "20.01"))
    assert over.status_code == 422
    assert issues(over) == ["TRANSACTION_REFUSED"]
    assert over.json()["details"][0]["field"] == "/payment_source/token/id"
    two_units = token_order(token)
    two_units["purchase_units"] = [
        {
            "reference_id": ref,
            "custom_id": SESSION,
            "amount": {"currency_code": "USD", "value": "10.01"},
        }
        for ref in ("a", "b")
    ]
    assert issues(api.post("/v2/checkout/orders", two_units)) == ["TRANSACTION_REFUSED"]
    assert api.post("/v2/checkout/orders", token_order(token, "19.99")).status_code == 201


def test_an_order_in_another_currency_is_refused(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    response = api.post("/v2/checkout/orders", token_order(token, "10.00", "EUR"))
    assert response.status_code == 422
    assert issues(response) == ["TRANSACTION_REFUSED"]


def test_minor_units_follow_iso_4217(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id, currency="jpy", max_amount=1500)
    assert issues(api.post("/v2/checkout/orders", token_order(token, "1501", "JPY"))) == [
        "TRANSACTION_REFUSED"
    ]
    assert api.post("/v2/checkout/orders", token_order(token, "1500", "JPY")).status_code == 201


def test_a_token_is_refused_at_and_after_its_expiry(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)  # expires 13:00, the clock says 12:00
    advance(api, seconds=3600)
    response = api.post("/v2/checkout/orders", token_order(token))
    assert response.status_code == 422
    assert issues(response) == ["INSTRUMENT_DECLINED"]


def test_a_card_past_its_expiry_month_is_refused(api: Api, platform: Api) -> None:
    body = vault_body(api.client_id, expires_at="2027-01-31T00:00:00Z")
    body["payment_method"].update(exp_month="11", exp_year="2026")
    token = delegate(platform, body).json()["id"]
    advance(api, days=10)  # 1 December 2026
    assert issues(api.post("/v2/checkout/orders", token_order(token))) == ["CARD_EXPIRED"]


def test_another_merchant_cannot_charge_the_token(api: Api, other_api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    stolen = other_api.post("/v2/checkout/orders", token_order(token))
    assert stolen.status_code == 422
    assert issues(stolen) == ["PAYER_CANNOT_PAY"]
    assert api.post("/v2/checkout/orders", token_order(token)).status_code == 201


def test_a_token_pays_one_order_only(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    key = {"PayPal-Request-Id": "order-1"}
    first = api.post("/v2/checkout/orders", token_order(token), headers=key)
    replayed = api.post("/v2/checkout/orders", token_order(token), headers=key)
    assert (first.status_code, replayed.status_code) == (201, 200)
    assert first.json()["id"] == replayed.json()["id"]
    for headers in ({}, {"PayPal-Request-Id": "order-2"}):
        again = api.post("/v2/checkout/orders", token_order(token, "1.00"), headers=headers)
        assert again.status_code == 422
        assert issues(again) == ["MAX_NUMBER_OF_PAYMENT_ATTEMPTS_EXCEEDED"]


def test_an_order_for_another_checkout_session_is_refused(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)  # for SESSION
    other = api.post("/v2/checkout/orders", token_order(token, session="csn_OTHER"))
    assert other.status_code == 422
    assert issues(other) == ["PAYMENT_SOURCE_CANNOT_BE_USED"]
    unnamed = token_order(token)
    del unnamed["purchase_units"][0]["reference_id"], unnamed["purchase_units"][0]["custom_id"]
    assert issues(api.post("/v2/checkout/orders", unnamed)) == ["PAYMENT_SOURCE_CANNOT_BE_USED"]
    # Refusals do not use the token up; relabelling the order after creating it is caught at
    # capture, and the order as created still captures.
    body = token_order(token)
    body["purchase_units"][0]["reference_id"] = "unit-1"  # the session named by custom_id only
    order = api.post("/v2/checkout/orders", body).json()
    path = f"/v2/checkout/orders/{order['id']}"
    relabel = [{"op": "replace", "path": "/purchase_units/@reference_id=='unit-1'/custom_id",
                "value": "csn_OTHER"}]  # fmt: skip
    assert api.patch(path, relabel).status_code == 204
    refused = api.post(f"{path}/capture")
    assert (refused.status_code, issues(refused)) == (422, ["TRANSACTION_REFUSED"])
    relabel[0]["value"] = SESSION
    assert api.patch(path, relabel).status_code == 204
    assert api.post(f"{path}/capture").status_code == 201


def test_a_mock_response_header_makes_every_charge_of_the_token_fail(
    api: Api, platform: Api
) -> None:
    mock = {"PayPal-Mock-Response": '{"mock_application_codes": "INSTRUMENT_DECLINED"}'}
    response = delegate(platform, vault_body(api.client_id), headers=mock)
    assert response.status_code == 201
    token = response.json()["id"]
    for _ in range(2):
        refused = api.post("/v2/checkout/orders", token_order(token))
        assert (refused.status_code, issues(refused)) == (422, ["INSTRUMENT_DECLINED"])
    outage = {"PayPal-Mock-Response": '{"mock_application_codes": "INTERNAL_SERVER_ERROR"}'}
    failing = delegate(platform, vault_body(api.client_id), key="key-2", headers=outage)
    down = api.post("/v2/checkout/orders", token_order(failing.json()["id"]))
    assert down.status_code == 500


@pytest.mark.parametrize("header", ["nope", '{"mock_application_codes": "NO_SUCH_ISSUE"}'])
def test_a_mock_response_header_must_name_an_issue_of_the_charge(
    platform: Api, header: str
) -> None:
    response = delegate(platform, vault_body(), headers={"PayPal-Mock-Response": header})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_card")
    assert "PayPal-Mock-Response" in response.json()["message"]


def test_unknown_delegated_tokens_decline_and_other_tokens_are_unchanged(api: Api) -> None:
    unknown = api.post("/v2/checkout/orders", token_order("vt_NOSUCHTOKEN0000"))
    assert unknown.status_code == 422
    assert issues(unknown) == ["INSTRUMENT_DECLINED"]
    plain = api.post("/v2/checkout/orders", token_order("BA-8A802366G0648845Y", "999.00"))
    assert plain.status_code == 201
    assert plain.json()["status"] == "APPROVED"


def test_the_declining_test_card_vaults_and_declines_charges(api: Api, platform: Api) -> None:
    body = vault_body(api.client_id)
    body["payment_method"].update(number="4000000000000002", iin="400000", display_last4="0002")
    token = delegate(platform, body).json()["id"]
    assert issues(api.post("/v2/checkout/orders", token_order(token))) == ["INSTRUMENT_DECLINED"]


def test_capture_checks_the_allowance_again_after_a_patch(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    order = api.post("/v2/checkout/orders", token_order(token, "10.00")).json()
    path = f"/purchase_units/@reference_id=='{SESSION}'/amount"
    raised = {"currency_code": "USD", "value": "25.00"}
    patch = [{"op": "replace", "path": path, "value": raised}]
    assert api.patch(f"/v2/checkout/orders/{order['id']}", patch).status_code == 204
    refused = api.post(f"/v2/checkout/orders/{order['id']}/capture")
    assert refused.status_code == 422
    assert issues(refused) == ["TRANSACTION_REFUSED"]
    assert api.get(f"/v2/checkout/orders/{order['id']}").json()["status"] == "APPROVED"


def test_authorize_after_expiry_is_refused_with_a_documented_issue(api: Api, platform: Api) -> None:
    token = vault(platform, api.client_id)
    body = token_order(token) | {"intent": "AUTHORIZE"}
    order = api.post("/v2/checkout/orders", body).json()
    advance(api, seconds=3600)
    refused = api.post(f"/v2/checkout/orders/{order['id']}/authorize")
    assert refused.status_code == 422
    # orders.authorize documents no INSTRUMENT_DECLINED: the fallback is TRANSACTION_REFUSED
    assert issues(refused) == ["TRANSACTION_REFUSED"]


def test_every_refusal_is_a_decline_for_the_merchant() -> None:
    from cartagent.commerce.payment import DECLINES

    refusals = set(delegate_payment._ISSUES.values()) | {delegate_payment._FALLBACK_ISSUE}
    assert refusals <= DECLINES


# idempotency --------------------------------------------------------------------------------
def _tokens(sandbox: Sandbox, platform: Api) -> int:
    owner = sandbox.store.merchant_by_client_id(platform.client_id)
    assert owner is not None
    with sandbox.store.engine.connect() as conn:
        query = sa.select(sa.func.count()).where(
            resources.c.kind == KIND, resources.c.merchant_id == owner.id
        )
        return int(conn.execute(query).scalar_one())


def test_the_same_key_and_an_equal_body_replay_the_first_token(
    platform: Api, sandbox: Sandbox
) -> None:
    first = delegate(platform, vault_body())
    again = delegate(platform, vault_body())
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    # key order and 2000.0 for 2000 do not make another request
    body = vault_body()
    reordered = dict(reversed(list(body.items())))
    raw = orjson.dumps(reordered).replace(b'"max_amount":2000', b'"max_amount":2000.0')
    assert b"2000.0" in raw
    equal = delegate(platform, None, raw=raw)
    assert equal.status_code == 201 and equal.json() == first.json()
    assert _tokens(sandbox, platform) == 1


def test_the_same_key_with_another_body_is_a_conflict(platform: Api) -> None:
    delegate(platform, vault_body())
    changed = vault_body(max_amount=2001)
    conflict = delegate(platform, changed)
    assert conflict.status_code == 422
    assert conflict.json() == {
        "type": "invalid_request",
        "code": "idempotency_conflict",
        "message": "Idempotency-Key has already been used with a different request body",
    }
    assert valid("Error", conflict.json())
    reordered_risks = vault_body()
    reordered_risks["risk_signals"].append(
        {"type": "card_testing", "score": 1, "action": "blocked"}
    )
    assert delegate(platform, reordered_risks).json()["code"] == "idempotency_conflict"


def test_keys_are_scoped_to_the_caller(platform: Api, other_api: Api) -> None:
    first = delegate(platform, vault_body())
    other = delegate(other_api, vault_body())
    assert other.status_code == 201
    assert "Idempotent-Replayed" not in other.headers
    assert other.json()["id"] != first.json()["id"]


def test_keys_are_kept_24_hours(platform: Api) -> None:
    body = vault_body(expires_at="2026-12-31T00:00:00Z")
    first = delegate(platform, body).json()
    advance(platform, seconds=24 * 3600 - 1)
    assert delegate(platform, body).json() == first
    advance(platform, seconds=1)
    later = delegate(platform, body)
    assert later.status_code == 201 and "Idempotent-Replayed" not in later.headers
    assert later.json()["id"] != first["id"]


def test_a_refused_request_records_nothing_for_its_key(platform: Api, sandbox: Sandbox) -> None:
    bad = vault_body()
    bad["payment_method"]["number"] = "4242424242424241"
    assert delegate(platform, bad).status_code == 422
    assert delegate(platform, bad).status_code == 422  # refused again, the same way
    assert delegate(platform, vault_body()).status_code == 201
    assert _tokens(sandbox, platform) == 1


def test_the_idempotency_key_is_required_and_bounded(platform: Api) -> None:
    for key in (None, "  ", "k" * 256):
        response = delegate(platform, vault_body(), key=key)
        assert response.status_code == 400
        assert response.json()["code"] == "idempotency_key_required"
        assert valid("Error", response.json())
    assert delegate(platform, vault_body(), key="k" * 255).status_code == 201


# validation ---------------------------------------------------------------------------------
def _without(path: str) -> Any:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = body
        for part in parents:
            target = target[part]
        del target[last]

    return change


def _set(path: str, value: Any) -> Any:
    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = body
        for part in parents:
            target = target[part]
        target[last] = value

    return change


def _risk_action(body: dict[str, Any]) -> None:
    body["risk_signals"][0]["action"] = "maybe"


INVALID = [
    ("bad_luhn", _set("payment_method.number", "4242424242424241"), 422, "payment_method.number"),
    ("spaces", _set("payment_method.number", "4242 4242 4242 4242"), 422, "payment_method.number"),
    ("short", _set("payment_method.number", "42424242"), 422, "payment_method.number"),
    ("no_number", _without("payment_method.number"), 400, "payment_method.number"),
    ("no_currency", _without("allowance.currency"), 400, "allowance.currency"),
    ("no_metadata", _without("metadata"), 400, "metadata"),
    ("no_risk_signals", _without("risk_signals"), 400, "risk_signals"),
    ("unknown_field", _set("colour", "red"), 400, "colour"),
    ("unknown_card_field", _set("payment_method.pin", "1234"), 400, "payment_method.pin"),
    ("not_card", _set("payment_method.type", "bank"), 400, "payment_method.type"),
    ("amount_text", _set("allowance.max_amount", "2000"), 400, "allowance.max_amount"),
    ("upper_currency", _set("allowance.currency", "USD"), 400, "allowance.currency"),
    ("reason", _set("allowance.reason", "recurring"), 400, "allowance.reason"),
    ("expiry_text", _set("allowance.expires_at", "tomorrow"), 400, "allowance.expires_at"),
    ("risk_action", _risk_action, 400, "risk_signals[0].action"),
    ("month_13", _set("payment_method.exp_month", "13"), 422, "payment_method.exp_month"),
    ("card_expired", _set("payment_method.exp_year", "2025"), 422, "payment_method.exp_year"),
    ("half_expiry", _without("payment_method.exp_year"), 422, "payment_method.exp_year"),
    ("cvc_letters", _set("payment_method.cvc", "12a"), 422, "payment_method.cvc"),
    ("last4", _set("payment_method.display_last4", "1111"), 422, "payment_method.display_last4"),
    ("iin", _set("payment_method.iin", "555555"), 422, "payment_method.iin"),
    ("zero_amount", _set("allowance.max_amount", 0), 422, "allowance.max_amount"),
    ("currency", _set("allowance.currency", "xyz"), 422, "allowance.currency"),
    ("no_merchant", _set("allowance.merchant_id", " "), 422, "allowance.merchant_id"),
    ("past", _set("allowance.expires_at", "2026-11-21T11:59:59Z"), 422, "allowance.expires_at"),
]


@pytest.mark.parametrize(
    ("change", "status", "param"),
    [pytest.param(change, status, param, id=name) for name, change, status, param in INVALID],
)
def test_invalid_requests_name_the_field(
    platform: Api, sandbox: Sandbox, change: Any, status: int, param: str
) -> None:
    body = copy.deepcopy(vault_body())
    change(body)
    response = delegate(platform, body)
    assert response.status_code == status, response.text
    error = response.json()
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request",
        "invalid_card",
        f"$.{param}",
    )
    assert valid("Error", error)
    assert NUMBER not in response.text and CVC not in response.text
    assert _tokens(sandbox, platform) == 0


def test_api_version_is_required_and_checked(platform: Api) -> None:
    missing = delegate(platform, vault_body(), headers={"API-Version": ""})
    assert missing.status_code == 400
    assert missing.json()["code"] == "missing_api_version"
    assert missing.json()["supported_versions"] == ["2026-04-17"]
    old = delegate(platform, vault_body(), headers={"API-Version": "2025-09-29"})
    assert old.status_code == 400
    assert old.json()["type"] == "invalid_request"
    assert old.json()["code"] == "unsupported_api_version"


def test_the_caller_must_hold_a_sandbox_bearer_token(platform: Api) -> None:
    headers = {"API-Version": "2026-04-17", "Idempotency-Key": "k", "Authorization": ""}
    for authorization in ("", "Bearer A21AAforged", "Basic abc"):
        headers["Authorization"] = authorization
        response = platform.http.post(PATH, json=vault_body(), headers=headers)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_body_must_be_a_json_object(platform: Api) -> None:
    for raw, content_type in (
        (b"{not json", "application/json"),
        (b"[]", "application/json"),
        (b"", "application/json"),
        (orjson.dumps(vault_body()), "text/plain"),
    ):
        response = delegate(platform, None, raw=raw, headers={"Content-Type": content_type})
        assert response.status_code == 400, raw
        assert response.json()["code"] == "invalid_card"
        assert valid("Error", response.json())


# sha256 of spec/2026-04-17/json-schema/schema.delegate_payment.json in the ACP repository.
ACP_2026_04_17_SCHEMA = "307739ae400e7368eaa25c6024d30751348a4af8a516d071565fcd8aa328cf4d"


def test_the_shipped_schema_is_acp_2026_04_17_unchanged() -> None:
    shipped = package_files.files("cartagent.sandbox").joinpath(SCHEMA_FILE)
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == ACP_2026_04_17_SCHEMA
    assert json.loads(shipped.read_text("utf-8")) == schema_bundle()
