"""Wording pydantic's refusals: each problem with its dotted field path."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, model_validator

from cartagent.errors import field_problems


class Item(BaseModel):
    quantity: int


class Order(BaseModel):
    items: list[Item]
    note: str

    @model_validator(mode="after")
    def not_empty(self) -> Order:
        if not self.items:
            raise ValueError("an order holds at least one item")
        return self


def test_each_problem_has_its_dotted_path_in_pydantics_order() -> None:
    with pytest.raises(ValidationError) as raised:
        Order.model_validate({"items": [{"quantity": 1}, {"quantity": "many"}]})
    assert field_problems(raised.value, whole="(order)") == [
        (
            "items.1.quantity",
            "Input should be a valid integer, unable to parse string as an integer",
        ),
        ("note", "Field required"),
    ]


def test_a_problem_with_the_whole_value_gets_the_name_given() -> None:
    with pytest.raises(ValidationError) as raised:
        Order.model_validate({"items": [], "note": ""})
    assert field_problems(raised.value, whole="(order)") == [
        ("(order)", "Value error, an order holds at least one item")
    ]
