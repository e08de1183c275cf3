"""Invoice conditional rules against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from cartagent.sandbox import Sandbox
from cartagent.sandbox.store import events
from tests.conftest import Api, issues

INVOICES = "/v2/invoicing/invoices"


def usd(value: str) -> dict[str, str]:
    return {"currency_code": "USD", "value": value}


def invoice(api: Api, *, send: bool = True, term: str = "NET_30") -> str:
    """356.05 in all: 300.00 + 8 % tax, 24.50 less 10 %, 10.00 shipping; dated 2026-11-21."""
    body = {
        "detail": {"currency_code": "USD", "payment_term": {"term_type": term}},
        "primary_recipients": [{"billing_info": {"email_address": "ada@example.com"}}],
        "items": [
            {
                "name": "Garden design",
                "quantity": "2",
                "unit_amount": usd("150.00"),
                "tax": {"name": "Sales Tax", "percent": "8"},
            },
            {
                "name": "Seed mix",
                "quantity": "1",
                "unit_amount": usd("24.50"),
                "discount": {"percent": "10"},
            },
        ],
        "amount": {"breakdown": {"shipping": {"amount": usd("10.00")}}},
    }
    created = api.post(INVOICES, body)
    assert created.status_code == 201, created.text
    invoice_id: str = created.json()["id"]
    if send:
        assert api.post(f"{INVOICES}/{invoice_id}/send", {}).status_code == 200
    return invoice_id


def discount(value: str, kind: str = "PERCENT", condition: str = "SEVEN_DAYS_AFTER_ISSUE_DATE"):
    return {
        "conditional_rule_type": "EARLY_PAYMENT_DISCOUNT",
        "conditional_rule_value_type": kind,
        "conditional_rule_value": value,
        "rule_expiry_terms": {
            "rule_expiry_condition": condition,
            "condition_rule_end_date": "2026-11-28",
        },
    }


def auto_cancel(
    condition: str = "ONE_DAY_AFTER_DUE_DATE", end: str | None = None
) -> dict[str, Any]:
    terms: dict[str, Any] = {"rule_expiry_condition": condition}
    if end is not None:
        terms["condition_rule_end_date"] = end
    return {"conditional_rule_type": "AUTO_CANCEL", "rule_expiry_terms": terms}


def add(api: Api, invoice_id: str, *rules: dict[str, Any], **headers: str) -> Any:
    return api.post(
        f"{INVOICES}/{invoice_id}/conditional-rules", {"rules": list(rules)}, headers=headers
    )


def advance(api: Api, days: int) -> dict[str, Any]:
    response = api.post("/v1/sandbox/clock/advance", {"days": days})
    assert response.status_code == 200, response.text
    moved: dict[str, Any] = response.json()
    return moved


def test_an_early_payment_discount_lowers_the_amount_due_until_its_end_date(api: Api) -> None:
    invoice_id = invoice(api)
    created = add(api, invoice_id, discount("5"))
    assert created.status_code == 201, created.text
    [rule] = created.json()["rules"]
    assert rule["conditional_rule_id"].startswith("CR-") and len(rule["conditional_rule_id"]) == 39
    assert rule["rule_expiry_terms"]["condition_rule_end_date"] == "2026-11-28"
    shown = api.get(f"{INVOICES}/{invoice_id}").json()
    assert shown["amount"]["value"] == "356.05"
    assert shown["due_amount"]["value"] == "338.25"  # 5 % of 356.05 is 17.8025: 17.80 off
    epd = shown["detail"]["payment_term"]["conditional_rules"]["early_payment_discount"]
    assert epd == {"discount_end_date": "2026-11-28", "percent": "5", "is_applied": True}
    advance(api, 7)  # the end date itself still earns the discount
    assert api.get(f"{INVOICES}/{invoice_id}").json()["due_amount"]["value"] == "338.25"
    advance(api, 1)
    late = api.get(f"{INVOICES}/{invoice_id}").json()
    assert late["due_amount"]["value"] == "356.05"
    assert (
        late["detail"]["payment_term"]["conditional_rules"]["early_payment_discount"]["is_applied"]
        is False
    )


def test_paying_the_discounted_total_in_time_settles_the_invoice_for_good(api: Api) -> None:
    invoice_id = invoice(api)
    add(api, invoice_id, discount("20.00", kind="AMOUNT"))
    too_much = api.post(
        f"{INVOICES}/{invoice_id}/payments", {"method": "CHECK", "amount": usd("356.05")}
    )
    assert too_much.status_code == 422
    assert issues(too_much) == ["PAYMENT_AMOUNT_GREATER_THAN_AMOUNT_DUE"]
    paid = api.post(
        f"{INVOICES}/{invoice_id}/payments", {"method": "CHECK", "amount": usd("336.05")}
    )
    assert paid.status_code == 200, paid.text
    advance(api, 30)  # the discount was earned: the invoice stays paid after its end date
    shown = api.get(f"{INVOICES}/{invoice_id}").json()
    assert shown["status"] == "MARKED_AS_PAID"
    assert shown["due_amount"]["value"] == "0.00"


def test_a_payment_after_the_end_date_owes_the_full_total(api: Api) -> None:
    invoice_id = invoice(api)
    add(api, invoice_id, discount("5"))
    advance(api, 8)  # 2026-11-29
    late = {"method": "CASH", "amount": usd("338.25")}
    partly = api.post(f"{INVOICES}/{invoice_id}/payments", late)
    assert partly.status_code == 200, partly.text
    shown = api.get(f"{INVOICES}/{invoice_id}").json()
    assert shown["status"] == "PARTIALLY_PAID"
    assert shown["due_amount"]["value"] == "17.80"


def test_auto_cancel_cancels_an_unpaid_invoice_when_the_clock_reaches_it(
    api: Api, sandbox: Sandbox
) -> None:
    unpaid = invoice(api)  # due 2026-12-21: cancelled on the 22nd
    add(api, unpaid, auto_cancel())
    paid = invoice(api)
    add(api, paid, auto_cancel())
    api.post(f"{INVOICES}/{paid}/payments", {"method": "CASH"})
    assert advance(api, 30)["invoices_cancelled"] == []  # 2026-12-21
    moved = advance(api, 1)
    assert moved["invoices_cancelled"] == [{"invoice_id": unpaid, "cancel_date": "2026-12-22"}]
    shown = api.get(f"{INVOICES}/{unpaid}").json()
    assert shown["status"] == "CANCELLED"
    assert shown["detail"]["metadata"]["cancel_time"].startswith("2026-12-22")
    assert api.get(f"{INVOICES}/{paid}").json()["status"] == "MARKED_AS_PAID"
    assert advance(api, 10)["invoices_cancelled"] == []
    with sandbox.store.engine.connect() as conn:
        kinds = conn.execute(
            sa.select(events.c.event_type, events.c.created_at)
            .where(events.c.resource_id == unpaid)
            .order_by(events.c.created_at)
        ).all()
    assert kinds[-1].event_type == "INVOICING.INVOICE.CANCELLED"
    assert [row.event_type for row in kinds].count("INVOICING.INVOICE.CANCELLED") == 1


def test_a_specific_date_rule_needs_a_date_that_has_not_passed(api: Api) -> None:
    invoice_id = invoice(api)
    missing = add(api, invoice_id, auto_cancel("SPECIFIC_DATE"))
    assert missing.status_code == 400 and issues(missing) == ["MISSING_REQUIRED_PARAMETER"]
    past = add(api, invoice_id, auto_cancel("SPECIFIC_DATE", "2026-11-20"))
    assert past.status_code == 422 and issues(past) == ["INVALID_RULE_END_DATE"]
    later = add(api, invoice_id, auto_cancel("SPECIFIC_DATE", "2026-12-01"))
    assert later.status_code == 201, later.text
    assert advance(api, 10)["invoices_cancelled"] == [
        {"invoice_id": invoice_id, "cancel_date": "2026-12-01"}
    ]


def test_new_rules_replace_the_rule_of_their_type(api: Api) -> None:
    invoice_id = invoice(api)
    add(api, invoice_id, discount("5"), auto_cancel())
    answer = add(api, invoice_id, discount("10"))
    rules = answer.json()["rules"]
    assert sorted(r["conditional_rule_type"] for r in rules) == [
        "AUTO_CANCEL",
        "EARLY_PAYMENT_DISCOUNT",
    ]
    assert api.get(f"{INVOICES}/{invoice_id}").json()["due_amount"]["value"] == "320.44"


def test_bad_rules_are_refused(api: Api) -> None:
    invoice_id = invoice(api)
    no_value = discount("5")
    del no_value["conditional_rule_value"]
    assert issues(add(api, invoice_id, no_value)) == ["MISSING_REQUIRED_PARAMETER"]
    assert add(api, invoice_id, discount("0")).status_code == 400
    assert add(api, invoice_id, discount("101")).status_code == 400
    assert add(api, invoice_id, discount("abc")).status_code == 400
    assert add(api, invoice_id, discount("1.005", kind="AMOUNT")).status_code in (400, 422)
    over = add(api, invoice_id, discount("356.06", kind="AMOUNT"))
    assert over.status_code == 422 and issues(over) == ["DISCOUNT_EXCEEDS_AMOUNT"]
    wrong = add(api, invoice_id, discount("5", condition="ONE_DAY_AFTER_DUE_DATE"))
    assert wrong.status_code == 400 and issues(wrong) == ["INVALID_PARAMETER_VALUE"]
    assert add(api, invoice_id, discount("5"), discount("6")).status_code == 400
    assert add(api, invoice_id).status_code == 400
    unknown = {**discount("5"), "conditional_rule_type": "LATE_FEE"}
    assert add(api, invoice_id, unknown).status_code == 400
    undated = invoice(api, term="NO_DUE_DATE")
    no_due = add(api, undated, auto_cancel())
    assert no_due.status_code == 422 and issues(no_due) == ["DUE_DATE_REQUIRED"]
    api.post(f"{INVOICES}/{invoice_id}/cancel", {})
    closed = add(api, invoice_id, discount("5"))
    assert closed.status_code == 422 and issues(closed) == ["CANNOT_ADD_CONDITIONAL_RULES"]
    assert add(api, "INV2-AAAA-BBBB-CCCC-DDDD", discount("5")).status_code == 404


def test_a_draft_takes_rules_and_a_repeated_request_id_replays(api: Api) -> None:
    draft = invoice(api, send=False)
    first = add(api, draft, discount("5"), **{"PayPal-Request-Id": "rules-1"})
    again = add(api, draft, discount("9"), **{"PayPal-Request-Id": "rules-1"})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert api.get(f"{INVOICES}/{draft}").json()["due_amount"]["value"] == "338.25"


def test_another_merchant_cannot_add_rules_to_an_invoice(api: Api, other_api: Api) -> None:
    invoice_id = invoice(api)
    assert add(other_api, invoice_id, discount("5")).status_code == 404
    add(api, invoice_id, auto_cancel())
    assert advance(other_api, 40)["invoices_cancelled"] == []
    assert api.get(f"{INVOICES}/{invoice_id}").json()["status"] == "SENT"
