"""Request validation derived from PayPal's OpenAPI documents."""

from __future__ import annotations

import pytest

from cartagent.sandbox import spec
from cartagent.sandbox.errors import PayPalError

WITH_EXAMPLES = sorted(key for key, op in spec.operations().items() if op.examples)


def _issues(key: str, body: object) -> list[str]:
    try:
        spec.validate_body(key, body)
    except PayPalError as error:
        return [d["issue"] for d in error.details]
    return []


def test_every_packaged_spec_loads_with_its_operations() -> None:
    ops = spec.operations()
    assert len(ops) > 80
    assert "checkout_orders_v2:orders.create" in ops
    assert ops["invoicing_v2:invoices.list"].query["page_size"]["type"] == "integer"


@pytest.mark.parametrize("key", WITH_EXAMPLES)
def test_paypals_own_request_examples_are_never_unknown_fields(key: str) -> None:
    for example in spec.operation(key).examples:
        assert "UNKNOWN_FIELD" not in _issues(key, example)


def test_a_field_the_operation_does_not_define_is_ignored_a_wrong_one_is_not() -> None:
    key = "invoicing_v2:invoices.create"
    assert _issues(key, {"detail": {"currency_code": "USD", "colour": "red"}}) == []
    assert _issues(key, {"detail": {"currency_code": 5, "colour": "red"}}) == [
        "INVALID_PARAMETER_SYNTAX"
    ]


def test_null_members_are_absent_at_any_depth_and_nulls_in_arrays_stay() -> None:
    body = {"a": None, "b": {"c": None, "d": 1}, "e": [None, {"f": None, "g": 2}]}
    assert spec.without_nulls(body) == {"b": {"d": 1}, "e": [None, {"g": 2}]}
    product = {"name": "Plan", "type": "SERVICE", "image_url": None, "home_url": None}
    assert _issues("catalogs_products_v1:products.create", spec.without_nulls(product)) == []
    assert _issues("catalogs_products_v1:products.create", product) != []


def test_schema_violations_map_to_paypal_issue_codes() -> None:
    key = "checkout_orders_v2:orders.create"
    assert _issues(key, {"intent": "CAPTURE"}) == ["MISSING_REQUIRED_PARAMETER"]
    assert _issues(
        key,
        {
            "intent": "SELL",
            "purchase_units": [{"amount": {"currency_code": "USD", "value": "1.00"}}],
        },
    ) == ["INVALID_PARAMETER_VALUE"]
    long_id = {
        "intent": "CAPTURE",
        "purchase_units": [
            {"reference_id": "x" * 300, "amount": {"currency_code": "USD", "value": "1.00"}}
        ],
    }
    # Orders documents INVALID_STRING_LENGTH rather than the more precise code.
    assert _issues(key, long_id) == ["INVALID_STRING_LENGTH"]


def test_validation_errors_use_the_operations_documented_code_and_description() -> None:
    orders = "checkout_orders_v2:orders.create"
    assert spec.issue_for(orders, "MALFORMED_REQUEST_JSON") == (
        "MALFORMED_REQUEST_JSON",
        "The request JSON is not well formed.",
    )
    # A documented code whose descriptions all say something else is not borrowed.
    assert spec.issue_for("invoicing_v2:invoices.create", "INVALID_PARAMETER_SYNTAX") == (
        "INVALID_PARAMETER_SYNTAX",
        None,
    )
    assert spec.issue_for(None, "UNKNOWN_FIELD") == ("UNKNOWN_FIELD", None)


def test_query_parameters_are_coerced_and_checked() -> None:
    key = "invoicing_v2:invoices.list"
    assert spec.validate_query(key, {"page": "2", "page_size": "10"}) == {
        "page": 2,
        "page_size": 10,
    }
    with pytest.raises(PayPalError) as caught:
        spec.validate_query(key, {"page_size": "ten"})
    assert caught.value.details[0]["issue"] == "INVALID_PARAMETER_SYNTAX"
    assert caught.value.details[0]["location"] == "query"
