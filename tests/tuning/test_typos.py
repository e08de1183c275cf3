"""Typing noise: misspell longer words, never numbers."""

from __future__ import annotations

import random

from cartagent.tuning.typos import misspell


def test_typo_requests_differ_from_the_clean_words_but_keep_numbers() -> None:
    rng = random.Random(1)
    for noise in ("swap", "drop", "double", "neighbour"):
        noisy = misspell("leather boots under $120 size 9", noise, rng, words=2)
        assert noisy is not None and noisy != "leather boots under $120 size 9"
        assert "$120" in noisy and noisy.endswith(" 9")
    assert misspell("tv 55", "swap", rng) is None
