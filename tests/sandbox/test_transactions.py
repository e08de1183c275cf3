"""Transaction search and balances v1, read from the ledger every money movement writes."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from jsonschema import Draft4Validator

from cartagent.sandbox import Sandbox, spec
from cartagent.sandbox.clock import iso
from tests.conftest import START, Api, approve, issues

SEARCH = "/v1/reporting/transactions"
BALANCES = "/v1/reporting/balances"
DAY_BEFORE = iso(START - timedelta(days=1))
DAY_AFTER = iso(START + timedelta(days=1))


def conforms(body: Any, schema: str) -> None:
    """Check a response body against the spec's own schema."""
    ref = {"$ref": f"urn:paypal:reporting_transactions_v1#/components/schemas/{schema}"}
    errors = list(Draft4Validator(ref, registry=spec._registry()).iter_errors(body))
    assert not errors, [e.message for e in errors]


def capture(
    api: Api, value: str = "30.00", breakdown: dict[str, Any] | None = None, **unit: Any
) -> tuple[str, str]:
    """Create, approve and capture an order; return (order id, capture id)."""
    amount: dict[str, Any] = {"currency_code": "USD", "value": value}
    if breakdown:
        amount["breakdown"] = breakdown
    body = {"intent": "CAPTURE", "purchase_units": [{"amount": amount, **unit}]}
    order = api.post("/v2/checkout/orders", body).json()
    approve(api, order["id"])
    done = api.post(f"/v2/checkout/orders/{order['id']}/capture").json()
    return order["id"], done["purchase_units"][0]["payments"]["captures"][0]["id"]


def record(
    sandbox: Sandbox,
    api: Api,
    label: str,
    amount: str,
    *,
    code: str = "T0006",
    status: str = "S",
    currency: str = "USD",
    fee: str = "0.00",
    at: datetime = START,
    data: dict[str, Any] | None = None,
) -> str:
    """Write a ledger row the way other modules do, through ``Tx.record_transaction``.

    Tests share a database, so the id is ``label`` (six characters) plus the merchant's id.
    """
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None
    transaction_id = label + merchant.id
    with sandbox.store.transaction(merchant.id) as tx:
        tx.record_transaction(
            transaction_id,
            event_code=code,
            status=status,
            amount=Decimal(amount),
            currency=currency,
            fee=Decimal(fee),
            occurred_at=at,
            data=data or {},
        )
    return transaction_id


def search(api: Api, **params: Any) -> httpx.Response:
    query = {"start_date": DAY_BEFORE, "end_date": DAY_AFTER, **params}
    return api.get(SEARCH, params=query)


def infos(response: httpx.Response) -> list[dict[str, Any]]:
    return [d["transaction_info"] for d in response.json().get("transaction_details", [])]


def test_search_shows_api_captures_and_recorded_refunds(api: Api, sandbox: Sandbox) -> None:
    order_id, capture_id = capture(api, "30.00", invoice_id="INV-7", custom_id="cust 1")
    record(
        sandbox,
        api,
        "REFUND",
        "-10.00",
        code="T1107",
        at=START + timedelta(hours=1),
        data={"parent_id": capture_id},
    )
    response = search(api)
    assert response.status_code == 200
    body = response.json()
    conforms(body, "search_response")
    captured, refunded = infos(response)
    assert captured["transaction_id"] == capture_id
    assert captured["transaction_event_code"] == "T0006"
    assert captured["transaction_status"] == "S"
    assert captured["transaction_amount"] == {"currency_code": "USD", "value": "30.00"}
    # 3.49% of 30.00 plus 0.49 is 1.537, rounded half-up.
    assert captured["fee_amount"] == {"currency_code": "USD", "value": "-1.54"}
    assert captured["transaction_initiation_date"] == iso(START)
    assert captured["invoice_id"] == "INV-7"
    assert captured["custom_field"] == "cust 1"
    assert captured["paypal_reference_id"] == order_id
    assert captured["paypal_reference_id_type"] == "ODR"
    assert refunded["transaction_event_code"] == "T1107"
    assert refunded["transaction_amount"]["value"] == "-10.00"
    assert refunded["paypal_reference_id"] == capture_id
    assert refunded["paypal_reference_id_type"] == "TXN"
    assert body["total_items"] == 2
    assert body["total_pages"] == 1
    assert body["page"] == 1
    assert body["start_date"] == DAY_BEFORE
    assert body["end_date"] == DAY_AFTER
    merchant = sandbox.store.merchant_by_client_id(api.client_id)
    assert merchant is not None and body["account_number"] == merchant.id
    assert body["links"][0]["rel"] == "self"


def test_rows_outside_the_window_are_not_listed(api: Api, sandbox: Sandbox) -> None:
    record(sandbox, api, "OLDXXX", "5.00", at=START - timedelta(days=3))
    new = record(sandbox, api, "NEWXXX", "6.00", at=START)
    ids = [i["transaction_id"] for i in infos(search(api))]
    assert ids == [new]


def test_a_window_longer_than_31_days_is_rejected(api: Api) -> None:
    start = START - timedelta(days=31, seconds=1)
    response = api.get(SEARCH, params={"start_date": iso(start), "end_date": iso(START)})
    assert response.status_code == 400
    body = response.json()
    assert body["name"] == "INVALID_REQUEST"
    assert body["details"][0]["issue"] == "Date range is greater than 31 days"
    assert body["details"][0]["field"] == "/end_date"
    exactly = api.get(
        SEARCH, params={"start_date": iso(START - timedelta(days=31)), "end_date": iso(START)}
    )
    assert exactly.status_code == 200


def test_missing_or_malformed_dates_are_rejected(api: Api) -> None:
    missing = api.get(SEARCH, params={"end_date": DAY_AFTER})
    assert issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    malformed = api.get(
        SEARCH, params={"start_date": "2026-11-20 12:00:00Z", "end_date": DAY_AFTER}
    )
    assert issues(malformed) == ["INVALID_PARAMETER_SYNTAX"]
    impossible = api.get(
        SEARCH, params={"start_date": "2026-02-31T00:00:00Z", "end_date": DAY_AFTER}
    )
    assert issues(impossible) == ["INVALID_PARAMETER_SYNTAX"]
    backwards = api.get(SEARCH, params={"start_date": DAY_AFTER, "end_date": DAY_BEFORE})
    assert issues(backwards) == ["INVALID_PARAMETER_VALUE"]


def test_dates_with_offsets_and_fractions_are_accepted(api: Api, sandbox: Sandbox) -> None:
    offset = record(sandbox, api, "OFFSET", "1.00", at=START)
    response = api.get(
        SEARCH,
        params={"start_date": "2026-11-21T12:59:59.5+01:00", "end_date": "2026-11-21T13:00:01Z"},
    )
    assert [i["transaction_id"] for i in infos(response)] == [offset]


def seed_variety(sandbox: Sandbox, api: Api) -> dict[str, str]:
    return {
        "usd": record(sandbox, api, "USDSAL", "30.00", fee="-1.54"),
        "eur": record(sandbox, api, "EURSAL", "12.00", currency="EUR", fee="-0.81"),
        "refund": record(sandbox, api, "USDREF", "-10.00", code="T1107"),
        "pending": record(sandbox, api, "USDPEN", "5.00", status="P"),
        "denied": record(sandbox, api, "USDDEN", "7.00", status="D"),
        "jpy": record(sandbox, api, "JPYSAL", "1500", currency="JPY", fee="-101"),
    }


def ids_for(api: Api, **params: Any) -> list[str]:
    response = search(api, **params)
    assert response.status_code == 200, response.text
    return sorted(i["transaction_id"] for i in infos(response))


def test_filters_narrow_the_results(api: Api, sandbox: Sandbox) -> None:
    row = seed_variety(sandbox, api)
    assert ids_for(api, transaction_id=row["eur"]) == [row["eur"]]
    assert ids_for(api, transaction_type="T1107") == [row["refund"]]
    assert ids_for(api, transaction_status="P") == [row["pending"]]
    assert ids_for(api, transaction_currency="EUR") == [row["eur"]]
    # Amounts are in minor units: 10.00 to 30.00 in USD or EUR, 1000 to 3000 yen.
    assert ids_for(api, transaction_amount="[1000 TO 3000]") == sorted(
        [row["eur"], row["jpy"], row["usd"]]
    )
    assert ids_for(api, transaction_amount="-1000 TO -1") == [row["refund"]]


def test_denied_rows_only_appear_when_asking_for_all_records(api: Api, sandbox: Sandbox) -> None:
    row = seed_variety(sandbox, api)
    assert row["denied"] not in ids_for(api)
    assert row["denied"] in ids_for(api, balance_affecting_records_only="N")


def test_bad_filter_values_are_rejected(api: Api) -> None:
    assert issues(search(api, transaction_status="X")) == ["INVALID_PARAMETER_VALUE"]
    assert issues(search(api, transaction_currency="XYZ")) == ["INVALID_PARAMETER_VALUE"]
    assert issues(search(api, transaction_amount="ten TO 20")) == ["INVALID_PARAMETER_SYNTAX"]
    assert issues(search(api, transaction_amount="30 TO 10")) == ["INVALID_PARAMETER_VALUE"]
    assert issues(search(api, fields="transaction_info,colour")) == ["INVALID_PARAMETER_VALUE"]
    assert issues(search(api, balance_affecting_records_only="maybe")) == [
        "INVALID_PARAMETER_VALUE"
    ]
    assert issues(search(api, page_size=501)) == ["INVALID_INTEGER_MAX_VALUE"]
    assert issues(search(api, page=0)) == ["INVALID_INTEGER_MIN_VALUE"]
    assert issues(search(api, page_size="many")) == ["INVALID_PARAMETER_SYNTAX"]
    assert issues(search(api, transaction_id="SHORT")) == ["INVALID_STRING_MIN_LENGTH"]


def test_pages_split_the_results_in_time_order(api: Api, sandbox: Sandbox) -> None:
    # Labels sort against time on purpose: the order must come from the time, not the id.
    paged = [
        record(sandbox, api, f"PAGE{9 - n:02d}", "1.00", at=START + timedelta(minutes=n))
        for n in range(5)
    ]
    first = search(api, page_size=2)
    body = first.json()
    assert [i["transaction_id"] for i in infos(first)] == paged[:2]
    assert (body["total_items"], body["total_pages"], body["page"]) == (5, 3, 1)
    rels = {link["rel"]: link["href"] for link in body["links"]}
    assert "page=2" in rels["next"] and "page=3" in rels["last"]
    last = search(api, page_size=2, page=3)
    assert [i["transaction_id"] for i in infos(last)] == paged[4:]
    assert all(link["rel"] != "next" for link in last.json()["links"])
    beyond = search(api, page_size=2, page=4)
    assert beyond.status_code == 200
    assert "transaction_details" not in beyond.json()
    conforms(beyond.json(), "search_response")


def test_fields_all_adds_payer_shipping_and_cart_info(api: Api) -> None:
    items = [
        {
            "name": "Mug",
            "quantity": "2",
            "unit_amount": {"currency_code": "USD", "value": "10.00"},
        }
    ]
    breakdown = {"item_total": {"currency_code": "USD", "value": "20.00"}}
    capture(
        api,
        "20.00",
        breakdown,
        items=items,
        shipping={
            "name": {"full_name": "Ada Lovelace"},
            "address": {
                "address_line_1": "1 Main St",
                "admin_area_2": "San Jose",
                "admin_area_1": "CA",
                "postal_code": "95131",
                "country_code": "US",
            },
        },
    )
    response = search(api, fields="all")
    body = response.json()
    conforms(body, "search_response")
    detail = body["transaction_details"][0]
    assert detail["payer_info"]["email_address"] == "sb-buyer@personal.example.com"
    assert detail["payer_info"]["payer_name"] == {"given_name": "Sandbox", "surname": "Buyer"}
    assert detail["shipping_info"]["name"] == "Ada Lovelace"
    assert detail["shipping_info"]["address"]["city"] == "San Jose"
    assert detail["cart_info"]["item_details"][0]["item_name"] == "Mug"
    assert detail["cart_info"]["item_details"][0]["item_amount"]["value"] == "20.00"
    assert detail["store_info"] == {}
    only_payer = search(api, fields="payer_info").json()["transaction_details"][0]
    assert set(only_payer) == {"transaction_info", "payer_info"}
    default = search(api).json()["transaction_details"][0]
    assert set(default) == {"transaction_info"}


def test_merchants_only_see_their_own_transactions(
    api: Api, other_api: Api, sandbox: Sandbox
) -> None:
    record(sandbox, api, "MINEXX", "9.00")
    assert search(other_api).json()["total_items"] == 0
    assert search(api).json()["total_items"] == 1


def test_balances_sum_amounts_and_fees_per_currency(api: Api, sandbox: Sandbox) -> None:
    seed_variety(sandbox, api)
    response = api.get(BALANCES)
    assert response.status_code == 200
    body = response.json()
    conforms(body, "balances_response")
    by_currency = {b["currency"]: b for b in body["balances"]}
    usd = by_currency["USD"]
    # 30.00 - 1.54 - 10.00 + 5.00 pending; the denied 7.00 never counts.
    assert usd["total_balance"] == {"currency_code": "USD", "value": "23.46"}
    assert usd["withheld_balance"]["value"] == "5.00"
    assert usd["available_balance"]["value"] == "18.46"
    assert usd["primary"] is True
    assert by_currency["EUR"]["total_balance"]["value"] == "11.19"
    assert by_currency["EUR"]["primary"] is False
    assert by_currency["JPY"]["total_balance"]["value"] == "1399"
    assert re.fullmatch(r"[2-9A-HJ-NP-Z]{13}", body["account_id"])
    assert body["as_of_time"] == iso(START)


def test_balances_as_of_a_time_and_in_one_currency(api: Api, sandbox: Sandbox) -> None:
    record(sandbox, api, "EARLYX", "4.00", at=START - timedelta(days=2))
    record(sandbox, api, "LATERX", "6.00", at=START - timedelta(hours=1))
    record(sandbox, api, "EURONL", "3.00", currency="EUR")
    earlier = api.get(BALANCES, params={"as_of_time": iso(START - timedelta(days=1))}).json()
    assert [(b["currency"], b["total_balance"]["value"]) for b in earlier["balances"]] == [
        ("USD", "4.00")
    ]
    euros = api.get(BALANCES, params={"currency_code": "EUR"}).json()
    assert [b["currency"] for b in euros["balances"]] == ["EUR"]
    assert issues(api.get(BALANCES, params={"currency_code": "ABC"})) == ["INVALID_PARAMETER_VALUE"]
    assert issues(api.get(BALANCES, params={"as_of_time": "2026-13-01T00:00:00Z"})) == [
        "INVALID_PARAMETER_SYNTAX"
    ]


def test_balances_of_a_merchant_without_transactions_are_empty(api: Api) -> None:
    body = api.get(BALANCES).json()
    assert body["balances"] == []
