"""The registry against PayPal's own agent toolkit: every name it has, cartagent answers to."""

from __future__ import annotations

import pytest

from cartagent.tools import ALL_TOOLS, Toolkit

from .conftest import call


def names() -> list[str]:
    return [name for t in ALL_TOOLS for name in (t.name, *t.aliases)]


def test_every_paypal_agent_toolkit_tool_name_is_a_cartagent_tool_name() -> None:
    shared = pytest.importorskip(
        "paypal_agent_toolkit.shared.tools",
        reason="paypal-agent-toolkit is not installed (make install puts it in with --no-deps)",
    )
    paypal = {entry["method"] for entry in shared.tools}
    assert len(paypal) == 42
    assert paypal - set(names()) == set()


def test_names_and_aliases_are_unique() -> None:
    listed = names()
    assert len(listed) == len(set(listed)) == 54 + 7


def test_an_alias_runs_its_tool_but_is_not_listed(toolkit: Toolkit) -> None:
    listed = {t.name for t in toolkit.tools}
    assert "generate_next_invoice_number" in listed
    assert listed.isdisjoint(alias for t in ALL_TOOLS for alias in t.aliases)
    first = call(toolkit, "generate_invoice_number")
    second = call(toolkit, "generate_next_invoice_number")
    assert not first.is_error and not second.is_error
    assert int(second.content["invoice_number"]) == int(first.content["invoice_number"]) + 1
    assert toolkit.get("pay_order") is toolkit.get("capture_order")
