"""Billing plans v1 against the in-process sandbox, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api, issues
from tests.sandbox.test_products import create_product

BASE = "/v1/billing/plans"


def cycle(
    sequence: int,
    price: str | None,
    *,
    tenure: str = "REGULAR",
    total: int = 0,
    unit: str = "MONTH",
    count: int = 1,
    currency: str = "USD",
) -> dict[str, Any]:
    made: dict[str, Any] = {
        "frequency": {"interval_unit": unit, "interval_count": count},
        "tenure_type": tenure,
        "sequence": sequence,
        "total_cycles": total,
    }
    if price is not None:
        made["pricing_scheme"] = {"fixed_price": {"currency_code": currency, "value": price}}
    return made


def plan_body(product_id: str, *cycles: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "product_id": product_id,
        "name": "Basic plan",
        "billing_cycles": list(cycles) or [cycle(1, "10.00")],
        "payment_preferences": {"auto_bill_outstanding": True},
        **extra,
    }


def create_plan(api: Api, *cycles: dict[str, Any], **extra: Any) -> dict[str, Any]:
    product = create_product(api)
    response = api.post(
        BASE,
        plan_body(product["id"], *cycles, **extra),
        headers={"Prefer": "return=representation"},
    )
    assert response.status_code == 201, response.text
    plan: dict[str, Any] = response.json()
    return plan


def test_create_returns_an_active_plan_with_versioned_pricing(api: Api) -> None:
    plan = create_plan(
        api,
        cycle(1, "3.00", tenure="TRIAL", total=2),
        cycle(2, "10.00", total=12),
        taxes={"percentage": "10", "inclusive": False},
    )
    assert plan["id"].startswith("P-") and plan["status"] == "ACTIVE"
    first, second = plan["billing_cycles"]
    assert first["tenure_type"] == "TRIAL" and first["pricing_scheme"]["version"] == 1
    assert second["frequency"] == {"interval_unit": "MONTH", "interval_count": 1}
    assert plan["payment_preferences"]["setup_fee_failure_action"] == "CANCEL"
    assert plan["taxes"] == {"percentage": "10", "inclusive": False}
    assert plan["quantity_supported"] is False
    assert {link["rel"] for link in plan["links"]} >= {"self", "edit"}


def test_minimal_response_by_default(api: Api) -> None:
    product = create_product(api)
    plan = api.post(BASE, plan_body(product["id"], status="CREATED")).json()
    assert plan["status"] == "CREATED"
    assert "billing_cycles" not in plan
    assert api.get(f"{BASE}/{plan['id']}").json()["billing_cycles"][0]["sequence"] == 1


def test_plan_needs_an_existing_product_of_this_merchant(api: Api, other_api: Api) -> None:
    product = create_product(other_api)
    response = api.post(BASE, plan_body(product["id"]))
    assert response.status_code == 400
    assert issues(response) == ["INVALID_PARAMETER_VALUE"]
    assert api.get(BASE).json()["plans"] == []


def test_billing_cycle_rules_are_enforced(api: Api) -> None:
    product = create_product(api)["id"]
    cases = {
        "MISSING_REGULAR_BILLING_CYCLE": [cycle(1, "1.00", tenure="TRIAL", total=1)],
        "MULTIPLE_REGULAR_BILLING_CYCLES_NOT_SUPPORTED": [cycle(1, "1.00"), cycle(2, "2.00")],
        "INVALID_BILLING_CYCLE_SEQUENCE": [cycle(2, "1.00")],
        "INVALID_TRIAL_BILLING_TOTAL_CYCLES": [
            cycle(1, "1.00", tenure="TRIAL", total=0),
            cycle(2, "2.00"),
        ],
        "MULTIPLE_FREE_TRIAL_BILLING_CYCLES_NOT_SUPPORTED": [
            cycle(1, None, tenure="TRIAL", total=1),
            cycle(2, "0", tenure="TRIAL", total=1),
            cycle(3, "2.00"),
        ],
        "CURRENCY_MISMATCH": [
            cycle(1, "1.00", tenure="TRIAL", total=1),
            cycle(2, "2.00", currency="EUR"),
        ],
    }
    for issue, cycles in cases.items():
        response = api.post(BASE, plan_body(product, *cycles))
        assert response.status_code == 422, issue
        assert issues(response) == [issue]
    trial_last = api.post(
        BASE, plan_body(product, cycle(1, "2.00"), cycle(2, "1.00", tenure="TRIAL", total=1))
    )
    assert issues(trial_last) == ["INVALID_BILLING_CYCLE_SEQUENCE"]
    assert api.get(BASE).json()["plans"] == []


def test_bad_prices_and_schema_violations_are_400(api: Api) -> None:
    product = create_product(api)["id"]
    negative = api.post(BASE, plan_body(product, cycle(1, "-1.00")))
    assert negative.status_code == 400 and issues(negative) == ["INVALID_PARAMETER_VALUE"]
    precise = api.post(BASE, plan_body(product, cycle(1, "1.001")))
    assert precise.status_code == 400 and issues(precise) == ["INVALID_PARAMETER_VALUE"]
    jpy = api.post(BASE, plan_body(product, cycle(1, "100.5", currency="JPY")))
    assert jpy.status_code == 400
    no_price = api.post(BASE, plan_body(product, cycle(1, None)))
    assert no_price.status_code == 400 and issues(no_price) == ["MISSING_REQUIRED_PARAMETER"]
    bad_unit = plan_body(product, cycle(1, "1.00", unit="FORTNIGHT"))
    assert api.post(BASE, bad_unit).status_code == 400
    bad_tax = api.post(BASE, plan_body(product, taxes={"percentage": "101"}))
    assert bad_tax.status_code == 400 and issues(bad_tax) == ["INVALID_PARAMETER_VALUE"]
    extra = api.post(BASE, {**plan_body(product), "colour": "red"})
    assert extra.status_code == 201 and "colour" not in extra.json()  # ignored, as PayPal does


def test_list_filters_by_product_and_plan_ids(api: Api) -> None:
    one = create_plan(api)
    two = create_plan(api)
    by_product = api.get(BASE, params={"product_id": one["product_id"]}).json()
    assert [p["id"] for p in by_product["plans"]] == [one["id"]]
    by_ids = api.get(BASE, params={"plan_ids": f"{two['id']},P-NOPE", "total_required": "true"})
    assert [p["id"] for p in by_ids.json()["plans"]] == [two["id"]]
    assert by_ids.json()["total_items"] == 1
    assert by_ids.json()["links"]


def test_patch_updates_allowed_fields(api: Api) -> None:
    plan = create_plan(api)
    response = api.patch(
        f"{BASE}/{plan['id']}",
        [
            {"op": "replace", "path": "/description", "value": "Better"},
            {"op": "replace", "path": "/payment_preferences/payment_failure_threshold", "value": 2},
            {"op": "replace", "path": "/taxes/percentage", "value": "7.5"},
            {
                "op": "replace",
                "path": "/payment_preferences/setup_fee",
                "value": {"currency_code": "USD", "value": "5.00"},
            },
        ],
    )
    assert response.status_code == 204
    shown = api.get(f"{BASE}/{plan['id']}").json()
    assert shown["description"] == "Better"
    assert shown["payment_preferences"]["payment_failure_threshold"] == 2
    assert shown["payment_preferences"]["setup_fee"]["value"] == "5.00"
    assert shown["taxes"]["percentage"] == "7.5"


def test_patch_refuses_other_paths_operations_and_values(api: Api) -> None:
    plan = create_plan(api)
    path = f"{BASE}/{plan['id']}"
    bad_path = api.patch(path, [{"op": "replace", "path": "/product_id", "value": "PROD-X"}])
    assert bad_path.status_code == 400 and issues(bad_path) == ["INVALID_PATCH_PATH"]
    bad_op = api.patch(path, [{"op": "add", "path": "/description", "value": "x"}])
    assert bad_op.status_code == 400 and issues(bad_op) == ["UNSUPPORTED_PATCH_OPERATION"]
    twice = {"op": "replace", "path": "/name", "value": "x"}
    assert issues(api.patch(path, [twice, twice])) == ["INVALID_PATCH_PATH"]
    wrong = api.patch(
        path,
        [
            {"op": "replace", "path": "/name", "value": "Renamed"},
            {"op": "replace", "path": "/payment_preferences/auto_bill_outstanding", "value": 1},
        ],
    )
    assert wrong.status_code == 400 and issues(wrong) == ["INVALID_PARAMETER_VALUE"]
    assert api.get(path).json()["name"] == "Basic plan"


def test_activate_and_deactivate_follow_the_status_rules(api: Api) -> None:
    plan = create_plan(api, status="CREATED")
    path = f"{BASE}/{plan['id']}"
    deactivate_created = api.post(f"{path}/deactivate")
    assert deactivate_created.status_code == 422
    assert issues(deactivate_created) == ["PLAN_STATUS_INVALID"]
    assert api.post(f"{path}/activate").status_code == 204
    assert api.get(path).json()["status"] == "ACTIVE"
    assert issues(api.post(f"{path}/activate")) == ["PLAN_STATUS_INVALID"]
    assert api.post(f"{path}/deactivate").status_code == 204
    assert api.get(path).json()["status"] == "INACTIVE"
    patch = api.patch(path, [{"op": "replace", "path": "/name", "value": "x"}])
    assert patch.status_code == 422 and issues(patch) == ["PLAN_STATUS_INACTIVE"]
    assert api.post(f"{path}/activate").status_code == 204


def test_update_pricing_schemes_bumps_the_version(api: Api) -> None:
    plan = create_plan(api, cycle(1, "1.00", tenure="TRIAL", total=1), cycle(2, "10.00"))
    path = f"{BASE}/{plan['id']}"
    body: dict[str, Any] = {
        "pricing_schemes": [
            {
                "billing_cycle_sequence": 2,
                "pricing_scheme": {"fixed_price": {"currency_code": "USD", "value": "12.00"}},
            }
        ]
    }
    assert api.post(f"{path}/update-pricing-schemes", body).status_code == 204
    regular = api.get(path).json()["billing_cycles"][1]
    assert regular["pricing_scheme"]["fixed_price"]["value"] == "12.00"
    assert regular["pricing_scheme"]["version"] == 2
    body["pricing_schemes"][0]["billing_cycle_sequence"] = 9
    missing = api.post(f"{path}/update-pricing-schemes", body)
    assert missing.status_code == 422 and issues(missing) == ["INVALID_BILLING_CYCLE_SEQUENCE"]
    body["pricing_schemes"][0]["billing_cycle_sequence"] = 2
    body["pricing_schemes"][0]["pricing_scheme"]["fixed_price"]["currency_code"] = "EUR"
    mismatch = api.post(f"{path}/update-pricing-schemes", body)
    assert mismatch.status_code == 422 and issues(mismatch) == ["CURRENCY_MISMATCH"]


def test_tiered_plans_support_quantity(api: Api) -> None:
    tiers = [
        {"starting_quantity": "1", "ending_quantity": "10", "amount": _usd("5.00")},
        {"starting_quantity": "11", "amount": _usd("4.00")},
    ]
    regular = cycle(1, None)
    regular["pricing_scheme"] = {"pricing_model": "VOLUME", "tiers": tiers}
    plan = create_plan(api, regular)
    assert plan["quantity_supported"] is True
    gap = [tiers[0], {"starting_quantity": "12", "amount": _usd("4.00")}]
    regular["pricing_scheme"] = {"pricing_model": "TIERED", "tiers": gap}
    response = api.post(BASE, plan_body(plan["product_id"], regular))
    assert response.status_code == 422 and issues(response) == ["MISSING_PRICING_SCHEME_TIERS"]


def _usd(value: str) -> dict[str, str]:
    return {"currency_code": "USD", "value": value}


def test_replayed_create_returns_the_same_plan(api: Api) -> None:
    product = create_product(api)
    key = {"PayPal-Request-Id": "plan-key-1"}
    first = api.post(BASE, plan_body(product["id"]), headers=key)
    second = api.post(BASE, plan_body(product["id"]), headers=key)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert len(api.get(BASE).json()["plans"]) == 1


def test_merchants_cannot_touch_each_others_plans(api: Api, other_api: Api) -> None:
    plan = create_plan(api)
    path = f"{BASE}/{plan['id']}"
    assert other_api.get(path).status_code == 404
    assert other_api.post(f"{path}/deactivate").status_code == 404
    assert api.get(path).json()["status"] == "ACTIVE"
