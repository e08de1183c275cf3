"""What the MCP server turns on by default, and how its options are parsed."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.mcp import load_actions, parse_limits, read_only_config
from cartagent.tools import ALL_TOOLS


def test_read_only_tools_are_on_and_everything_else_off_by_default() -> None:
    config = read_only_config(ALL_TOOLS)

    for t in ALL_TOOLS:
        assert config.enables(t.family, t.action) == t.annotations.read_only, t.name


def test_actions_add_tools_and_can_turn_a_read_only_one_off() -> None:
    config = read_only_config(ALL_TOOLS, {"orders": {"create": True, "get": False}})

    assert config.enables("orders", "create")
    assert not config.enables("orders", "get")
    assert not config.enables("orders", "capture")


def test_an_unknown_action_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="refund"):
        read_only_config(ALL_TOOLS, {"orders": {"refund": True}})


def test_actions_are_read_inline_or_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "actions.json"
    path.write_text('{"actions": {"orders": {"create": true}}}')

    assert load_actions('{"orders": {"create": true}}') == {"orders": {"create": True}}
    assert load_actions(str(path)) == {"actions": {"orders": {"create": True}}}


@pytest.mark.parametrize(
    ("value", "problem"),
    [("{not json", "valid JSON"), ("/no/such/actions.json", "cannot read"), ("[1]", "JSON object")],
)
def test_unreadable_actions_are_a_configuration_error(value: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        load_actions(value)


def test_spend_limits_parse_per_currency() -> None:
    limits = parse_limits(["usd=100", "EUR=80.50"], ["USD=500"])

    assert limits.per_call == {"USD": Decimal("100"), "EUR": Decimal("80.50")}
    assert limits.total == {"USD": Decimal("500")}


@pytest.mark.parametrize("entry", ["100", "USD", "XXX=5", "USD=lots", "USD=-1", "USD=NaN"])
def test_a_malformed_spend_limit_is_a_configuration_error(entry: str) -> None:
    with pytest.raises(ConfigurationError, match="spend limit"):
        parse_limits([entry])
