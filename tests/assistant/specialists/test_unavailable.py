"""Unbuilt domains and out-of-scope turns: an honest answer and nothing else."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cartagent.assistant import Conversation, Domain, TurnContext
from cartagent.assistant.specialists import NotAvailableYet, OutOfScopeSpecialist
from cartagent.testing import ScriptedModel

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "domain", [d for d in Domain if d not in (Domain.DISCOVERY, Domain.OUT_OF_SCOPE)]
)
async def test_an_unbuilt_domain_says_it_is_not_available_yet(domain: Domain) -> None:
    conversation = Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))
    model = ScriptedModel([])  # a capable model is not asked to pretend either
    reply = await NotAvailableYet(domain).handle(TurnContext("hi", conversation, model=model))
    assert "not available in this version" in reply.text and reply.domain is domain
    assert not reply.cards and not model.calls
    assert conversation == Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))


async def test_out_of_scope_declines_and_says_what_it_can_do() -> None:
    conversation = Conversation("s", None, datetime(2026, 1, 1, tzinfo=UTC))
    reply = await OutOfScopeSpecialist().handle(TurnContext("tell me a joke", conversation))
    assert reply.text.startswith("Sorry, I can't help with that")
    assert "find products" in reply.text and reply.domain is Domain.OUT_OF_SCOPE
