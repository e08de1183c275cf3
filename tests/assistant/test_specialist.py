"""The specialist registry: one per domain, registry tools only, prompts that exist."""

from __future__ import annotations

import pytest

from cartagent.assistant import Domain, Reply, TurnContext
from cartagent.assistant.specialist import check_specialists, load_prompt
from cartagent.assistant.specialists import SPECIALISTS
from cartagent.errors import ConfigurationError


class _Fake:
    def __init__(self, domain: Domain, tools: tuple[str, ...] = (), prompt: str | None = None):
        self.name, self.domain, self.tools, self.prompt = f"fake {domain}", domain, tools, prompt

    async def handle(self, turn: TurnContext) -> Reply:
        return Reply("", self.domain)


def _others(domain: Domain) -> list[_Fake]:
    return [_Fake(d) for d in Domain if d is not domain]


def test_the_shipped_specialists_cover_every_domain_once() -> None:
    by_domain = check_specialists(SPECIALISTS)
    assert set(by_domain) == set(Domain)
    assert by_domain[Domain.DISCOVERY].tools == ("search_products",)
    assert "product" in load_prompt("discovery.md")


def test_a_missing_domain_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="no specialist for: orders"):
        check_specialists(_others(Domain.ORDERS))


def test_two_specialists_for_one_domain_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="two specialists for orders"):
        check_specialists([*_others(Domain.ORDERS), _Fake(Domain.ORDERS), _Fake(Domain.ORDERS)])


def test_a_tool_not_in_the_registry_is_refused() -> None:
    odd = _Fake(Domain.ORDERS, tools=("get_order", "teleport_parcel"))
    with pytest.raises(ConfigurationError, match="no such tools: teleport_parcel"):
        check_specialists([*_others(Domain.ORDERS), odd])


def test_a_missing_prompt_file_is_refused() -> None:
    odd = _Fake(Domain.ORDERS, prompt="orders.md")
    with pytest.raises(ConfigurationError, match=r"prompt 'orders\.md' not found"):
        check_specialists([*_others(Domain.ORDERS), odd])
