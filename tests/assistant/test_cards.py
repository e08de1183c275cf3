"""Product cards in words."""

from __future__ import annotations

from decimal import Decimal

from cartagent.assistant import ProductCard
from cartagent.assistant.cards import option_words


def test_a_yes_or_no_option_says_its_name() -> None:
    options = {"size": "12", "material": "leather", "waterproof": "yes", "insulated": "No"}
    assert option_words(options) == "12, leather, waterproof, not insulated"
    card = ProductCard("b", "Hiking Boots", "b12", Decimal("236.57"), "USD", True, 1, options)
    assert card.describe() == "Hiking Boots (12, leather, waterproof, not insulated) - 236.57 USD"
