"""Best sellers summed from transaction search rows, whatever the rows hold."""

from __future__ import annotations

from decimal import Decimal

from cartagent.assistant.specialists.back_office.sales import ORDER_COUNT, TOP_SELLERS, best_sellers


def test_rows_without_usable_items_or_of_other_kinds_add_nothing() -> None:
    rows = [
        {"event_code": "T0006", "items": [{"name": "Mug", "quantity": "2", "amount": "16.00",
                                           "currency": "USD"}]},
        {"event_code": "T0006", "items": [{"name": "Mug", "quantity": "1", "amount": "abc",
                                           "currency": "USD"}]},
        {"event_code": "T0006", "items": [{"name": "Mug", "quantity": "x"}, {"quantity": "3"}]},
        {"event_code": "T1107", "items": [{"name": "Mug", "quantity": "5"}]},
        {"event_code": "T0006"},
        {"event_code": "T0006", "items": [{"name": "Cup", "quantity": "3", "amount": "9.00",
                                           "currency": "EUR"}]},
    ]  # fmt: skip

    ranked = best_sellers(rows)

    # The unreadable amount still sold its unit; on a tie of units, more money first.
    assert [(s.name, s.units, s.money) for s in ranked] == [
        ("Mug", 3, {"USD": Decimal("16.00")}),
        ("Cup", 3, {"EUR": Decimal("9.00")}),
    ]
    assert ranked[0].describe() == "Mug: 3 sold, 16.00 USD"


def test_questions_about_what_sells_are_told_from_sales_totals() -> None:
    asked = [
        "top selling products this month",
        "what were our best sellers last week",
        "which items sold the most?",
        "what sold best yesterday",
        "top 3 products",
    ]
    found = [TOP_SELLERS.search(text) for text in asked]
    assert all(found) and [m["n"] for m in found if m] == [None, None, None, None, "3"]
    assert not TOP_SELLERS.search("sales this week")


def test_questions_about_how_many_orders_are_told_apart() -> None:
    asked = ["how many orders this week?", "number of orders last month", "orders today"]
    assert all(ORDER_COUNT.search(text) for text in asked)
    assert not any(ORDER_COUNT.search(text) for text in ("recent orders", "refund the order"))
