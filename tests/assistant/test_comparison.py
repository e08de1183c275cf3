"""Comparisons of shown products: which ranks a message compares."""

from __future__ import annotations

import pytest

from cartagent.assistant.comparison import find_comparison
from cartagent.assistant.references import LAST


@pytest.mark.parametrize(
    ("text", "ranks"),
    [
        ("compare the first two", (1, 2)),
        ("compare the top 3", (1, 2, 3)),
        ("compare #1 and #3", (1, 3)),
        ("what is the difference between the first and the third", (1, 3)),
        ("compare 2 vs 4", (2, 4)),
        ("compare the first and the last", (1, LAST)),
        ("compare them", ()),
        ("how do they differ?", ()),
        ("compare all laptops", None),
        ("difference between a kettle and a coffee maker", None),
        ("compare the first one", None),
        ("the second one", None),
    ],
)
def test_a_comparison_is_read(text: str, ranks: tuple[int, ...] | None) -> None:
    assert find_comparison(text) == ranks
