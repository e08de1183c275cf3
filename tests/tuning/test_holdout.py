"""Held-out requests: the labelled sets and WebShop's instructions and queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from cartagent.errors import ConfigurationError
from cartagent.tuning import held_out_requests
from cartagent.tuning.holdout import normalise
from tests.conftest import WEBSHOP


def test_normalise_ignores_case_and_spacing() -> None:
    assert normalise("  Red\tShoes  UNDER $50 ") == "red shoes under $50"


def test_labelled_requests_contexts_and_webshop_queries_are_held_out() -> None:
    held = held_out_requests(WEBSHOP)
    assert "Running shoes under $50, NOT leather" in held
    assert "red dresses under $50" in held  # an earlier turn of a follow-up case
    assert "guardians of the galaxy tee" in held  # a query a WebShop shopper typed
    assert [name for name, _ in held.sources][-1] == WEBSHOP.name
    assert "red shoes from mars" not in held


def test_every_turn_of_the_discovery_conversations_is_held_out() -> None:
    held = held_out_requests()
    assert "13 inch laptop w/ an i7 and 16 gigs of ram" in held  # a first turn
    assert "ok and if i bump it to 32?" in held  # a follow-up
    assert "cartagent/evals/data/discovery/conversations.jsonl" in [n for n, _ in held.sources]


def test_without_webshop_only_the_packaged_sets_are_held_out() -> None:
    held = held_out_requests()
    assert "laptop" in held
    assert "guardians of the galaxy tee" not in held


@pytest.mark.parametrize("content", ["not json", "[1, 2]"])
def test_an_unreadable_webshop_file_is_a_configuration_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "webshop.json"
    path.write_text(content)
    with pytest.raises(ConfigurationError):
        held_out_requests(path)
    with pytest.raises(ConfigurationError, match="cannot read"):
        held_out_requests(tmp_path / "missing.json")
