"""Recurring invoice series against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events
from tests.conftest import Api, issues

BASE = "/v2/invoicing/recurring-invoices"
SEARCH = "/v2/invoicing/search-recurring-invoices"
START = "2026-11-21"  # the pinned sandbox clock's date


def series(start: str = START, **plan: Any) -> dict[str, Any]:
    """A monthly garden-care series: one item of 120.00 with 8 % tax, due 15 days after issue."""
    return {
        "plan_detail": {
            "frequency": {"interval_unit": "MONTH", "interval_count": 1},
            "start_series_date": start,
            "total_cycles": 3,
            **plan,
        },
        "recurring_info": {
            "detail": {
                "currency_code": "USD",
                "reference": "Garden care",
                "payment_term": {"term_type": "NET_15"},
            },
            "primary_recipients": [
                {
                    "billing_info": {
                        "email_address": "ada@example.com",
                        "name": {"given_name": "Ada", "surname": "Lovelace"},
                    }
                }
            ],
            "items": [
                {
                    "name": "Monthly garden care",
                    "quantity": "1",
                    "unit_amount": {"currency_code": "USD", "value": "120.00"},
                    "tax": {"name": "Sales Tax", "percent": "8"},
                }
            ],
        },
    }


def create(api: Api, body: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    response = api.post(BASE, body or series(), headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def advance(api: Api, days: int) -> dict[str, Any]:
    response = api.post("/v1/sandbox/clock/advance", {"days": days})
    assert response.status_code == 200, response.text
    moved: dict[str, Any] = response.json()
    return moved


def invoices(api: Api) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api.get("/v2/invoicing/invoices?page_size=100").json()["items"]
    return sorted(found, key=lambda invoice: invoice["detail"]["invoice_date"])


def test_a_created_series_is_a_draft_with_its_schedule_and_template_totals(api: Api) -> None:
    created = create(api)
    assert created["id"].startswith("RI-") and len(created["id"]) == 20
    assert created["status"] == "DRAFT"
    plan = created["plan_detail"]
    assert plan["next_occurrence_date"] == START
    assert plan["completed_cycles"] == 0
    info = created["recurring_info"]
    assert info["amount"]["value"] == "129.60"  # 120.00 + 8 %
    assert info["items"][0]["tax"]["amount"]["value"] == "9.60"
    assert info["invoicer"]["email_address"].endswith("@business.example.com")
    rels = {link["rel"] for link in created["links"]}
    assert rels == {"self", "replace", "cancel", "delete", "activate"}
    assert api.get(f"{BASE}/{created['id']}").json() == created
    assert invoices(api) == []  # a draft issues nothing


def test_activating_a_series_starting_today_issues_its_first_invoice_sent(
    api: Api, sandbox: Sandbox
) -> None:
    created = create(api)
    assert api.post(f"{BASE}/{created['id']}/activate").status_code == 204
    shown = api.get(f"{BASE}/{created['id']}").json()
    assert shown["status"] == "ACTIVE"
    assert shown["plan_detail"]["completed_cycles"] == 1
    assert shown["plan_detail"]["next_occurrence_date"] == "2026-12-21"
    [invoice] = invoices(api)
    assert invoice["status"] == "SENT"
    assert invoice["detail"]["invoice_number"] == "0001"
    assert invoice["detail"]["invoice_date"] == START
    assert invoice["detail"]["payment_term"] == {"term_type": "NET_15", "due_date": "2026-12-06"}
    assert invoice["amount"]["value"] == "129.60"
    assert invoice["detail"]["reference"] == "Garden care"
    with sandbox.store.engine.connect() as conn:
        kinds = conn.execute(
            sa.select(events.c.event_type).where(events.c.resource_id == invoice["id"])
        ).all()
    assert [row.event_type for row in kinds] == ["INVOICING.INVOICE.CREATED"]


def test_advancing_the_clock_issues_each_due_invoice_once_until_the_series_expires(
    api: Api, sandbox: Sandbox
) -> None:
    created = create(api, series(start="2026-11-25"))
    api.post(f"{BASE}/{created['id']}/activate")
    assert invoices(api) == []  # its first date has not come
    moved = advance(api, 4)
    assert [entry["invoice_date"] for entry in moved["invoices_issued"]] == ["2026-11-25"]
    assert advance(api, 1)["invoices_issued"] == []
    moved = advance(api, 70)  # to 2027-02-03: the December and January invoices
    issued = moved["invoices_issued"]
    assert [entry["invoice_date"] for entry in issued] == ["2026-12-25", "2027-01-25"]
    assert {entry["recurring_series_id"] for entry in issued} == {created["id"]}
    listed = invoices(api)
    assert [i["detail"]["invoice_date"] for i in listed] == [
        "2026-11-25",
        "2026-12-25",
        "2027-01-25",
    ]
    assert [i["detail"]["invoice_number"] for i in listed] == ["0001", "0002", "0003"]
    assert {i["status"] for i in listed} == {"SENT"}
    shown = api.get(f"{BASE}/{created['id']}").json()
    assert shown["status"] == "EXPIRED"
    assert "next_occurrence_date" not in shown["plan_detail"]
    assert advance(api, 60)["invoices_issued"] == []
    with sandbox.store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.data).where(
                events.c.event_type == "INVOICING.INVOICE.CREATED",
                events.c.resource_id.in_([i["id"] for i in listed]),
            )
        ).all()
    announced = sorted((json.loads(row.data) for row in rows), key=lambda e: e["create_time"])
    assert [e["create_time"][:10] for e in announced] == [
        "2026-11-25",
        "2026-12-25",
        "2027-01-25",
    ]
    assert {e["resource"]["status"] for e in announced} == {"SENT"}


def test_month_end_series_clamp_without_drifting(api: Api) -> None:
    body = series(start="2026-11-30", total_cycles=4)
    created = create(api, body)
    api.post(f"{BASE}/{created['id']}/activate")
    advance(api, 100)
    dates = [i["detail"]["invoice_date"] for i in invoices(api)]
    assert dates == ["2026-11-30", "2026-12-30", "2027-01-30", "2027-02-28"]


def test_a_cancelled_series_issues_nothing_more_and_keeps_its_invoices(api: Api) -> None:
    created = create(api)
    api.post(f"{BASE}/{created['id']}/activate")
    assert api.post(f"{BASE}/{created['id']}/cancel").status_code == 204
    assert advance(api, 40)["invoices_issued"] == []
    assert len(invoices(api)) == 1
    again = api.post(f"{BASE}/{created['id']}/cancel")
    assert again.status_code == 422 and issues(again) == ["SERIES_CANCELED_ALREADY"]
    put = api.put(f"{BASE}/{created['id']}", series())
    assert put.status_code == 422 and issues(put) == ["CANNOT_UPDATE_SERIES"]


def test_only_a_draft_is_deleted_or_activated(api: Api) -> None:
    draft = create(api, series(start="2026-12-01"))
    assert api.delete(f"{BASE}/{draft['id']}").status_code == 204
    assert api.get(f"{BASE}/{draft['id']}").status_code == 404
    active = create(api, series(start="2026-12-01"))
    api.post(f"{BASE}/{active['id']}/activate")
    deleted = api.delete(f"{BASE}/{active['id']}")
    assert deleted.status_code == 422 and issues(deleted) == ["CANNOT_DELETE_SERIES"]
    again = api.post(f"{BASE}/{active['id']}/activate")
    assert again.status_code == 422 and issues(again) == ["CANNOT_ACTIVATE_SERIES"]


def test_a_draft_whose_start_date_passed_must_be_updated_before_activating(api: Api) -> None:
    created = create(api, series(start="2026-11-22"))
    advance(api, 2)
    refused = api.post(f"{BASE}/{created['id']}/activate")
    assert refused.status_code == 422 and issues(refused) == ["CANNOT_ACTIVATE_SERIES"]
    body = series(start="2026-11-23")
    updated = api.put(f"{BASE}/{created['id']}", body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["plan_detail"]["start_series_date"] == "2026-11-23"
    assert api.post(f"{BASE}/{created['id']}/activate").status_code == 204
    assert len(invoices(api)) == 1


def test_an_update_replaces_the_plan_and_template(api: Api) -> None:
    created = create(api, series(start="2026-12-01"))
    body = series(start="2026-12-05", total_cycles=12)
    body["plan_detail"]["frequency"] = {"interval_unit": "WEEK", "interval_count": 2}
    body["recurring_info"]["items"][0]["unit_amount"]["value"] = "80.00"
    updated = api.put(f"{BASE}/{created['id']}", body).json()
    assert updated["plan_detail"]["frequency"] == {"interval_unit": "WEEK", "interval_count": 2}
    assert updated["plan_detail"]["total_cycles"] == 12
    assert updated["plan_detail"]["next_occurrence_date"] == "2026-12-05"
    assert updated["recurring_info"]["amount"]["value"] == "86.40"
    assert updated["metadata"]["create_time"] == created["metadata"]["create_time"]
    api.post(f"{BASE}/{created['id']}/activate")
    advance(api, 28)  # to 2026-12-19: the 5th and the 19th
    assert [i["detail"]["invoice_date"] for i in invoices(api)] == ["2026-12-05", "2026-12-19"]


def test_bad_input_is_refused_with_paypals_issue_codes(api: Api) -> None:
    past = api.post(BASE, series(start="2026-11-20"))
    assert past.status_code == 400 and issues(past) == ["INVALID_PARAMETER_VALUE"]
    assert past.json()["details"][0]["field"] == "/plan_detail/start_series_date"
    body = series()
    del body["recurring_info"]["primary_recipients"]
    missing = api.post(BASE, body)
    assert missing.status_code == 400 and issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    body = series()
    body["plan_detail"]["frequency"]["interval_unit"] = "FORTNIGHT"
    assert api.post(BASE, body).status_code == 400
    body = series()
    body["recurring_info"]["items"][0]["unit_amount"]["value"] = "12.345"
    bad_money = api.post(BASE, body)
    assert bad_money.status_code in (400, 422)
    assert bad_money.json()["details"][0]["field"].startswith("/recurring_info/items/0")
    body = series()
    body["recurring_info"]["detail"]["currency_code"] = "XXX"
    currency = api.post(BASE, body)
    assert currency.status_code == 422
    assert currency.json()["details"][0]["field"] == "/recurring_info/detail/currency_code"
    malformed = api.request(
        "POST", BASE, content=b"{", headers={"Content-Type": "application/json"}
    )
    assert malformed.status_code == 400
    assert api.get(f"{BASE}/RI-00000000000000000").status_code == 404


def test_a_repeated_request_id_replays_the_first_create(api: Api) -> None:
    first = create(api, **{"PayPal-Request-Id": "series-1"})
    again = api.post(BASE, series(start="2026-12-24"), headers={"PayPal-Request-Id": "series-1"})
    assert again.status_code == 201
    assert again.json() == first
    listed = api.post(SEARCH, {}).json()
    assert [s["id"] for s in listed["recurring_invoices"]] == [first["id"]]


def test_another_merchant_can_neither_see_nor_touch_a_series(api: Api, other_api: Api) -> None:
    created = create(api)
    path = f"{BASE}/{created['id']}"
    assert other_api.get(path).status_code == 404
    assert other_api.put(path, series()).status_code == 404
    assert other_api.post(f"{path}/activate").status_code == 404
    assert other_api.post(f"{path}/cancel").status_code == 404
    assert other_api.delete(path).status_code == 404
    assert other_api.post(SEARCH, {}).json()["recurring_invoices"] == []
    api.post(f"{path}/activate")
    assert advance(other_api, 40)["invoices_issued"] == []
    assert api.get(path).json()["plan_detail"]["completed_cycles"] == 1


def test_search_filters_by_status_text_dates_and_amount(api: Api) -> None:
    garden = create(api)
    pool = series(start="2026-12-10")
    pool["recurring_info"]["items"][0]["name"] = "Pool cleaning"
    pool["recurring_info"]["primary_recipients"][0]["billing_info"] = {
        "email_address": "grace@example.com",
        "name": {"given_name": "Grace", "surname": "Hopper"},
    }
    pool["recurring_info"]["items"][0]["unit_amount"]["value"] = "300.00"
    other = create(api, pool)
    api.post(f"{BASE}/{garden['id']}/activate")

    def found(body: dict[str, Any], query: str = "") -> list[str]:
        response = api.post(f"{SEARCH}{query}", body)
        assert response.status_code == 200, response.text
        return [s["id"] for s in response.json()["recurring_invoices"]]

    assert found({"search_filters": {"status": ["ACTIVE"]}}) == [garden["id"]]
    assert found({"search_filters": {"status": ["DRAFT"]}}) == [other["id"]]
    assert found({"search_text": "pool", "search_fields": ["ITEM_NAME"]}) == [other["id"]]
    assert found({"search_text": "grace@", "search_fields": ["BILLING_EMAIL"]}) == [other["id"]]
    assert found({"search_text": "lovelace"}) == [garden["id"]]
    window = {"start": "2026-12-01", "end": "2026-12-31"}
    assert set(found({"search_filters": {"next_occurrence_date_range": window}})) == {
        garden["id"],
        other["id"],
    }
    amounts = {
        "lower_amount": {"currency_code": "USD", "value": "200.00"},
        "upper_amount": {"currency_code": "USD", "value": "400.00"},
    }
    assert found({"search_filters": {"total_amount_range": amounts}}) == [other["id"]]
    page = api.post(f"{SEARCH}?page=2&page_size=1", {}).json()
    assert page["total_items"] == 2 and page["total_pages"] == 2
    assert len(page["recurring_invoices"]) == 1
    both = {
        "search_filters": {
            "next_occurrence_date_range": window,
            "creation_date_range": {"start": "2026-11-01T00:00:00Z", "end": "2026-12-01T00:00:00Z"},
        }
    }
    assert api.post(SEARCH, both).status_code == 400
    bad = api.post(SEARCH, {"search_filters": {"status": ["PAUSED"]}})
    assert bad.status_code == 400
